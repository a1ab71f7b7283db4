// The host-side plan of a timing run, kept apart from the driver so that it is tested in CI:
// how many input sets a size set is timed on, which set each trial uses, which trials are
// checked against the reference afterwards, and how a failed check reads. The worker's
// timing loop (gpu/executor_timing.cpp) follows the plan; nothing of it is visible to the kernel
// (the kernel sees only its buffers, which are refreshed before every trial).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "task/compare.h"

namespace ptxforge::gpu {

// Input sets a size set is timed on. Fewer only when 8 copies of the inputs would take more
// than half of the free device memory (never fewer than 2).
constexpr int kTimingInputSets = 8;
int timing_input_sets(size_t input_bytes_per_set, size_t free_device_bytes);

// Which input set trial t (0-based) uses: the trials visit the sets in cycles, each cycle a
// fresh permutation drawn from `key` (derived from the run's seed), so the order is neither
// fixed nor predictable, every set is used equally often, and two consecutive trials never
// use the same set (when there are at least 2).
class Rotation {
 public:
  Rotation(int sets, uint64_t key);
  int sets() const { return sets_; }
  int set_for(int trial);

 private:
  std::vector<int> draw_cycle(int cycle) const;
  int sets_;
  uint64_t key_;
  std::vector<std::vector<int>> cycles_;  // drawn so far
};

// Which timed trials are checked. The number of trials is known only when the time budget
// runs out, so a reservoir of `slots` trials is kept while they run: after trial t the
// sampler says whether to save that trial's outputs and into which slot (replacing an
// earlier one). At the end the slots hold a uniformly random subset of the trials, chosen
// by the host from `key`; the last trial is checked too, from the buffers themselves.
// With kCheckSlots = 4, at least 3 trials besides the last are checked once 4 trials ran.
constexpr int kCheckSlots = 4;
class TrialSampler {
 public:
  TrialSampler(int slots, uint64_t key);
  // Called after every trial, in order (0, 1, 2, ...): the slot to save its outputs into, or -1.
  int offer(int trial);
  // The trial each slot holds (-1: empty).
  const std::vector<int>& held() const { return held_; }

 private:
  uint64_t next();
  std::vector<int> held_;
  uint64_t state_;
  int seen_ = 0;
};

// The checked trials of a run of `trials`: those the slots hold and the last one, ascending,
// each once.
std::vector<int> checked_trials(const std::vector<int>& held, int trials);

// "timed trial 7 of 40 on size set 'small' (input set 3): 'c': 1021 of 1024 elements wrong
// (hint)" — the first problem (a guard or input problem, else the first wrong output).
// Trials and input sets are counted from 1 in the text.
std::string describe_trial_failure(int trial, int trials, int input_set, const std::string& size_set,
                                   const std::vector<std::string>& problems,
                                   const std::vector<task::Comparison>& outputs);

}  // namespace ptxforge::gpu
