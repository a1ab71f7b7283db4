// The hardware a prompt describes and feedback measures against: the GPU's facts (from the
// worker) when there is one, else a named profile (`h200`). Peak bandwidth and FP32 throughput are
// derived from the same figures (memory clock x bus width x 2; SMs x 128 FMA x 2 x clock);
// tensor-core peaks from a per-architecture table scaled by SMs and clock.
#pragma once

#include <optional>
#include <string>

#include "gpu/measurement.h"
#include "task/task_spec.h"
#include "gpu/peaks.h"
#include "util/result.h"

namespace ptxforge::agent {

struct Hardware {
  std::string name, source;  // source: "read from the GPU" or "profile h200"
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int shared_per_block_optin_kb = 0, shared_per_sm_kb = 0;
  int registers_per_sm = 0, max_threads_per_block = 1024;
  double l2_mb = 0, memory_gib = 0;
  double clock_mhz = 0, memory_clock_mhz = 0;
  int bus_width_bits = 0;
  double peak_bandwidth_gbs() const { return memory_clock_mhz * 1e6 * 2 * bus_width_bits / 8 / 1e9; }
  double peak_fp32_tflops() const { return sms * 128.0 * 2 * clock_mhz * 1e6 / 1e12; }
  // Dense tensor-core TFLOP/s at a precision (gpu::tensor_peak_flops's table); unset where
  // the table has no figure for this GPU.
  std::optional<double> peak_tensor_tflops(task::TensorCores precision) const;
  std::string arch() const;  // sm_90a
  std::string describe() const;  // the prompt's hardware section
 private:
  std::string describe_base() const;
 public:
};

// "" = the GPU whose facts `gpu` holds (asked of the worker: this process never loads the
// driver), else h200; otherwise a profile name.
Result<Hardware> find_hardware(const std::string& profile, const Result<gpu::DeviceInfo>& gpu);
// The same, asking a worker for the GPU's facts when `profile` is "".
Result<Hardware> find_hardware(const std::string& profile);
// Whether `profile` names hardware ("" or a known profile), without asking anything.
Status check_hardware_profile(const std::string& profile);

}  // namespace ptxforge::agent
