#include "worker/timing_plan.h"

#include <fmt/format.h>
#include <algorithm>
#include <cassert>

#include "task/seeds.h"

namespace ptxforge::gpu {

TimingPlan plan_timing(uint64_t run_seed, std::string_view size_set, int max_trials) {
  uint64_t key = task::size_set_key(size_set);
  TimingPlan p;
  uint64_t sets = task::derive_seed(run_seed, task::SeedUse::timing_plan, key, 0);
  p.wanted_sets = kMinInputSets + static_cast<int>(sets % static_cast<uint64_t>(kMaxInputSets - kMinInputSets + 1));
  int cap = std::max(max_trials, 1);
  uint64_t jitter = task::derive_seed(run_seed, task::SeedUse::timing_plan, key, 1);
  p.trial_cap = cap - static_cast<int>(jitter % static_cast<uint64_t>(cap / 4 + 1));
  p.rotation_key = task::derive_seed(run_seed, task::SeedUse::rotation, key);
  return p;
}

int timing_input_sets(size_t bytes_per_set, size_t free_device_bytes, int wanted) {
  wanted = std::max(wanted, 2);
  if (bytes_per_set == 0) return wanted;
  size_t fit = free_device_bytes / 2 / bytes_per_set;
  return static_cast<int>(std::clamp<size_t>(fit, 2, static_cast<size_t>(wanted)));
}

int fresh_timing_sets(size_t bytes_per_set, size_t free_device_bytes, int trial_cap) {
  int sets = std::max(trial_cap, 1) + kWarmupRuns;
  if (sets > kMaxFreshSets) return 0;
  size_t bytes = std::max<size_t>(bytes_per_set, 1) * static_cast<size_t>(sets);
  if (bytes / static_cast<size_t>(sets) != std::max<size_t>(bytes_per_set, 1)) return 0;  // wrapped
  return bytes <= kFreshSetsBytes && bytes <= free_device_bytes / 2 ? sets : 0;
}

Rotation::Rotation(int sets, uint64_t key, int warmup_only)
    : sets_(std::max(sets - std::max(warmup_only, 0), 1)),
      warmup_only_(sets - std::max(warmup_only, 0) >= 1 ? std::max(warmup_only, 0) : 0),
      key_(key) {}

std::vector<int> Rotation::draw_cycle(int cycle) const {
  std::vector<int> p(static_cast<size_t>(sets_));
  for (int i = 0; i < sets_; ++i) p[static_cast<size_t>(i)] = i;
  uint64_t state = task::splitmix64(key_ ^ (0xD1B54A32D192ED03ull * static_cast<uint64_t>(cycle + 1)));
  for (int i = sets_ - 1; i > 0; --i) {  // Fisher-Yates
    state = task::splitmix64(state);
    std::swap(p[static_cast<size_t>(i)], p[state % static_cast<uint64_t>(i + 1)]);
  }
  return p;
}

int Rotation::set_for(int trial) {
  if (trial < 0) trial = 0;
  int cycle = trial / sets_;
  while (static_cast<int>(cycles_.size()) <= cycle) {
    std::vector<int> p = draw_cycle(static_cast<int>(cycles_.size()));
    // A cycle never starts with the set the previous one ended with.
    if (!cycles_.empty() && sets_ >= 2 && p.front() == cycles_.back().back()) std::swap(p[0], p[1]);
    cycles_.push_back(std::move(p));
  }
  return cycles_[static_cast<size_t>(cycle)][static_cast<size_t>(trial % sets_)];
}

task::Comparison comparison_from_count(const CheckedOutput& o, uint64_t mismatches, uint64_t never_written) {
  // As compare_output judges its own count (src/task/compare.cpp).
  task::Comparison c;
  c.output = o.name;
  c.count = o.count;
  c.mismatches = static_cast<size_t>(std::min<uint64_t>(mismatches, o.count));
  c.never_written = static_cast<size_t>(std::min<uint64_t>(never_written, c.mismatches));
  c.matched_fraction =
      o.count ? static_cast<double>(o.count - c.mismatches) / static_cast<double>(o.count) : 1.0;
  c.pass = c.matched_fraction >= o.tol.min_match && (c.mismatches == 0 || o.tol.min_match < 1.0);
  if (mismatches > o.count || never_written > mismatches) c.pass = false;  // counts no comparison gives
  if (c.mismatches > 0 && c.never_written == c.count)
    c.hint = "the output was never written (every element still holds the poison pattern)";
  return c;
}

std::optional<FailedTrial> first_failed_trial(const std::vector<uint64_t>& counters,
                                              const std::vector<CheckedOutput>& outputs, int trials) {
  size_t per = outputs.size();
  for (int t = 0; t < trials; ++t) {
    FailedTrial f{t, {}};
    bool pass = true;
    for (size_t o = 0; o < per; ++o) {
      size_t at = (static_cast<size_t>(t) * per + o) * 2;
      // Counters the host never got back count as every element wrong.
      bool have = at + 1 < counters.size();
      uint64_t wrong = have ? counters[at] : outputs[o].count + 1, unwritten = have ? counters[at + 1] : 0;
      f.outputs.push_back(comparison_from_count(outputs[o], wrong, unwritten));
      pass = pass && f.outputs.back().pass;
    }
    if (!pass) return f;
  }
  return std::nullopt;
}

std::string describe_trial_failure(int trial, int trials, int input_set, const std::string& size_set,
                                   const std::vector<std::string>& problems,
                                   const std::vector<task::Comparison>& outputs) {
  std::string why;
  if (!problems.empty()) why = problems.front();
  for (auto& c : outputs) {
    if (!why.empty()) break;
    if (c.pass) continue;
    why = fmt::format("'{}': {} of {} elements wrong", c.output, c.mismatches, c.count);
    if (c.never_written > 0) why += fmt::format(", {} never written", c.never_written);
    if (!c.hint.empty()) why += " (" + c.hint + ")";
  }
  if (why.empty()) why = "failed";
  return fmt::format("timed trial {} of {} on size set '{}' (input set {}): {}", trial + 1, trials, size_set,
                     input_set + 1, why);
}

}  // namespace ptxforge::gpu
