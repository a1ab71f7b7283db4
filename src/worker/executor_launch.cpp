// The executor's plumbing: failures thrown out of the nested loops (Abort), a job's modules
// loaded from their cubins, and the evaluation and launch of one kernel's grid.
#include "worker/executor_detail.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/text.h"

namespace ptxforge::gpu::detail {

[[noreturn]] void abort_with(FailureKind kind, std::string message, std::string where, bool fatal) {
  throw Abort{{kind, std::move(message), std::move(where)}, fatal};
}

void check_cu(CUresult r, const char* what, const std::string& where) {
  if (r == CUDA_SUCCESS) return;
  if (r == CUDA_ERROR_OUT_OF_MEMORY) abort_with(FailureKind::oom, fmt::format("{}: {}", what, describe(r)), where);
  abort_with(is_sticky(r) ? FailureKind::fault : FailureKind::launch, fmt::format("{}: {}", what, describe(r)), where,
             is_sticky(r));
}

std::string set_device_heap(Executor::State& s, size_t bytes) {
  if (s.heap_bytes && *s.heap_bytes == bytes) return "";
  // The smallest size the driver takes at or above `bytes`.
  std::string why;
  for (size_t want : {bytes, std::max<size_t>(bytes, size_t{1} << 16), std::max<size_t>(bytes, size_t{1} << 20)}) {
    CUresult r = s.d->cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, want);
    if (r == CUDA_SUCCESS) {
      s.heap_bytes = bytes;
      return "";
    }
    why = describe(r);
  }
  s.heap_bytes.reset();
  return fmt::format("the device malloc heap could not be set to {} bytes ({}): it keeps its size and its contents",
                     bytes, why);
}

namespace {

void load_module(const Driver& d, Module& mod, const std::string& cubin_path, const char* what) {
  auto image = read_file(cubin_path);
  if (!image) abort_with(FailureKind::load, image.error().message);
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
  mod.d = &d;
  CUresult r = d.cuModuleLoadDataEx(&mod.m, image->data(), 2, opts, vals);
  if (r != CUDA_SUCCESS)
    abort_with(FailureKind::load,
               fmt::format("loading the {} failed: {}{}{}", what, describe(r), log[0] ? "\n" : "", log));
}

CUfunction get_function(const Driver& d, CUmodule m, const std::string& name, const char* what) {
  CUfunction f = nullptr;
  if (d.cuModuleGetFunction(&f, m, name.c_str()) != CUDA_SUCCESS)
    abort_with(FailureKind::load, fmt::format("the {} has no kernel '{}'", what, name));
  return f;
}

}  // namespace

Dims evaluate_launch(const task::Launch& l, const task::Bindings& b, const std::string& where) {
  Dims d;
  auto g = l.grid.evaluate(b);
  auto k = l.block.evaluate(b);
  auto s = l.smem.evaluate_int(b);
  if (!g) abort_with(FailureKind::spec, "grid: " + g.error().message, where);
  if (!k) abort_with(FailureKind::spec, "block: " + k.error().message, where);
  if (!s) abort_with(FailureKind::spec, "smem: " + s.error().message, where);
  d.grid = *g;
  d.block = *k;
  d.smem = *s;
  if (l.has_cluster) {
    auto c = l.cluster.evaluate(b);
    if (!c) abort_with(FailureKind::spec, "cluster: " + c.error().message, where);
    d.cluster = *c;
  }
  for (auto v : d.grid)
    if (v > 0x7fffffff) abort_with(FailureKind::spec, fmt::format("grid dimension {} is too large", v), where);
  return d;
}

CUresult launch(const Driver& d, CUfunction f, const Dims& dims, void** params) {
  if (dims.smem > 48 * 1024) {
    CUresult r = d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(dims.smem));
    if (r != CUDA_SUCCESS) return r;
  }
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>(dims.grid[0]);
  cfg.gridDimY = static_cast<unsigned>(dims.grid[1]);
  cfg.gridDimZ = static_cast<unsigned>(dims.grid[2]);
  cfg.blockDimX = static_cast<unsigned>(dims.block[0]);
  cfg.blockDimY = static_cast<unsigned>(dims.block[1]);
  cfg.blockDimZ = static_cast<unsigned>(dims.block[2]);
  cfg.sharedMemBytes = static_cast<unsigned>(dims.smem);
  CUlaunchAttribute attr{};
  int64_t cluster_size = dims.cluster[0] * dims.cluster[1] * dims.cluster[2];
  if (cluster_size > 1) {
    if (cluster_size > 8) d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = static_cast<unsigned>(dims.cluster[0]);
    attr.value.clusterDim.y = static_cast<unsigned>(dims.cluster[1]);
    attr.value.clusterDim.z = static_cast<unsigned>(dims.cluster[2]);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  return d.cuLaunchKernelEx(&cfg, f, params, nullptr);
}

void load(const Driver& d, const Job& job, Loaded& L) {
  auto t = task::load_task(job.task_dir);
  if (!t) abort_with(FailureKind::spec, t.error().message);
  L.task = std::move(*t);
  if (job.launch.launches.empty()) abort_with(FailureKind::spec, "the job carries no launch");
  L.spec = job.launch;
  load_module(d, L.reference, job.reference_cubin, "reference");
  load_module(d, L.candidate, job.candidate_cubin, "candidate");
  L.reference_fn = get_function(d, L.reference.m, L.task.reference.entry, "reference");
  for (auto& l : L.spec.launches) L.launch_fns.push_back(get_function(d, L.candidate.m, l.entry, "candidate"));
}

}  // namespace ptxforge::gpu::detail
