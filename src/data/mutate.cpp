#include "data/mutate.h"

#include <cassert>

#include <algorithm>
#include <functional>
#include <regex>

#include "util/text.h"

namespace ptxforge::data {

namespace {


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

// Up to `limit` mutants per kind: `edit` rewrites line i (and may rewrite later lines), or
// returns false, having changed nothing, to skip it. One scratch copy of the lines serves every
// line tried (a copy per line made this quadratic in the module's length: minutes for a
// module of thousands of lines); it is refreshed only after a mutant is taken from it.
void mutate_lines(const std::vector<std::string>& ls, const std::string& kind, size_t limit,
                  const std::function<bool(std::vector<std::string>&, size_t)>& edit, std::vector<Mutant>& out) {
  size_t made = 0;
  std::vector<std::string> copy = ls;
  for (size_t i = 0; i < ls.size() && made < limit; ++i) {
    if (!edit(copy, i)) {
      assert(copy[i] == ls[i]);
      continue;
    }
    out.push_back({kind, join(copy), static_cast<uint32_t>(i + 1), ls[i], copy[i], true});
    ++made;
    if (made < limit) copy = ls;
  }
}

}  // namespace

std::vector<Mutant> compiler_mutants(const std::string& text) {
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
  if (!out.empty() && out.back().kind == "drop cvta (ptxas accepts)") out.back().single_edit = false;  // its uses change too
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


std::vector<Mutant> model_style_mutants(const std::string& text) {
  auto ls = lines_of(text);
  std::vector<Mutant> out;
  static const std::regex instruction(R"(^(\s+)([a-z][\w.:]*)(\s+[^;]*);\s*$)");
  // Prose a chat model wrote before the module, left inside it.
  mutate_lines(ls, "prose in the module", 1, [&](auto& l, size_t i) {
    if (!starts_with(trim(l[i]), ".version")) return false;
    l[i] = "Here is the optimized kernel: " + l[i];
    return true;
  }, out);
  // The closing Markdown fence of the reply, kept.
  mutate_lines(ls, "markdown fence", 1, [&](auto& l, size_t i) {
    if (!starts_with(trim(l[i]), ".address_size")) return false;
    l[i] = l[i] + " ```";
    return true;
  }, out);
  // An x86 register name where a PTX register belongs.
  mutate_lines(ls, "x86 register", 2, [&](auto& l, size_t i) {
    std::smatch m;
    static const std::regex first_operand(R"(^(\s+[a-z][\w.:]*\s+)%\w+)");
    if (!std::regex_match(l[i], m, instruction) || !std::regex_search(l[i], first_operand)) return false;
    l[i] = std::regex_replace(l[i], first_operand, "$1%eax", std::regex_constants::format_first_only);
    return true;
  }, out);
  mutate_lines(ls, "missing semicolon", 2, [&](auto& l, size_t i) {
    std::smatch m;
    if (!std::regex_match(l[i], m, instruction)) return false;
    l[i] = l[i].substr(0, l[i].rfind(';'));
    return true;
  }, out);
  mutate_lines(ls, "missing .version", 1, [&](auto& l, size_t i) {
    if (!starts_with(trim(l[i]), ".version")) return false;
    l[i] = "";
    return true;
  }, out);
  // A C-style cast where cvt is needed.
  mutate_lines(ls, "C cast for cvt", 1, [&](auto& l, size_t i) {
    static const std::regex cvt(R"(^(\s*)cvt\.rn\.f32\.[su]32\s+(%f\d+),\s*(%r\d+);)");
    std::smatch m;
    if (!std::regex_search(l[i], m, cvt)) return false;
    l[i] = m.str(1) + "mov.f32 " + m.str(2) + ", (float)" + m.str(3) + ";";
    return true;
  }, out);
  return out;
}

std::vector<Mutant> mutants_of(const std::string& text) {
  auto out = compiler_mutants(text);
  auto more = model_style_mutants(text);
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

}  // namespace ptxforge::data
