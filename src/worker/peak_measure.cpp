#include "worker/peak_measure.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace ptxforge::gpu {

namespace {

// Device memory, modules and two events, released whatever happens.
struct Scope {
  const Driver& d;
  std::vector<CUdeviceptr> ptrs;
  CUmodule module = nullptr;
  std::vector<CUmodule> tensor_modules;
  CUevent start = nullptr, stop = nullptr;
  ~Scope() {
    for (auto p : ptrs) d.cuMemFree(p);
    if (module) d.cuModuleUnload(module);
    for (auto m : tensor_modules) d.cuModuleUnload(m);
    if (start) d.cuEventDestroy(start);
    if (stop) d.cuEventDestroy(stop);
  }
};

Status check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return ok_status();
  return Error{fmt::format("{}: {}", what, describe(r))};
}

#define PF_TRY(call, what) \
  if (auto s_ = check((call), what); !s_) return s_.error()

Result<CUfunction> function(const Driver& d, CUmodule m, const char* name) {
  CUfunction f = nullptr;
  PF_TRY(d.cuModuleGetFunction(&f, m, name), name);
  return f;
}

CUresult launch(const Driver& d, CUfunction f, unsigned blocks, unsigned threads, void** args) {
  CUlaunchConfig cfg{};
  cfg.gridDimX = blocks;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = threads;
  cfg.blockDimY = cfg.blockDimZ = 1;
  return d.cuLaunchKernelEx(&cfg, f, args, nullptr);
}

// The fastest of `trials` runs in seconds, after two warm-up runs.
Result<double> best_of(Scope& s, int trials, CUfunction f, unsigned blocks, unsigned threads, void** args) {
  const Driver& d = s.d;
  for (int i = 0; i < 2; ++i) PF_TRY(launch(d, f, blocks, threads, args), "warm-up launch");
  PF_TRY(d.cuCtxSynchronize(), "warm-up");
  double best = 1e30;
  for (int i = 0; i < trials; ++i) {
    PF_TRY(d.cuEventRecord(s.start, nullptr), "recording an event");
    PF_TRY(launch(d, f, blocks, threads, args), "launching a measuring kernel");
    PF_TRY(d.cuEventRecord(s.stop, nullptr), "recording an event");
    PF_TRY(d.cuEventSynchronize(s.stop), "timing");
    float ms = 0;
    PF_TRY(d.cuEventElapsedTime(&ms, s.start, s.stop), "reading an event");
    if (ms > 0) best = std::min(best, ms / 1e3);
  }
  if (best >= 1e30) return Error{"every timed run measured zero time"};
  return best;
}

// Each timed run of a tensor loop lasts about this long: like a large timed GEMM, long enough
// that launch overhead is noise, short enough that the best run is at the clock such a kernel
// gets (the gate's ceiling for it), not the lower clock of minutes under load.
constexpr double kTensorRunSeconds = 4e-3;

// One tensor loop's best rate over 5 runs, after calibrating its iterations to
// kTensorRunSeconds; an error says why it could not be measured.
Result<double> measure_tensor_loop(Scope& s, const DeviceInfo& info, TensorLoop loop, CUdeviceptr out) {
  const Driver& d = s.d;
  TensorLoopShape shape = tensor_loop_shape(loop);
  std::string ptx = tensor_loop_ptx(loop);
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
  CUmodule m = nullptr;
  if (CUresult r = d.cuModuleLoadDataEx(&m, ptx.c_str(), 2, opts, vals); r != CUDA_SUCCESS)
    return Error{fmt::format("loading: {} {}", describe(r), log)};
  s.tensor_modules.push_back(m);
  auto f = function(d, m, shape.entry.c_str());
  if (!f) return f.error();
  // Blocks per SM: 4 of the mma.sync loops (32 warps, 8 per scheduler, to hide the latency of
  // each chain), 1 of the wgmma loops (its two warpgroups hold 128 accumulators a thread).
  const unsigned blocks = static_cast<unsigned>(std::max(info.sms, 1)) * (loop.op == TensorOp::wgmma ? 1 : 4);
  unsigned iters = 64;
  void* args[] = {&out, &iters};
  auto probe = best_of(s, 1, *f, blocks, static_cast<unsigned>(shape.threads), args);
  if (!probe) return probe.error();
  iters = static_cast<unsigned>(std::clamp(iters * kTensorRunSeconds / *probe, 64.0, double{1 << 24}));
  auto t = best_of(s, 5, *f, blocks, static_cast<unsigned>(shape.threads), args);
  if (!t) return t.error();
  return shape.flops_per_iteration() * iters * blocks / *t;
}

}  // namespace

