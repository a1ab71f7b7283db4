// What the two executed proofs share: the GPU's (an instrumented copy's counters, prove.cpp)
// and the CPU engine's (its own per-instruction counts of the verify run, prove_engine.cpp).
// Both reduce their counts to one tally per verify case, per required family, and the same
// judge then holds every case to the task's [min_work] floors on that case's sizes, so a floor
// means the same thing whichever engine counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/stages.h"
#include "gpu/measurement.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::eval::prove_detail {

// A failed executed proof: `model` is the same without the names of held-back size sets.
struct ExecutedProblem {
  std::string person, model;
};

// A family's [min_work] floor on one size set: unset when the task sets none. (Task loading
// has checked that every floor is a count from 0 to 1e18 on every size set.)
Result<std::optional<uint64_t>> floor_for(const task::Task& t, const std::string& family, const task::SizeSet& set);

// The task's groups as indices into its families (a task built without groups: one each).
std::vector<std::vector<size_t>> group_indices(const task::Task& t);

// "mma.sync", or "one of mma.sync, wgmma.mma_async".
std::string group_name(const std::vector<std::string>& families, const std::vector<size_t>& members);

// One verify case's executions of each required family (indices of task.required_instructions):
// warp executions, and the same weighed by each instruction's work in the family's unit.
struct CaseTally {
  const gpu::CaseResult* c = nullptr;
  const task::SizeSet* set = nullptr;  // null: a size set the task does not name (no floor applies)
  std::vector<uint64_t> warps, work;
};

// Sums the tallies into r.proofs (executed, executed_warps, executed_work, work_unit, min_warps)
// and holds every case to its floors: a group of alternatives is short on a case where its
// families' work, each over its own floor, adds up to less than one. A group no warp ran at
// all is left to the caller, which reports it as never executed.
std::optional<ExecutedProblem> judge_tallies(StageContext& ctx, const std::vector<CaseTally>& tallies);

}  // namespace ptxforge::eval::prove_detail
