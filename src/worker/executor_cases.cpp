// A case's inputs and expected outputs: the host side of one (size set, seed) drawn from the
// task's generators, the reference run on plain buffers, and the worker's cache of both.
#include "worker/executor_detail.h"

#include <fmt/format.h>

namespace ptxforge::gpu::detail {

using task::Param;

std::map<std::string, CUdeviceptr> plain_buffers(const Driver& d, const Loaded& L, const HostCase& h, Allocations& mem,
                                                 const std::string& where) {
  std::map<std::string, CUdeviceptr> bufs;
  for (auto& p : L.task.params) {
    if (p.kind != Param::buffer) continue;
    size_t bytes = h.counts.at(p.name) * task::dtype_size(p.dtype);
    CUdeviceptr ptr = mem.alloc(bytes, p.name, where);
    if (auto it = h.in.find(p.name); it != h.in.end())
      check_cu(d.cuMemcpyHtoD(ptr, it->second.data(), bytes), "uploading an input", where);
    else check_cu(d.cuMemsetD8(ptr, 0, bytes), "clearing an output", where);
    bufs[p.name] = ptr;
  }
  return bufs;
}

std::map<std::string, std::vector<uint8_t>> download_outputs(const Driver& d, const Loaded& L, const HostCase& h,
                                                             const std::map<std::string, CUdeviceptr>& bufs,
                                                             const std::string& where) {
  std::map<std::string, std::vector<uint8_t>> out;
  for (auto& p : L.task.params) {
    if (!p.is_output()) continue;
    auto& v = out[p.name];
    v.resize(h.counts.at(p.name) * task::dtype_size(p.dtype));
    check_cu(d.cuMemcpyDtoH(v.data(), bufs.at(p.name), v.size()), "reading an output", where);
  }
  return out;
}

namespace {

// Runs the reference on plain buffers and returns its outputs; its memory is zeroed and freed
// on return, so that no later allocation (a candidate's buffer) finds the reference's outputs.
std::map<std::string, std::vector<uint8_t>> run_reference(const Driver& d, const Loaded& L, const HostCase& h,
                                                          const std::string& where) {
  Allocations mem(d, /*zero_before_free=*/true);
  auto bufs = plain_buffers(d, L, h, mem, where);
  ReferenceLaunch ref(L, h, bufs, where);
  ref.run(d, L, where);
  check_cu(d.cuCtxSynchronize(), "running the reference", where + ", reference");
  return download_outputs(d, L, h, bufs, where);
}

}  // namespace

std::shared_ptr<CachedCase> cached_case(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set,
                                        uint64_t seed, bool need_expected, const std::string& where) {
  constexpr size_t kCacheLimit = size_t{8} << 30;
  std::string key = fmt::format("{}|{}|{}|{}", job.task_dir, job.reference_cubin, set.name, seed);
  auto it = s.cases.find(key);
  std::shared_ptr<CachedCase> c;
  if (it != s.cases.end()) {
    c = std::static_pointer_cast<CachedCase>(it->second);
  } else {
    c = std::make_shared<CachedCase>();
    PhaseTimer t(s.phases.inputs_s);
    auto h = task::make_host_case(L.task, set, seed);
    if (!h) abort_with(FailureKind::spec, h.error().message, where);
    c->h = std::move(*h);
    size_t bytes = 0;
    for (auto& [n, v] : c->h.in) bytes += v.size();
    if (s.case_bytes + bytes > kCacheLimit) {
      s.cases.clear();
      s.case_bytes = 0;
    }
    s.case_bytes += bytes;
    s.cases[key] = c;
  }
  if (need_expected && !c->has_expected) {
    PhaseTimer t(s.phases.reference_s);
    c->expected = run_reference(*s.d, L, c->h, where);
    c->has_expected = true;
    for (auto& [n, v] : c->expected) s.case_bytes += v.size();
  }
  return c;
}

}  // namespace ptxforge::gpu::detail
