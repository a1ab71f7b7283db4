#include "agent/hardware.h"

#include <fmt/format.h>

#include "gpu/worker_client.h"

namespace ptxforge::agent {

namespace {
// Figures read from an H200 by `ptxforge doctor` (driver 580, CUDA 13.0).
Hardware h200() {
  Hardware h;
  h.name = "NVIDIA H200";
  h.source = "profile h200";
  h.cc_major = 9;
  h.cc_minor = 0;
  h.sms = 132;
  h.shared_per_block_optin_kb = 227;
  h.shared_per_sm_kb = 228;
  h.registers_per_sm = 65536;
  h.l2_mb = 62.9;
  h.memory_gib = 139.8;
  h.clock_mhz = 1980;
  h.memory_clock_mhz = 3201;
  h.bus_width_bits = 6016;
  return h;
}
}  // namespace

std::string Hardware::arch() const {
  return fmt::format("sm_{}{}{}", cc_major, cc_minor, cc_major >= 9 ? "a" : "");
}

std::optional<double> Hardware::peak_tensor_tflops(task::TensorCores precision) const {
  gpu::DeviceInfo info;
  info.cc_major = cc_major;
  info.cc_minor = cc_minor;
  info.sms = sms;
  info.clock_khz = static_cast<int>(clock_mhz * 1000);
  auto flops = gpu::tensor_peak_flops(info, precision);
  return flops ? std::optional<double>(*flops / 1e12) : std::nullopt;
}

std::string Hardware::describe() const {
  std::string tensor;
  auto f16 = peak_tensor_tflops(task::TensorCores::f16), tf32 = peak_tensor_tflops(task::TensorCores::tf32),
       fp8 = peak_tensor_tflops(task::TensorCores::fp8);
  if (f16 && tf32)
    tensor = fmt::format(" Dense tensor-core peaks about {:.0f} TFLOP/s f16/bf16, {:.0f} tf32{} (data-sheet rates per SM "
                         "and clock, not measured).",
                         *f16, *tf32, fp8 && cc_major >= 9 ? fmt::format(", {:.0f} fp8", *fp8) : std::string());
  return tensor.empty() ? describe_base() : describe_base() + tensor;
}

std::string Hardware::describe_base() const {
  return fmt::format(
      "{} ({}): compute capability {}.{}, target {}; {} SMs at {:.0f} MHz; {:.1f} GiB of memory at about {:.0f} GB/s peak; "
      "L2 {:.1f} MB; shared memory {} KB per SM, up to {} KB per block (above 48 KB needs the opt-in the harness does "
      "for dynamic shared memory); {} 32-bit registers per SM, at most 255 per thread; at most {} threads per block; "
      "FP32 peak about {:.1f} TFLOP/s.",
      name, source, cc_major, cc_minor, arch(), sms, clock_mhz, memory_gib, peak_bandwidth_gbs(), l2_mb, shared_per_sm_kb,
      shared_per_block_optin_kb, registers_per_sm, max_threads_per_block, peak_fp32_tflops());
}

Status check_hardware_profile(const std::string& profile) {
  if (profile.empty() || profile == "h200") return ok_status();
  return Error{fmt::format("unknown hardware profile '{}'; known: h200", profile)};
}

Result<Hardware> find_hardware(const std::string& profile, const Result<gpu::DeviceInfo>& gpu) {
  if (auto s = check_hardware_profile(profile); !s) return s.error();
  if (profile.empty()) {
    if (gpu) {
      const gpu::DeviceInfo* info = &*gpu;
      Hardware h;
      h.name = info->name;
      h.source = "read from the GPU";
      h.cc_major = info->cc_major;
      h.cc_minor = info->cc_minor;
      h.sms = info->sms;
      h.shared_per_block_optin_kb = info->shared_per_block_optin / 1024;
      h.shared_per_sm_kb = info->shared_per_sm / 1024;
      h.registers_per_sm = info->registers_per_sm;
      h.max_threads_per_block = info->max_threads_per_block;
      h.l2_mb = info->l2_bytes / 1e6;
      h.memory_gib = static_cast<double>(info->memory_bytes) / (1u << 30);
      h.clock_mhz = info->clock_khz / 1000.0;
      h.memory_clock_mhz = info->memory_clock_khz / 1000.0;
      h.bus_width_bits = info->bus_width_bits;
      return h;
    }
    return h200();
  }
  return h200();
}

Result<Hardware> find_hardware(const std::string& profile) {
  if (!profile.empty()) return find_hardware(profile, Error{"not asked"});
  return find_hardware(profile, gpu::ask_device_info());
}

}  // namespace ptxforge::agent
