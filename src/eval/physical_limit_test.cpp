#include <gtest/gtest.h>

#include <cmath>

#include "eval/physical_limit.h"
#include "eval/time_gate.h"

namespace ptxforge::eval {
namespace {

const LimitPeaks kPeaks{4e12, 6e13, "FP32 FMA"};

TEST(PhysicalLimit, TheBoundaryIsThePeakTimesTheMargin) {
  // 4.4e12 B/s is exactly the peak plus 10%: allowed; a hair more is not.
  const double bytes = 4.4e9;
  EXPECT_TRUE(check_physical_limits(bytes, 0, 1e-3, kPeaks).pass);
  LimitCheck over = check_physical_limits(bytes * 1.0001, 0, 1e-3, kPeaks);
  EXPECT_FALSE(over.pass);
  EXPECT_EQ(over.message, "faster than this GPU can move 4.4 GB: 4.4 TB/s > 4 TB/s peak (allowed with the 10% margin: 4.4 TB/s)");
  EXPECT_NEAR(over.bytes_per_s, 4.40044e12, 1e6);
  EXPECT_DOUBLE_EQ(kPhysicalLimitMargin, 0.10);
}

TEST(PhysicalLimit, FlopsAreBoundByTheirOwnPeak) {
  // Few bytes, many flops: 2 * 4096^3 flops in 1 ms is 137 TFLOP/s, beyond 66 TFLOP/s.
  LimitCheck c = check_physical_limits(201e6, 2.0 * 4096 * 4096 * 4096, 1e-3, kPeaks);
  EXPECT_FALSE(c.pass);
  EXPECT_NE(c.message.find("faster than this GPU can compute 1.374e+11 flops: 137 TFLOP/s > 60 TFLOP/s FP32 FMA peak"),
            std::string::npos)
      << c.message;
  EXPECT_TRUE(check_physical_limits(201e6, 2.0 * 4096 * 4096 * 4096, 2.7e-3, kPeaks).pass) << "cuBLAS's 2.7 ms";
  LimitPeaks tensor = kPeaks;
  tensor.flops_per_s = 9.9e14;
  EXPECT_TRUE(check_physical_limits(201e6, 2.0 * 4096 * 4096 * 4096, 1e-3, tensor).pass);
}

TEST(PhysicalLimit, ZeroAndNegativeTimesAreNeverAPass) {
  EXPECT_FALSE(check_physical_limits(12, 0, 0, kPeaks).pass) << "moving bytes takes time";
  EXPECT_NE(check_physical_limits(12, 0, 0, kPeaks).message.find("0 s"), std::string::npos);
  EXPECT_FALSE(check_physical_limits(12, 0, -1e-3, kPeaks).pass);
  EXPECT_FALSE(check_physical_limits(12, 0, std::nan(""), kPeaks).pass);
  // Even with no peaks known, zero time for real work is impossible.
  EXPECT_FALSE(check_physical_limits(12, 0, 0, LimitPeaks{}).pass);
}

TEST(PhysicalLimit, UnknownPeaksBoundNothing) {
  EXPECT_TRUE(check_physical_limits(1e12, 1e15, 1e-6, LimitPeaks{0, 0, ""}).pass);
}

task::Task large_task() {
  auto t = task::parse_task(R"(name = "t"
description = "d"
entry = "k"
[[param]]
name = "x"
dtype = "f32"
count = "n"
role = "inout"
[[sizes]]
name = "large"
n = 16_777_216
[reference]
entry = "k"
grid = "1"
block = "1"
[roofline]
bytes = "8 * n"
flops = "0"
)",
                            "task.toml", ".");
  EXPECT_TRUE(t.ok()) << t.error().message;
  return *t;
}

TEST(TimeGate, TheFastestTrialIsJudgedNotTheMedian) {
  // A kernel that skips its work on a few trials: the median (0.04 ms, 3.4 TB/s) is possible,
  // the fastest (0.002 ms) is not.
  gpu::TimeReport rep;
  gpu::SizeTiming st;
  st.size_set = "large";
  st.candidate = {100, 0.002, 0.04, 0.038, 0.01};
  rep.sizes.push_back(st);
  TimeVerdict v = judge_times(large_task(), rep, kPeaks);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].find("the fastest of 100 trials (0.0020 ms; median 0.0400 ms)"), std::string::npos) << v.problems[0];
  ASSERT_EQ(v.rows.size(), 1u);
  EXPECT_FALSE(v.rows[0].pass);
  st.candidate.min_ms = 0.035;
  rep.sizes[0] = st;
  EXPECT_TRUE(judge_times(large_task(), rep, kPeaks).problems.empty());
}

TEST(TimeGate, TensorCoresRaiseTheFlopsBoundOnlyWhenTheTaskAllowsThem) {
  task::Task t = large_task();
  gpu::DevicePeaks measured;
  measured.device = "H200";
  measured.copy_bytes_per_s = 4.2e12;
  measured.read_bytes_per_s = 4.0e12;
  measured.fma_flops_per_s = 6.0e13;
  gpu::DeviceInfo info;
  info.name = "H200";
  info.cc_major = 9;
  info.sms = 132;
  info.clock_khz = 1980000;
  GatePeaks plain = gate_peaks(t, measured, info);
  EXPECT_DOUBLE_EQ(plain.limits.bytes_per_s, 4.2e12);
  EXPECT_DOUBLE_EQ(plain.limits.flops_per_s, 6.0e13);
  t.tensor_cores = task::TensorCores::f16;
  GatePeaks tensor = gate_peaks(t, measured, info);
  EXPECT_NEAR(tensor.limits.flops_per_s, 4096.0 * 132 * 1.98e9, 1e9);
  EXPECT_EQ(tensor.limits.flops_kind, "f16 tensor-core");
  info.cc_major = 12;  // no table row: the flops go unbounded, and the note says so
  GatePeaks unknown = gate_peaks(t, measured, info);
  EXPECT_EQ(unknown.limits.flops_per_s, 0);
  EXPECT_NE(unknown.note.find("flops not bounded"), std::string::npos);
  GatePeaks none = gate_peaks(t, Result<gpu::DevicePeaks>(Error{"no GPU"}), std::nullopt);
  EXPECT_EQ(none.limits.bytes_per_s, 0);
  EXPECT_EQ(none.note, "not checked against the GPU's peaks: no GPU");
}

}  // namespace
}  // namespace ptxforge::eval
