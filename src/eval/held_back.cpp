// Model-facing texts about held-back size sets (held_back.h): clauses without numbers, and a
// fixed class where a clause has one.
#include "eval/held_back.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/text.h"

namespace ptxforge::eval {

namespace {

bool is_param_name(std::string_view name, const task::Task& task) {
  for (auto& p : task.params)
    if (p.name == name) return true;
  return false;
}

void add_once(std::vector<std::string>& lines, std::string line) {
  if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
}

std::string failure_class(gpu::FailureKind k) {
  switch (k) {
    case gpu::FailureKind::fault: return "the kernel faulted (an illegal or misaligned address, or a trap)";
    case gpu::FailureKind::timeout: return "the kernel did not finish within the time limit";
    case gpu::FailureKind::launch: return "a launch was refused (its grid, block, cluster or shared memory)";
    case gpu::FailureKind::oom: return "out of device memory";
    case gpu::FailureKind::load: return "the module could not be loaded";
    // The CPU engine's checks (docs/emu.md): the class of the finding, never its thread or offset.
    case gpu::FailureKind::race: return "a data race: two threads access one address, one writes, nothing orders them";
    case gpu::FailureKind::uninitialized: return "a value read from memory never written decided a branch, an address or an output";
    case gpu::FailureKind::misaligned: return "an access not aligned to its size";
    case gpu::FailureKind::barrier: return "a barrier not reached by every thread that must reach it, or a deadlock";
    case gpu::FailureKind::warp_sync: return "a warp-synchronous instruction whose mask names lanes not executing it";
    case gpu::FailureKind::budget: return "the kernel ran past the CPU engine's instruction budget";
    case gpu::FailureKind::unsupported: return "the CPU engine does not run this kernel";
    default: return "the run failed";
  }
}

}  // namespace

std::string number_free_clause(std::string_view text, const task::Task& task) {
  size_t end = text.find_first_of(":(;\n");
  std::string_view clause = trim(text.substr(0, end));
  for (size_t i = 0; i < clause.size(); ++i) {
    if (clause[i] == '\'') {
      size_t close = clause.find('\'', i + 1);
      // A quoted name of the task's own is no number, whatever it is spelt with.
      if (close != std::string_view::npos && is_param_name(clause.substr(i + 1, close - i - 1), task)) {
        i = close;
        continue;
      }
    }
    if (clause[i] >= '0' && clause[i] <= '9') return "";
  }
  return std::string(clause);
}

std::string hint_class(const task::Comparison& c, const task::Task& task) {
  if (c.count > 0 && c.never_written == c.count) return "the output was never written";
  if (c.never_written > 0) return "part of the output was never written";
  if (c.nan_count > 0 || c.inf_count > 0) return "NaN or infinite values where the reference is finite";
  if (starts_with(c.hint, "only the first"))
    return "only a leading part of the output is correct: does the grid cover the whole output, and does the index "
           "include the block index?";
  return number_free_clause(c.hint, task);
}

std::vector<std::string> held_back_case_lines(const gpu::CaseResult& c, const task::Task& task) {
  std::vector<std::string> lines;
  for (auto& p : c.problems) {
    std::string clause = number_free_clause(p, task);
    add_once(lines, clause.empty() ? "a buffer's guard region was written or an input was modified" : clause);
  }
  for (auto& o : c.outputs) {
    if (o.pass) continue;
    std::string cls = hint_class(o, task);
    std::string name = is_param_name(o.output, task) ? fmt::format("output '{}'", o.output) : std::string("an output");
    add_once(lines, fmt::format("{} is wrong{}", name, cls.empty() ? "" : ": " + cls));
  }
  if (lines.empty()) lines.push_back("the results are wrong");
  return lines;
}

std::string held_back_failure_text(const gpu::Failure& f, const task::Task& task) {
  // A CPU engine finding's message starts with the PTX position and ends with a thread and a
  // CTA, which depend on the sizes: the model gets its class and check id only.
  if (f.finding)
    return fmt::format("{}: {} [{}]", gpu::to_string(f.kind), failure_class(f.kind), f.finding->check);
  std::string clause = number_free_clause(f.message, task);
  return fmt::format("{}: {}", gpu::to_string(f.kind), clause.empty() ? failure_class(f.kind) : clause);
}

std::string held_back_sanitizer_text(std::string_view model_summary, const task::Task& task) {
  size_t colon = model_summary.find(':');
  std::string tool = number_free_clause(model_summary.substr(0, colon), task);
  std::vector<std::string> kept;
  if (colon != std::string_view::npos) {
    std::string_view rest = model_summary.substr(colon + 1);
    while (!rest.empty()) {
      size_t cut = rest.find_first_of(":;");
      std::string clause = number_free_clause(rest.substr(0, cut), task);
      // "Error" alone, the word before a report's colon, says nothing.
      if (!clause.empty() && clause != "Error" && clause != "error") add_once(kept, clause);
      if (cut == std::string_view::npos) break;
      rest.remove_prefix(cut + 1);
    }
  }
  return fmt::format("{}: errors on a held-back size (not shown to you){}{}", tool.empty() ? "the sanitizer" : tool,
                     kept.empty() ? "" : ": ", fmt::join(kept, "; "));
}

}  // namespace ptxforge::eval
