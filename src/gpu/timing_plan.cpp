#include "gpu/timing_plan.h"

#include <fmt/format.h>
#include <algorithm>
#include <cassert>

#include "task/seeds.h"

namespace ptxforge::gpu {

int timing_input_sets(size_t input_bytes_per_set, size_t free_device_bytes) {
  if (input_bytes_per_set == 0) return kTimingInputSets;
  size_t fit = free_device_bytes / 2 / input_bytes_per_set;
  return static_cast<int>(std::clamp<size_t>(fit, 2, kTimingInputSets));
}

Rotation::Rotation(int sets, uint64_t key) : sets_(std::max(sets, 1)), key_(key) {}

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

TrialSampler::TrialSampler(int slots, uint64_t key) : held_(static_cast<size_t>(std::max(slots, 1)), -1), state_(key) {}

uint64_t TrialSampler::next() {
  state_ = task::splitmix64(state_);
  return state_;
}

int TrialSampler::offer([[maybe_unused]] int trial) {
  assert(trial == seen_ && "trials are offered once each, in order");
  int t = seen_++;
  int slots = static_cast<int>(held_.size());
  int slot = -1;
  if (t < slots) {
    slot = t;
  } else {
    uint64_t r = next() % static_cast<uint64_t>(t + 1);
    if (r < static_cast<uint64_t>(slots)) slot = static_cast<int>(r);
  }
  if (slot >= 0) held_[static_cast<size_t>(slot)] = t;
  return slot;
}

std::vector<int> checked_trials(const std::vector<int>& held, int trials) {
  std::vector<int> out;
  for (int t : held)
    if (t >= 0 && t < trials) out.push_back(t);
  if (trials > 0) out.push_back(trials - 1);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
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
