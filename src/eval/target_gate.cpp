#include "eval/target_gate.h"

#include <fmt/format.h>

#include "ptx/target.h"

namespace ptxforge::eval {

namespace {
// min_target parsed, where it is a target ptxas knows.
std::optional<ptx::Target> known_target(std::string_view s) {
  auto t = ptx::Target::parse(s);
  for (auto& k : ptx::known_targets())
    if (t && k == *t) return t;
  return std::nullopt;
}
}  // namespace

std::optional<std::string> target_gap(std::string_view min_target, std::string_view gpu_target) {
  auto need = known_target(min_target);
  if (!need)
    return fmt::format("the task's min_target '{}' is not a target ptxas knows (e.g. sm_80, sm_90a, sm_100a, sm_100f)",
                       min_target);
  auto have = ptx::Target::parse(gpu_target);
  if (!have || ptx::satisfies(*have, *need)) return std::nullopt;
  std::string why = need->suffix == 'a'   ? "an 'a' target runs on that architecture only"
                    : need->suffix == 'f' ? "an 'f' target runs on its own family only"
                                          : fmt::format("it needs sm_{} or later", need->sm);
  return fmt::format("the task needs {} and this GPU is {}: {}", need->str(), have->str(), why);
}

std::string assemble_target(std::string_view min_target, std::string_view gpu_target) {
  auto need = known_target(min_target);
  if (!need || !target_gap(min_target, gpu_target)) return std::string(gpu_target);
  return need->str();
}

}  // namespace ptxforge::eval
