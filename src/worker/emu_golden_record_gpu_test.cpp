// The golden vectors' recorder (docs/emu.md section 5): runs every generator kernel of
// emu/golden_gen.h on the GPU over the generator's instances and writes the GPU's results to
// the folder named by PTXFORGE_EMU_GOLDEN_RECORD (tests/emu/golden/ when committed). One
// command on a GPU machine: tests/emu/golden_record.sh <build dir>. It is a GPU test because it
// needs the driver wrapper (worker/driver.h, the only way to <cuda.h>) and the generator (emu/),
// which only a test may include together. Without the variable, or without a GPU, it skips.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "emu/golden_check.h"
#include "worker/driver.h"

namespace ptxforge::gpu {
namespace {

// The NVIDIA kernel driver's version line ("NVRM version: ... 570.86.15 ..."), or "".
std::string kernel_driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  std::getline(f, line);
  return line;
}

// Runs one family's kernel over its instances; returns the out slots.
Result<std::vector<uint64_t>> run_family(const Driver& d, const emu::GoldenFamily& fam,
                                         const std::vector<emu::GoldenInstance>& inst) {
  const std::string ptx = emu::golden_module(fam);
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
  CUmodule m = nullptr;
  if (CUresult r = d.cuModuleLoadDataEx(&m, ptx.c_str(), 2, opts, vals); r != CUDA_SUCCESS)
    return Error{fmt::format("{}: loading the kernel: {} {}", fam.name, describe(r), log)};
  std::vector<uint64_t> out(inst.size(), 0);
  CUfunction f = nullptr;
  CUdeviceptr din = 0, dout = 0;
  const auto slots = emu::golden_input_slots(fam, inst);
  uint32_t n = static_cast<uint32_t>(inst.size());
  std::string err;
  auto check = [&](CUresult r, const char* what) {
    if (r != CUDA_SUCCESS && err.empty()) err = fmt::format("{}: {}: {}", fam.name, what, describe(r));
    return err.empty();
  };
  if (check(d.cuModuleGetFunction(&f, m, fam.entry.c_str()), "finding the entry") &&
      check(d.cuMemAlloc(&din, slots.size() * 8), "cuMemAlloc") && check(d.cuMemAlloc(&dout, n * 8), "cuMemAlloc") &&
      check(d.cuMemcpyHtoD(din, slots.data(), slots.size() * 8), "copying the instances") &&
      check(d.cuMemsetD8(dout, 0, n * 8), "clearing the output")) {
    void* params[] = {&din, &dout, &n};
    CUlaunchConfig cfg{};
    cfg.gridDimX = (n + emu::kGoldenBlock - 1) / emu::kGoldenBlock;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = emu::kGoldenBlock;
    cfg.blockDimY = cfg.blockDimZ = 1;
    if (check(d.cuLaunchKernelEx(&cfg, f, params, nullptr), "launching") && check(d.cuCtxSynchronize(), "running")) {
      check(d.cuMemcpyDtoH(out.data(), dout, n * 8), "copying the results back");
    }
  }
  if (din) d.cuMemFree(din);
  if (dout) d.cuMemFree(dout);
  d.cuModuleUnload(m);
  if (!err.empty()) return Error{err};
  return out;
}

TEST(EmuGoldenRecord, RecordsTheGpuResults) {
  const char* where = std::getenv("PTXFORGE_EMU_GOLDEN_RECORD");
  if (!where || !*where) GTEST_SKIP() << "set PTXFORGE_EMU_GOLDEN_RECORD=<repo>/tests/emu/golden to record (tests/emu/golden_record.sh)";
  auto dr = driver();
  if (!dr) GTEST_SKIP() << dr.error().message;
  const Driver& d = **dr;
  CUdevice dev;
  CUcontext ctx = nullptr;
  if (d.cuDeviceGet(&dev, 0) != CUDA_SUCCESS || d.cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
      d.cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
    GTEST_SKIP() << "no CUDA device";
  }
  auto info = device_info(0);
  ASSERT_TRUE(info) << info.error().message;
  ASSERT_GE(info->cc_major, 9) << "the golden kernels target sm_90: record on an H100/H200 or newer";

  const auto start = std::chrono::steady_clock::now();
  emu::GoldenRecording rec = emu::golden_recording_template();
  for (const emu::GoldenFamily& fam : emu::golden_plan().families) {
    std::vector<emu::GoldenInstance> inst;
    std::vector<emu::GoldenRecordedForm*> owners;
    for (auto& r : rec.forms) {
      if (emu::golden_forms()[r.form].family != fam.name) continue;
      inst.insert(inst.end(), r.instances.begin(), r.instances.end());
      owners.push_back(&r);
    }
    auto out = run_family(d, fam, inst);
    ASSERT_TRUE(out) << out.error().message;
    size_t at = 0;
    for (auto* r : owners) {
      for (size_t i = 0; i < r->instances.size(); ++i, ++at) {
        ASSERT_NE((*out)[at], emu::kGoldenNoForm) << "form " << r->form << ": its block never ran";
        r->outputs[i] = (*out)[at] & emu::golden_mask(8 * r->out_bytes);
      }
    }
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rec.gpu = info->name;
  rec.cc = fmt::format("{}.{}", info->cc_major, info->cc_minor);
  rec.cuda = fmt::format("{}.{}", info->driver_version / 1000, info->driver_version % 1000 / 10);
  rec.driver = kernel_driver_version();
  char date[32] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  rec.date = date;
  auto w = emu::write_golden_recording(where, rec);
  ASSERT_TRUE(w) << w.error().message;
  std::cout << fmt::format("recorded {} forms, {} instances in {:.2f} s on {} (cc {}, CUDA {}) to {}\n", rec.forms.size(),
                           rec.instance_count(), rec.seconds, rec.gpu, rec.cc, rec.cuda, where);
  std::cout << fmt::format("left out ({}): forms needing a newer target than {}\n", rec.skipped.size(), emu::kGoldenTarget);
  // What CI will say about this recording, at once (informative: the recording stands either way).
  std::cout << emu::check_golden(rec).text();
}

}  // namespace
}  // namespace ptxforge::gpu
