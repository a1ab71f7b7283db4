// Mutation test: one-defect mutants of the corpus (nvcc output for sm_90a), judged by our
// front end and by ptxas. Prints the agreement table; fails if we miss an error ptxas reports
// for a syntax or declaration defect, or report an error on a module ptxas accepts.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

using namespace ptxforge;
namespace fs = std::filesystem;

namespace {

struct Mutant {
  std::string kind;
  std::string text;
  uint32_t line;  // the mutated line (1-based)
};

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  for (auto l : split(s, '\n')) out.emplace_back(l);
  return out;
}

std::string join(const std::vector<std::string>& ls) {
  std::string s;
  for (size_t i = 0; i < ls.size(); ++i) s += ls[i] + (i + 1 < ls.size() ? "\n" : "");
  return s;
}

// Up to `limit` mutants per kind: `edit` rewrites line i (returning false to skip it).
void mutate_lines(const std::vector<std::string>& ls, const std::string& kind, size_t limit,
                  const std::function<bool(std::vector<std::string>&, size_t)>& edit, std::vector<Mutant>& out) {
  size_t made = 0;
  for (size_t i = 0; i < ls.size() && made < limit; ++i) {
    auto copy = ls;
    if (!edit(copy, i)) continue;
    out.push_back({kind, join(copy), static_cast<uint32_t>(i + 1)});
    ++made;
  }
}

std::vector<Mutant> mutants_of(const std::string& text) {
  auto ls = lines_of(text);
  std::vector<Mutant> out;
  static const std::regex reg_decl(R"(^\s*\.reg\s)");
  static const std::regex label_def(R"(^(\$L__\w+):\s*$)");
  static const std::regex typed_arith(R"(^(\s*)(add|sub|mul|min|max)\.(f32|s32|u32)(\s))");
  static const std::regex three_ops(R"(^(\s*(add|sub|mul\.lo|and|or|xor)\.\w+\s+[^,]+,[^,]+),[^,;]+;)");
  static const std::regex cvta(R"(^\s*cvta\.to\.global\.u64\s+(%rd\d+),\s*(%rd\d+);)");
  mutate_lines(ls, "drop .reg", 2, [&](auto& l, size_t i) {
    if (!std::regex_search(l[i], reg_decl)) return false;
    l[i] = "";
    return true;
  }, out);
  mutate_lines(ls, "rename label", 2, [&](auto& l, size_t i) {
    std::smatch m;
    if (!std::regex_match(l[i], m, label_def)) return false;
    l[i] = m.str(1) + "_x:";
    return true;
  }, out);
  mutate_lines(ls, "wrong type suffix", 2, [&](auto& l, size_t i) {
    std::smatch m;
    if (!std::regex_search(l[i], m, typed_arith)) return false;
    std::string wrong = m.str(3) == "f32" ? "f64" : "s64";
    l[i] = std::regex_replace(l[i], typed_arith, "$1$2." + wrong + "$4", std::regex_constants::format_first_only);
    return true;
  }, out);
  mutate_lines(ls, "wrong operand count", 2, [&](auto& l, size_t i) {
    std::smatch m;
    if (!std::regex_search(l[i], m, three_ops)) return false;
    l[i] = m.str(1) + ";";
    return true;
  }, out);
  mutate_lines(ls, "lower .target", 1, [&](auto& l, size_t i) {
    if (l[i] != ".target sm_90a") return false;
    bool hopper = text.find("wgmma") != std::string::npos || text.find("setmaxnreg") != std::string::npos ||
                  text.find("cp.async.bulk") != std::string::npos || text.find("elect.sync") != std::string::npos;
    if (!hopper) return false;
    l[i] = ".target sm_80";
    return true;
  }, out);
  mutate_lines(ls, "drop cvta (ptxas accepts)", 1, [&](auto& l, size_t i) {
    std::smatch m;
    if (!std::regex_search(l[i], m, cvta)) return false;
    std::string to = m.str(1), from = m.str(2);
    l[i] = "";
    std::regex use(std::regex_replace(to, std::regex(R"(\%)"), "%") + R"((?!\d))");
    for (size_t k = i + 1; k < l.size(); ++k) l[k] = std::regex_replace(l[k], use, from);
    return true;
  }, out);
  // The modifier and immediate rule classes, on real code: each mutation makes one line that
  // ptxas rejects for the rule's reason.
  struct Rewrite {
    const char* kind;
    std::regex pattern;
    const char* replacement;
  };
  static const std::vector<Rewrite> rewrites = {
      {"drop div/fma rounding", std::regex(R"(^(\s*(div|fma|sqrt|rcp))\.(rn|rz|rm|rp)((\.ftz)?\.f(32|64)\s))"), "$1$4"},
      {"add rounding to widening", std::regex(R"(^(\s*cvt)(\.f64\.f32\s))"), "$1.rn$2"},
      {"drop mul .lo", std::regex(R"(^(\s*(mul|mad))\.lo(\.[us](16|32|64)\s))"), "$1$3"},
      {"drop compare op", std::regex(R"(^(\s*setp)\.(eq|ne|lt|le|gt|ge)(\.[su](16|32|64)\s))"), "$1$3"},
      {"drop shuffle mode", std::regex(R"(^(\s*shfl\.sync)\.(up|down|bfly|idx)(\.b32\s))"), "$1$3"},
      {"drop .aligned", std::regex(R"(^(\s*(mma|ldmatrix|stmatrix)\.sync)\.aligned(\.))"), "$1$3"},
      {"barrier id 16", std::regex(R"(^(\s*(bar|barrier)\.sync(\.aligned)?\s+)0;)"), "$1@16;"},
      {"cp.async.cg size", std::regex(R"(^(\s*cp\.async\.cg\.shared\.global(\.L2::\w+)?\s+\[[^\]]+\],\s*\[[^\]]+\],\s*)16)"), "$1@8"},
      {"atomic bit type for add", std::regex(R"(^(\s*atom\.\S*add)\.u32(\s))"), "$1.b32$2"},
      {"atomic integer type for cas", std::regex(R"(^(\s*atom\.\S*cas)\.b32(\s))"), "$1.u32$2"},
  };
  for (auto& rw : rewrites)
    mutate_lines(ls, rw.kind, 2, [&](auto& l, size_t i) {
      if (!std::regex_search(l[i], rw.pattern)) return false;
      // '@' separates a group reference from digits that follow it ("$1@16" is $1 then 16).
      l[i] = std::regex_replace(l[i], rw.pattern, rw.replacement, std::regex_constants::format_first_only);
      l[i].erase(std::remove(l[i].begin(), l[i].end(), '@'), l[i].end());
      return true;
    }, out);
  // cvt loses its rounding only where the conversion needs one (int<->float, narrowing float).
  static const std::regex cvt_rounding(R"(^(\s*cvt)\.(rn|rz|rm|rp|rni|rzi|rmi|rpi)((?:\.ftz)?(?:\.sat)?)\.(\w+)\.(\w+)(\s.*)$)");
  mutate_lines(ls, "drop cvt rounding", 2, [&](auto& l, size_t i) {
    std::smatch m;
    if (!std::regex_match(l[i], m, cvt_rounding)) return false;
    auto is_int = [](const std::string& t) { return std::regex_match(t, std::regex(R"([us](8|16|32|64))")); };
    auto bits = [](const std::string& t) { return std::stoi(t.substr(t.find_first_of("0123456789"))); };
    std::string to = m.str(4), from = m.str(5);
    bool f_to = to == "f16" || to == "f32" || to == "f64", f_from = from == "f16" || from == "f32" || from == "f64";
    bool needs = (is_int(to) && f_from) || (f_to && is_int(from)) || (f_to && f_from && bits(to) < bits(from));
    if (!needs) return false;
    l[i] = m.str(1) + m.str(3) + "." + to + "." + from + m.str(6);
    return true;
  }, out);
  return out;
}

