// The physical-limit gate of the time stage: a kernel cannot move its bytes faster than the
// GPU's memory can, nor do its flops faster than its arithmetic units can. A measured time
// that says otherwise is a cheat (work skipped, results cached across trials) or a broken
// measurement; either way it is not a speedup. Pure arithmetic, tested without a GPU.
//
// The bound is DRAM bandwidth, not L2: the harness flushes the L2 before every trial
// (worker/executor_timing.cpp, time_runs), so a kernel's inputs start in DRAM on every trial.
#pragma once

#include <string>

namespace ptxforge::eval {

// How far a measured rate may exceed the measured peak before it is called impossible: the
// peak is the best of a few runs at the clock of that moment, and a read-only kernel can
// stream a few percent faster than the copy the bound comes from.
constexpr double kPhysicalLimitMargin = 0.10;
// The margin over a MEASURED tensor-core peak (gpu/peaks.h): the loops are the best of five
// runs with no memory traffic and little power, so no real kernel of that type beats them by
// more than run-to-run noise. The table peak (the boost clock times the data sheet's rate per
// SM) keeps kPhysicalLimitMargin.
constexpr double kMeasuredTensorMargin = 0.05;

struct LimitPeaks {
  double bytes_per_s = 0;  // memory; 0: unknown, not checked
  double flops_per_s = 0;  // arithmetic; 0: unknown, not checked
  std::string flops_kind = "FP32 FMA";  // what flops_per_s is the peak of
  double flops_margin = kPhysicalLimitMargin;  // how far a rate may exceed flops_per_s
};

struct LimitCheck {
  bool pass = true;
  std::string message;  // why not, when it fails
  double bytes_per_s = 0, flops_per_s = 0;  // the rates the judged time implies
};

// `seconds` is the time judged: the fastest trial, since a physical limit binds every trial
// (a kernel that skips its work on some trials cannot hide behind a median).
LimitCheck check_physical_limits(double bytes, double flops, double seconds, const LimitPeaks& peaks);

// "201.3 MB", "4.25 TB/s", "51.2 TFLOP/s": the units the messages use.
std::string format_bytes(double bytes);
std::string format_rate(double per_s, const char* unit);

}  // namespace ptxforge::eval
