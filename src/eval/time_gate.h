// The verdict on a candidate's timings, apart from taking them: every shown size set's fastest
// trial must respect the GPU's physical limits (eval/physical_limit.h) for the task's
// roofline, the candidate must not be more than kSuspiciousLibraryRatio times faster than
// the vendor library, nor more than kNearPeakLibraryRatio times faster where the library
// itself runs near the peak. Each is a failure of the time stage unless the run allows
// suspicious results (`--allow-suspicious`), which turns them into flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "eval/physical_limit.h"
#include "gpu/measurement.h"
#include "gpu/peaks.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::eval {

constexpr double kSuspiciousLibraryRatio = 10;
// Where the library reaches kLibraryNearPeak of the flops or the memory bound in use, there
// is little room left above it: a candidate more than kNearPeakLibraryRatio times faster
// (median against median: the library's own time moves by up to 9% from run to run) is
// suspicious. 0.7 * 1.3 = 0.91 of the peak, so the rule bites below the physical gate (1.05 or
// 1.1 times the peak), where a cheat that skips a third of the work would otherwise pass.
// Tasks do not override these yet (a `[gate]` key in task.toml would be the place).
constexpr double kLibraryNearPeak = 0.70;
constexpr double kNearPeakLibraryRatio = 1.3;

// The peaks the gate holds a task's timings to, from the device's measured peaks and, when
// the task lets its flops run on tensor cores, the tensor peak of that precision: the best
// measured mma.sync or wgmma loop of its types with kMeasuredTensorMargin, else the table's
// figure with kPhysicalLimitMargin; the note says which.
struct GatePeaks {
  LimitPeaks limits;
  std::string note;  // where the figures come from, or why a bound is missing
};
GatePeaks gate_peaks(const task::Task& task, const Result<gpu::DevicePeaks>& measured,
                     const std::optional<gpu::DeviceInfo>& info);

// One shown size set as judged, for the record.
struct LimitRow {
  std::string size_set;
  double bytes = 0, flops = 0;
  double fastest_ms = 0, median_ms = 0;
  double bytes_per_s = 0, flops_per_s = 0;  // at the fastest trial
  bool pass = true;
};

struct TimeVerdict {
  std::vector<std::string> problems;  // each a reason to fail (or to flag, when allowed)
  std::vector<std::string> notes;     // a bound raised because the library itself passed it
  std::vector<LimitRow> rows;
};

// The peaks a size set is held to: `peaks`, raised to the rate the vendor library itself
// reached on that size set where the library went past them. A library cannot beat the
// hardware, so a peak below it was measured wrong (a throttled clock, a slow loop), and an
// honest kernel level with the library must not fail on it. The note says so; "" otherwise.
LimitPeaks peaks_at_least_the_library(const LimitPeaks& peaks, double bytes, double flops, double library_fastest_s,
                                      std::string& note);

TimeVerdict judge_times(const task::Task& task, const gpu::TimeReport& times, const LimitPeaks& peaks);

}  // namespace ptxforge::eval
