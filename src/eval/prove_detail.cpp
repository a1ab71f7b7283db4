// The floors of [min_work] and the groups of alternatives, judged the same way over the GPU's
// instrumented counts and the CPU engine's own counts (eval/prove_detail.h).
#include "eval/prove_detail.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/prove_work.h"

namespace ptxforge::eval::prove_detail {

Result<std::optional<uint64_t>> floor_for(const task::Task& t, const std::string& family, const task::SizeSet& set) {
  auto need = t.min_executed.find(family);
  if (need == t.min_executed.end()) return std::optional<uint64_t>();
  auto v = need->second.evaluate(set.values);
  if (!v) return Error{"[min_work] for " + family + ": " + v.error().message};
  return std::optional<uint64_t>(static_cast<uint64_t>(std::ceil(std::clamp(v->as_double(), 0.0, 1e18))));
}

std::vector<std::vector<size_t>> group_indices(const task::Task& t) {
  std::vector<std::vector<size_t>> out;
  auto index = [&](const std::string& f) {
    return static_cast<size_t>(std::find(t.required_instructions.begin(), t.required_instructions.end(), f) -
                               t.required_instructions.begin());
  };
  for (auto& g : t.required_groups) {
    std::vector<size_t> members;
    for (auto& f : g)
      if (index(f) < t.required_instructions.size()) members.push_back(index(f));
    if (!members.empty()) out.push_back(std::move(members));
  }
  if (out.empty())
    for (size_t i = 0; i < t.required_instructions.size(); ++i) out.push_back({i});
  return out;
}

std::string group_name(const std::vector<std::string>& families, const std::vector<size_t>& members) {
  if (members.size() == 1) return families[members[0]];
  std::vector<std::string> names;
  for (size_t i : members) names.push_back(families[i]);
  return fmt::format("one of {}", fmt::join(names, ", "));
}

std::optional<ExecutedProblem> judge_tallies(StageContext& ctx, const std::vector<CaseTally>& tallies) {
  RunRecord& r = ctx.record;
  const auto& families = ctx.task.required_instructions;
  auto plain = [](std::string s) { return ExecutedProblem{s, s}; };
  const auto groups = group_indices(ctx.task);
  std::vector<uint64_t> total(families.size(), 0), total_work(families.size(), 0);
  std::vector<std::string> token;
  std::vector<size_t> token_groups;
  bool token_held_back = false;
  for (const CaseTally& t : tallies) {
    const gpu::CaseResult& c = *t.c;
    std::vector<std::optional<uint64_t>> floors(families.size());
    for (size_t i = 0; i < families.size(); ++i) {
      total[i] += t.warps[i];
      total_work[i] += t.work[i];
      if (!t.set) continue;
      auto floor = floor_for(ctx.task, families[i], *t.set);
      if (!floor) return plain(floor.error().message);
      floors[i] = *floor;
      if (*floor) r.proofs[i].min_warps = std::max(r.proofs[i].min_warps, **floor);
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      auto share = floor_share(groups[g], t.work, floors);
      if (!share || *share >= 1.0 || token.size() >= 4) continue;
      token_groups.push_back(g);
      std::vector<std::string> did, need;
      for (size_t i : groups[g]) {
        std::string_view unit = to_string(unit_of_family(families[i]));
        did.push_back(unit_of_family(families[i]) == WorkUnit::executions
                          ? fmt::format("{} ran {} warp executions", families[i], t.warps[i])
                          : fmt::format("{} did {} {} ({} warp executions)", families[i], t.work[i], unit, t.warps[i]));
        need.push_back(fmt::format("{} {}", *floors[i], unit));
      }
      token.push_back(fmt::format("{} on size set '{}'{}: {:.0f}% of the work the task needs of {} (at least {})",
                                  fmt::join(did, " and "), c.size_set, c.shown ? "" : " (held back)", 100 * *share,
                                  groups[g].size() == 1 ? "it" : "them together", fmt::join(need, " or ")));
      token_held_back = token_held_back || !c.shown;
    }
  }
  for (size_t i = 0; i < families.size(); ++i) {
    r.proofs[i].executed = total[i] > 0;
    r.proofs[i].executed_warps = total[i];
    r.proofs[i].executed_work = total_work[i];
    r.proofs[i].work_unit = std::string(to_string(unit_of_family(families[i])));
  }
  // A group no warp reached at all is reported as never executed (by the caller), not as short.
  bool all_idle = true;
  for (size_t g : token_groups)
    for (size_t i : groups[g]) all_idle = all_idle && total[i] == 0;
  if (token.empty() || all_idle) return std::nullopt;
  ExecutedProblem p;
  p.person = fmt::format("{}: the required instructions do only part of the work", fmt::join(token, "; "));
  p.model = token_held_back ? "a required instruction family did less of the work than the task needs on a held-back "
                              "size: the required instructions do only part of the work"
                            : p.person;
  return p;
}

}  // namespace ptxforge::eval::prove_detail
