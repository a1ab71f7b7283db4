// What the GPU worker measures, as plain data: the verdict per size set and seed, timings,
// and failures with their reason. The worker fills these in; the protocol carries them as
// JSON; the evaluation pipeline folds them into its result record.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "task/compare.h"

namespace ptxforge::gpu {

// Why a job could not be completed. Kinds: "spec" (the launch spec does not fit the task),
// "load" (the driver rejected a module), "launch" (a launch was refused), "fault" (the
// kernel faulted: illegal address, trap, ...), "oom", "timeout" (killed after the
// wall-clock limit), "crash" (the worker died), "protocol" (the worker said something
// unreadable), "driver" (no GPU or driver).
struct Failure {
  std::string kind;
  std::string message;
  std::string where;  // "size set 'small', seed 1, candidate launch 2" ...
};

struct CaseResult {
  std::string trivial;  // "" for the candidate; "zeros", "input-copy", "unwritten" for a trivial output
  std::string size_set;
  bool shown = true;
  uint64_t seed = 0;
  bool pass = false;
  std::vector<task::Comparison> outputs;
  std::vector<std::string> problems;  // guard violations, modified inputs
};

struct TimingStats {
  int trials = 0;
  double min_ms = 0, median_ms = 0, mean_ms = 0, stdev_ms = 0;
};
TimingStats summarize(std::vector<double> samples_ms);

struct SizeTiming {
  std::string size_set;
  TimingStats candidate, reference;
  std::optional<TimingStats> library;
  std::string library_name;
};

struct VerifyReport {
  std::vector<CaseResult> cases;
  double seconds = 0;  // wall time of the whole verify job in the worker
  bool pass() const {
    for (auto& c : cases)
      if (!c.pass) return false;
    return !cases.empty();
  }
};

struct TimeReport {
  std::vector<SizeTiming> sizes;
  bool reverify_pass = false;  // one more launch with fresh inputs after the trials
  std::string reverify_problem;
  double seconds = 0;
};

}  // namespace ptxforge::gpu
