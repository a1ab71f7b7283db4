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

gpu::DeviceInfo h200_info() {
  gpu::DeviceInfo info;
  info.name = "H200";
  info.cc_major = 9;
  info.sms = 132;
  info.clock_khz = 1980000;
  return info;
}

gpu::DevicePeaks h200_measured(bool with_tensor) {
  gpu::DevicePeaks m;
  m.device = "H200";
  m.copy_bytes_per_s = 4.2e12;
  m.read_bytes_per_s = 4.0e12;
  m.fma_flops_per_s = 6.0e13;
  if (with_tensor) {
    m.tensor = {{gpu::TensorOp::mma_sync, gpu::TensorType::f16, 5.6e14},
                {gpu::TensorOp::wgmma, gpu::TensorType::f16, 8.2e14},
                {gpu::TensorOp::wgmma, gpu::TensorType::bf16, 8.3e14},
                {gpu::TensorOp::wgmma, gpu::TensorType::e4m3, 1.65e15}};
  }
  return m;
}

// An f16 GEMM at 4096^3 on the tensor cores.
task::Task gemm_task() {
  task::Task t = large_task();
  t.roofline_bytes = *task::SizeExpr::parse("100000000");
  t.roofline_flops = *task::SizeExpr::parse("2 * 4096 * 4096 * 4096");
  t.tensor_cores = task::TensorCores::f16;
  return t;
}

gpu::TimeReport one_size(double min_ms, double median_ms, std::optional<double> library_median_ms = std::nullopt) {
  gpu::TimeReport rep;
  gpu::SizeTiming st;
  st.size_set = "large";
  st.candidate = {100, min_ms, median_ms, median_ms, 0.001};
  if (library_median_ms) {
    st.library = gpu::TimingStats{100, *library_median_ms, *library_median_ms, *library_median_ms, 0.001};
    st.library_name = "cuBLASLt";
  }
  rep.sizes.push_back(st);
  return rep;
}

TEST(TimeGate, AMeasuredTensorPeakFlagsWhatTheTablePeakLetThrough) {
  // 1.374e11 flops in 0.1374 ms is 1.0 PFLOP/s: under the table's f16 peak at the boost clock
  // plus 10% (1.07 PFLOP/s * 1.1), over the measured wgmma peak plus 5% (0.83 * 1.05).
  task::Task t = gemm_task();
  GatePeaks table = gate_peaks(t, h200_measured(false), h200_info());
  EXPECT_NEAR(table.limits.flops_per_s, 1.0705e15, 1e12);
  EXPECT_DOUBLE_EQ(table.limits.flops_margin, kPhysicalLimitMargin);
  EXPECT_NE(table.note.find("(table, boost clock; not measured: no loop of that type ran on this GPU; 10% margin)"), std::string::npos)
      << table.note;
  GatePeaks measured = gate_peaks(t, h200_measured(true), h200_info());
  EXPECT_DOUBLE_EQ(measured.limits.flops_per_s, 8.3e14) << "the best of the f16 and bf16 loops, mma.sync or wgmma";
  EXPECT_DOUBLE_EQ(measured.limits.flops_margin, kMeasuredTensorMargin);
  EXPECT_NE(measured.note.find("f16 tensor cores 830 TFLOP/s (measured: the wgmma bf16 loop; 5% margin)"), std::string::npos)
      << measured.note;

  gpu::TimeReport fast = one_size(0.1374, 0.14);
  EXPECT_TRUE(judge_times(t, fast, table.limits).problems.empty()) << "the old gate passed it";
  TimeVerdict v = judge_times(t, fast, measured.limits);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].find("> 830 TFLOP/s f16 tensor-core peak (allowed with the 5% margin: "), std::string::npos)
      << v.problems[0];
  // cuBLASLt's own 0.1738 ms (791 TFLOP/s) stays well inside.
  EXPECT_TRUE(judge_times(t, one_size(0.1738, 0.175), measured.limits).problems.empty());
  // The boundary: 5% over the measured peak passes, a hair more fails.
  const double at_margin_ms = 2.0 * 4096 * 4096 * 4096 / (8.3e14 * 1.05) * 1e3;
  EXPECT_TRUE(judge_times(t, one_size(at_margin_ms * 1.0001, 0.2), measured.limits).problems.empty());
  EXPECT_FALSE(judge_times(t, one_size(at_margin_ms * 0.999, 0.2), measured.limits).problems.empty());
}

