// The corpus checker run by tests/corpus/run.sh: for each nvcc-generated module, the front end
// must report no error, print(parse(x)) must parse back to an equal AST, and ptxas must give
// the printed module the same resources as the original. The corpus is valid, working code,
// so every warning on it is a false positive: warnings are counted per check id and held to
// a budget (--warning-budget FILE, lines "check-id max-findings"), so a check that starts
// firing more often on valid code fails the test while the rate of each is documented.
// Prints one line per module, then the per-warning table and a summary line; exits non-zero
// on any failure.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "ptx/parser.h"
#include "ptx/printer.h"
#include "toolchain/ptxas.h"
#include "util/text.h"

using namespace ptxforge;

namespace {

std::string arch_of(const ptx::Module& m) {
  for (auto& t : m.target_names())
    if (t.rfind("sm_", 0) == 0) return t;
  return "sm_90a";
}

bool same_resources(const toolchain::AssembleResult& a, const toolchain::AssembleResult& b, std::string& why) {
  if (a.functions.size() != b.functions.size()) {
    why = fmt::format("{} vs {} functions", a.functions.size(), b.functions.size());
    return false;
  }
  for (auto& fa : a.functions) {
    const auto* fb = b.find(fa.name);
    if (!fb) {
      why = "function " + fa.name + " missing after printing";
      return false;
    }
    auto key = [](const toolchain::FunctionResources& f) {
      return std::tuple(f.registers, f.barriers, f.shared_bytes, f.const_bytes, f.local_bytes, f.stack_frame,
                        f.spill_stores, f.spill_loads, f.cumulative_stack);
    };
    if (key(fa) != key(*fb)) {
      why = fmt::format("{}: {} regs/{} smem/{} stack vs {} regs/{} smem/{} stack", fa.name, fa.registers,
                        fa.shared_bytes, fa.stack_frame, fb->registers, fb->shared_bytes, fb->stack_frame);
      return false;
    }
  }
  return true;
}

// How often one warning fired on the corpus, and how often it may.
struct WarningTally {
  std::set<std::string> modules;
  size_t findings = 0;
  std::optional<size_t> budget;
};

// "check-id max-findings" per line; '#' starts a comment. A malformed line is an error, so a
// typo cannot silently lift a budget.
bool read_budget(const std::string& path, std::map<std::string, WarningTally>& tally) {
  auto text = read_file(path);
  if (!text) {
    fmt::print("FAIL {}: {}\n", path, text.error().message);
    return false;
  }
  uint32_t line_no = 0;
  for (auto line : split(*text, '\n')) {
    ++line_no;
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    auto space = line.find_first_of(" \t");
    std::string id(trim(line.substr(0, space)));
    std::string count(space == std::string_view::npos ? "" : trim(line.substr(space)));
    if (count.empty() || count.size() > 9 || count.find_first_not_of("0123456789") != std::string::npos) {
      fmt::print("FAIL {}:{}: expected 'check-id max-findings', got '{}'\n", path, line_no, line);
      return false;
    }
    tally[id].budget = std::stoul(count);
  }
  return true;
}

// The table the docs quote: per warning id, how many modules and findings, against the budget.
int print_warning_table(const std::map<std::string, WarningTally>& tally, size_t modules) {
  int over = 0;
  fmt::print("\nwarnings on the corpus (all false positives: the corpus is valid code)\n");
  fmt::print("{:<24} {:>8} {:>8} {:>9} {:>7}\n", "check id", "modules", "share", "findings", "budget");
  for (auto& [id, t] : tally) {
    bool exceeded = t.findings > t.budget.value_or(0);
    over += exceeded;
    double share = modules ? 100.0 * static_cast<double>(t.modules.size()) / static_cast<double>(modules) : 0.0;
    fmt::print("{:<24} {:>8} {:>7.1f}% {:>9} {:>7}{}\n", id, t.modules.size(), share, t.findings,
               t.budget ? std::to_string(*t.budget) : "none",
               exceeded ? "  OVER BUDGET" : (t.findings < t.budget.value_or(0) ? "  (budget can be lowered)" : ""));
  }
  if (tally.empty()) fmt::print("(none)\n");
  return over;
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0, passed = 0;
  bool have_ptxas = true;
  std::map<std::string, WarningTally> tally;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--warning-budget") {
      if (i + 1 == argc) {
        fmt::print("FAIL --warning-budget needs a file\n");
        return 1;
      }
      if (!read_budget(argv[++i], tally)) return 1;
    } else {
      paths.push_back(arg);
    }
  }
  for (auto& path : paths) {
    auto text = read_file(path);
    if (!text) {
      fmt::print("FAIL {}: {}\n", path, text.error().message);
      ++failures;
      continue;
    }
    SourceText src(path, *text);
    auto checked = ptx::check_source(*text);
    std::string problem;
    if (checked.diags.has_errors()) problem = "front end reported:\n" + render_text(checked.diags, src);
    std::map<std::string, size_t> warned;  // this module's warnings by id
    for (auto& d : checked.diags.list()) {
      if (d.severity != Severity::warning) continue;
      ++warned[d.check_id];
      tally[d.check_id].modules.insert(path);
      ++tally[d.check_id].findings;
    }
    std::string printed = ptx::print(checked.module);
    Diagnostics d2;
    ptx::Module again = ptx::parse(printed, d2);
    if (problem.empty() && d2.has_errors()) problem = "printed module does not parse:\n" + render_text(d2, SourceText(path + " (printed)", printed));
    if (problem.empty() && !(again == checked.module)) problem = "printed module parses to a different AST";
    if (problem.empty() && have_ptxas) {
      toolchain::AssembleOptions opts;
      opts.arch = arch_of(checked.module);
      if (checked.module.targets_debug()) opts.opt_level = 0;  // -G output
      auto a = toolchain::assemble(*text, opts);
      auto b = toolchain::assemble(printed, opts);
      if (!a || !b) {
        fmt::print("note: {}; resource comparison skipped\n", (!a ? a.error() : b.error()).message);
        have_ptxas = false;
      } else if (!a->ok) {
        problem = "ptxas rejects the original:\n" + render_text(a->diags, src);
      } else if (!b->ok) {
        problem = "ptxas rejects the printed module:\n" + render_text(b->diags, SourceText(path + " (printed)", printed));
      } else if (std::string why; !same_resources(*a, *b, why)) {
        problem = "resources differ after printing: " + why;
      }
    }
    if (problem.empty()) {
      ++passed;
      std::string note;
      for (auto& [id, n] : warned) note += fmt::format("{}{} {}", note.empty() ? " (warnings: " : ", ", n, id);
      fmt::print("ok   {}{}\n", path, note.empty() ? "" : note + ")");
    } else {
      ++failures;
      fmt::print("FAIL {}: {}\n", path, problem);
    }
  }
  int over = print_warning_table(tally, paths.size());
  fmt::print("\ncorpus: {} modules, {} passed, {} failed{}; {} warning ids over budget\n", paths.size(), passed,
             failures, have_ptxas ? " (resources compared with ptxas)" : " (ptxas missing: resources not compared)",
             over);
  return failures == 0 && over == 0 ? 0 : 1;
}
