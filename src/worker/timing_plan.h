// The host-side plan of a timing run, kept apart from the driver so that it is tested in CI:
// how many input sets a size set is timed on and how many trials it may run (both drawn from
// the run's seed), which set each trial uses, how the GPU's per-trial mismatch counts are
// judged, and how a failed check reads. The worker's
// timing loop (worker/executor_timing.cpp) follows the plan; nothing of it is visible to the kernel
// (the kernel sees only its buffers, which are refreshed before every trial).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "task/compare.h"

namespace ptxforge::gpu {

// How many input sets a size set is timed on and how many trials it gets at most, drawn per
// run and per size set from the run's seed (task::SeedUse::timing_plan), so that a kernel can
// count its way neither to the last set of a cycle nor to the last trial. `wanted_sets` is
// kMinInputSets..kMaxInputSets; `trial_cap` is the job's max_trials less a seed-drawn part of
// up to a quarter of it (never below 1).
constexpr int kMinInputSets = 5;
constexpr int kMaxInputSets = 8;
struct TimingPlan {
  int wanted_sets = kMaxInputSets;
  int trial_cap = 0;
  uint64_t rotation_key = 0;  // Rotation's key (task::SeedUse::rotation)
};
TimingPlan plan_timing(uint64_t run_seed, std::string_view size_set, int max_trials);

// The input sets that fit: `wanted`, fewer only when that many sets (each a copy of the inputs
// and of the reference's outputs, `bytes_per_set`) would take more than half of the free
// device memory; never fewer than 2.
int timing_input_sets(size_t bytes_per_set, size_t free_device_bytes, int wanted);

// Fresh inputs for every trial where they are small. Nothing restores device memory that no
// variable or buffer names (the driver's pool past the module's variables is writable and
// keeps its bytes across trials and module reloads, measured on an H100), so a kernel could
// remember its outputs there and replay them when a set comes round again. A set that never
// comes round again leaves nothing to replay: where one set per trial, plus one per warm-up
// run, takes at most kFreshSetsBytes (inputs and the reference's outputs, and at most half the
// free device memory) and there are at most kMaxFreshSets, every trial and every warm-up run
// gets a set of its own, and fresh_timing_sets says how many; elsewhere it gives 0 and the
// sets rotate (timing_input_sets).
constexpr size_t kFreshSetsBytes = size_t{64} << 20;
constexpr int kMaxFreshSets = 160;
constexpr int kWarmupRuns = 3;
int fresh_timing_sets(size_t bytes_per_set, size_t free_device_bytes, int trial_cap);

// Which input set trial t (0-based) uses: the trials visit the sets in cycles, each cycle a
// fresh permutation drawn from `key` (derived from the run's seed), so the order is neither
// fixed nor predictable, every set is used equally often, and two consecutive trials never
// use the same set (when there are at least 2). With `warmup_only` sets (fresh sets), the last
// that many are the warm-up runs' alone and the trials rotate over the others.
class Rotation {
 public:
  Rotation(int sets, uint64_t key, int warmup_only = 0);
  int sets() const { return sets_; }  // those the trials use
  int set_for(int trial);
  int warmup_set(int run) const { return warmup_only_ > 0 ? sets_ + run % warmup_only_ : run % sets_; }

 private:
  std::vector<int> draw_cycle(int cycle) const;
  int sets_, warmup_only_;
  uint64_t key_;
  std::vector<std::vector<int>> cycles_;  // drawn so far
};

// Every timed trial is checked on the GPU (worker/trial_check.h): one u64 mismatch counter per
// trial and output, read once after the trials. What the host needs to judge a count: the
// output's element count, type and tolerance.
struct CheckedOutput {
  std::string name;
  size_t count = 0;
  task::DType dtype = task::DType::f32;
  task::Tolerance tol;
};

// The verdict compare_output gives for `mismatches` wrong elements of `o`, `never_written` of
// them still holding the poison pattern (min_match applied, integers exact): the counts, the
// matched fraction, pass, and the hint for an output never written at all. Errors, other hints
// and the first mismatches stay empty: only the counts crossed the bus.
task::Comparison comparison_from_count(const CheckedOutput& o, uint64_t mismatches, uint64_t never_written = 0);

// The first of `trials` trials whose counters fail an output, with every output's comparison
// for that trial; nullopt when all pass. Two counters per trial and output, trial-major:
// counters[(t * outputs.size() + o) * 2] mismatches, [... + 1] never written.
struct FailedTrial {
  int trial = 0;  // 0-based
  std::vector<task::Comparison> outputs;
};
std::optional<FailedTrial> first_failed_trial(const std::vector<uint64_t>& counters,
                                              const std::vector<CheckedOutput>& outputs, int trials);

// "timed trial 7 of 40 on size set 'small' (input set 3): 'c': 1021 of 1024 elements wrong
// (hint)" — the first problem (a guard or input problem, else the first wrong output).
// Trials and input sets are counted from 1 in the text.
std::string describe_trial_failure(int trial, int trials, int input_set, const std::string& size_set,
                                   const std::vector<std::string>& problems,
                                   const std::vector<task::Comparison>& outputs);

}  // namespace ptxforge::gpu