TEST(TimeGate, EachPrecisionIsBoundByItsOwnLoopsAndInt8ByTheTable) {
  task::Task t = gemm_task();
  t.tensor_cores = task::TensorCores::fp8;
  GatePeaks fp8 = gate_peaks(t, h200_measured(true), h200_info());
  EXPECT_DOUBLE_EQ(fp8.limits.flops_per_s, 1.65e15);
  t.tensor_cores = task::TensorCores::tf32;  // no tf32 loop in the record: the table, saying why
  gpu::DevicePeaks m = h200_measured(true);
  m.tensor_note = "wgmma tf32: loading: CUDA_ERROR_INVALID_PTX";
  GatePeaks tf32 = gate_peaks(t, m, h200_info());
  EXPECT_NEAR(tf32.limits.flops_per_s, 1.0705e15 / 2, 1e12);
  EXPECT_NE(tf32.note.find("not measured: wgmma tf32: loading: CUDA_ERROR_INVALID_PTX"), std::string::npos) << tf32.note;
  t.tensor_cores = task::TensorCores::int8;
  EXPECT_DOUBLE_EQ(gate_peaks(t, m, h200_info()).limits.flops_margin, kPhysicalLimitMargin);
}

TEST(TimeGate, ACandidateFarAheadOfALibraryNearItsPeakIsSuspicious) {
  // Measured peak 1 PFLOP/s. cuBLASLt at 0.18 ms is 763 TFLOP/s, 76% of it.
  task::Task t = gemm_task();
  LimitPeaks peaks{4.0e12, 1.0e15, "f16 tensor-core", kMeasuredTensorMargin};
  // 1.33x faster: 1.02 PFLOP/s at the fastest trial is inside the physical gate (1.05).
  TimeVerdict v = judge_times(t, one_size(0.134, 0.135, 0.18), peaks);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_EQ(v.problems[0],
            "suspicious: 1.33x faster than cuBLASLt on 'large', where cuBLASLt runs at 76% of the f16 tensor-core peak "
            "(more than 1.3x where the library is within 30% of a peak)");
  EXPECT_TRUE(v.rows[0].pass) << "the physical gate alone let it through";
  EXPECT_TRUE(judge_times(t, one_size(0.149, 0.15, 0.18), peaks).problems.empty()) << "1.2x is a good kernel";
  // The same 1.4x over a library at 55% of the peak is not suspicious.
  EXPECT_TRUE(judge_times(t, one_size(0.178, 0.1786, 0.25), peaks).problems.empty());
  // Near the memory peak counts too: a copy-like task whose library moves 3.2 TB/s of 4.
  task::Task copy = large_task();  // 8 * n bytes, no flops
  TimeVerdict m = judge_times(copy, one_size(0.0306, 0.031, 0.042), kPeaks);
  ASSERT_EQ(m.problems.size(), 1u) << "1.35x over a library at 80% of the memory peak";
  EXPECT_NE(m.problems[0].find("of the memory peak"), std::string::npos) << m.problems[0];
}

// A peak measured too low (a throttled clock, a slow loop) must not fail an honest kernel
// level with the library: the library cannot beat the hardware, so the bound rises to what it
// reached, and the gate still holds a kernel far beyond that.
TEST(TimeGate, APeakBelowWhatTheLibraryReachedIsRaisedToIt) {
  task::Task t = gemm_task();
  LimitPeaks low{4.0e12, 6.0e14, "f16 tensor-core", kMeasuredTensorMargin};  // 600 TFLOP/s: wrong
  // cuBLASLt at 0.1738 ms is 791 TFLOP/s; the candidate at 0.172 ms, 799 TFLOP/s.
  TimeVerdict v = judge_times(t, one_size(0.172, 0.173, 0.1738), low);
  EXPECT_TRUE(v.problems.empty()) << v.problems[0];
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("the library reached 791 TFLOP/s, above the f16 tensor-core peak of 600 TFLOP/s"),
            std::string::npos)
      << v.notes[0];
  // Without the library the low peak stands, and the same time fails.
  EXPECT_FALSE(judge_times(t, one_size(0.172, 0.173), low).problems.empty());
  // Raised to the library's rate, 5% over it still fails: 0.14 ms is 982 TFLOP/s.
  EXPECT_FALSE(judge_times(t, one_size(0.14, 0.1738, 0.1738), low).problems.empty());
  // A peak above the library is left as it is, with no note.
  LimitPeaks right{4.0e12, 8.3e14, "f16 tensor-core", kMeasuredTensorMargin};
  EXPECT_TRUE(judge_times(t, one_size(0.172, 0.173, 0.1738), right).notes.empty());
}

}  // namespace
}  // namespace ptxforge::eval