Result<DevicePeaks> measure_peaks(const Driver& d, const DeviceInfo& info) {
  Scope s{d, {}, nullptr, {}};
  std::string ptx = peak_kernels_ptx();
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
  if (CUresult r = d.cuModuleLoadDataEx(&s.module, ptx.c_str(), 2, opts, vals); r != CUDA_SUCCESS)
    return Error{fmt::format("loading the measuring kernels: {} {}", describe(r), log)};
  auto copy = function(d, s.module, "pf_copy");
  auto read = function(d, s.module, "pf_read");
  auto fma = function(d, s.module, "pf_fma");
  if (!copy) return copy.error();
  if (!read) return read.error();
  if (!fma) return fma.error();
  PF_TRY(d.cuEventCreate(&s.start, CU_EVENT_DEFAULT), "creating an event");
  PF_TRY(d.cuEventCreate(&s.stop, CU_EVENT_DEFAULT), "creating an event");

  // Streams over 512 MiB each (an eighth of memory on a small GPU): ten times any L2.
  size_t bytes = std::min<size_t>(size_t{512} << 20, info.memory_bytes / 8) / 16 * 16;
  if (bytes < (size_t{16} << 20)) return Error{"too little GPU memory to measure the bandwidth"};
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::max(info.sms, 1)) * 8;  // 2048 threads per SM
  CUdeviceptr src = 0, dst = 0, out = 0;
  PF_TRY(d.cuMemAlloc(&src, bytes), "allocating the source");
  s.ptrs.push_back(src);
  PF_TRY(d.cuMemAlloc(&dst, bytes), "allocating the destination");
  s.ptrs.push_back(dst);
  PF_TRY(d.cuMemAlloc(&out, size_t{blocks} * threads * 4), "allocating the results");
  s.ptrs.push_back(out);
  PF_TRY(d.cuMemsetD32(src, 0x3F800000u, bytes / 4), "filling the source");
  uint64_t n16 = bytes / 16;

  DevicePeaks p;
  p.device = info.name;
  p.driver_version = info.driver_version;
  {
    void* args[] = {&dst, &src, &n16};
    auto t = best_of(s, 10, *copy, blocks, threads, args);
    if (!t) return t.error();
    p.copy_bytes_per_s = 2.0 * static_cast<double>(bytes) / *t;  // each byte read once and written once
  }
  {
    void* args[] = {&out, &src, &n16};
    auto t = best_of(s, 10, *read, blocks, threads, args);
    if (!t) return t.error();
    p.read_bytes_per_s = static_cast<double>(bytes) / *t;
  }
  {
    unsigned iters = 4096;
    void* args[] = {&out, &iters};
    auto t = best_of(s, 5, *fma, blocks, threads, args);
    if (!t) return t.error();
    p.fma_flops_per_s = 2.0 * kFmaPerIteration * iters * static_cast<double>(blocks) * threads / *t;
  }
  // The tensor loops this GPU runs. One that cannot be measured is left out and named in
  // tensor_note (the gate then falls back to the table for its type, and says so).
  std::vector<std::string> missing;
  for (TensorLoop loop : kTensorLoops) {
    if (!tensor_loop_runs_on(loop, info.cc_major, info.cc_minor)) continue;
    auto r = measure_tensor_loop(s, info, loop, out);
    if (r) p.tensor.push_back({loop.op, loop.type, *r});
    else missing.push_back(fmt::format("{} {}: {}", to_string(loop.op), to_string(loop.type), r.error().message));
  }
  for (auto& m : missing) p.tensor_note += (p.tensor_note.empty() ? "" : "; ") + m;
  return p;
}

}  // namespace ptxforge::gpu