struct Row {
  int mutants = 0, ptxas_errors = 0, our_errors = 0, our_warnings = 0, missed = 0, false_alarms = 0, same_line = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (!find_cuda_tool("ptxas")) {
    std::puts("SKIP: ptxas not installed");
    return 77;
  }
  if (argc < 2 || !fs::is_directory(argv[1])) {
    std::puts("usage: mutation_check <corpus output dir> (run the corpus test first)");
    return 77;
  }
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(argv[1]))
    if (ends_with(e.path().string(), "_sm_90a.ptx")) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::puts("SKIP: no corpus modules found (the corpus test writes them)");
    return 77;
  }
  std::map<std::string, Row> table;
  std::vector<std::string> problems;
  for (auto& f : files) {
    auto text = read_file(f);
    if (!text) continue;
    for (auto& m : mutants_of(*text)) {
      Row& row = table[m.kind];
      ++row.mutants;
      auto ours = ptx::check_source(m.text);
      toolchain::AssembleOptions opts;
      auto theirs = toolchain::assemble_with_ptxas(m.text, opts);
      if (!theirs) {
        problems.push_back(theirs.error().message);
        continue;
      }
      bool we_error = ours.diags.has_errors(), they_error = !theirs->ok;
      row.ptxas_errors += they_error;
      row.our_errors += we_error;
      row.our_warnings += ours.diags.warning_count() > 0;
      if (they_error && !we_error) {
        ++row.missed;
        problems.push_back(fmt::format("missed ({}) {} line {}: ptxas says {}", m.kind, f, m.line,
                                       theirs->diags.list().empty() ? "?" : theirs->diags.list()[0].message));
      }
      if (we_error && !they_error) {
        ++row.false_alarms;
        const Diagnostic* first = nullptr;
        for (auto& d : ours.diags.list())
          if (!first && d.severity == Severity::error) first = &d;
        problems.push_back(fmt::format("false alarm ({}) {} line {}: we say {} (line {})", m.kind, f, m.line,
                                       first->message, first->loc.line));
      }
      if (we_error && they_error) {
        uint32_t our_line = 0, their_line = 0;
        for (auto& d : ours.diags.list())
          if (d.severity == Severity::error) { our_line = d.loc.line; break; }
        for (auto& d : theirs->diags.list())
          if (d.severity == Severity::error) { their_line = d.loc.line; break; }
        row.same_line += our_line == their_line;
      }
    }
  }
  fmt::print("{:<28} {:>7} {:>12} {:>10} {:>8} {:>12} {:>14} {:>12}\n", "defect", "mutants", "ptxas errors",
             "our errors", "missed", "false alarms", "same line/both", "our warnings");
  int missed_hard = 0, false_alarms = 0;
  for (auto& [kind, r] : table) {
    int both = std::min(r.ptxas_errors, r.our_errors);
    fmt::print("{:<28} {:>7} {:>12} {:>10} {:>8} {:>12} {:>14} {:>12}\n", kind, r.mutants, r.ptxas_errors,
               r.our_errors, r.missed, r.false_alarms, fmt::format("{}/{}", r.same_line, both), r.our_warnings);
    if (kind != "lower .target" && kind != "wrong type suffix") missed_hard += r.missed;
    false_alarms += r.false_alarms;
  }
  for (auto& p : problems) fmt::print("  {}\n", p);
  fmt::print("mutation: {} missed syntax/declaration errors, {} false alarms\n", missed_hard, false_alarms);
  return missed_hard == 0 && false_alarms == 0 ? 0 : 1;
}
