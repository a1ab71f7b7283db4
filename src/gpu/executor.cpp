#include "gpu/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <functional>
#include <map>

#include "gpu/cubin_globals.h"
#include "gpu/driver.h"
#include "gpu/guarded_memory_cuda.h"
#include "gpu/input_check.h"
#include "gpu/library_baseline.h"
#include "gpu/peak_measure.h"
#include "gpu/tensor_map.h"
#include "gpu/timing_plan.h"
#include "task/buffers.h"
#include "task/launch_spec.h"
#include "task/seeds.h"
#include "util/text.h"

namespace ptxforge::gpu {

using task::GuardedLayout;
using task::Param;

struct Executor::State {
  const Driver* d = nullptr;
  CUcontext ctx = nullptr;
  DeviceInfo info;
  CUdeviceptr flush = 0;  // written before every timed trial to evict the L2
  size_t flush_bytes = 0;
  std::map<std::string, std::shared_ptr<void>> cases;  // CachedCase, a type local to this file
  size_t case_bytes = 0;
  std::unique_ptr<LibraryBaseline> lib;
  std::optional<std::string> lib_error;
  // Guard pages (gpu/guarded_memory.h): the driver's virtual-memory calls, or null and why not.
  std::unique_ptr<VmmApi> vmm;
  std::string vmm_note;
  // The job in hand: how its candidate buffers are placed, the buffer whose guard windows a
  // locate job maps, and whether a case fell back to canaries.
  Placement placement = Placement::guarded;
  std::string open_buffer;
  bool fell_back = false;
  VerifyPhases phases;  // the job in hand's verify time, by phase
  // The input check's kernel (gpu/input_check.h), loaded on first use; null and why when it
  // cannot be, and the inputs are then read back to the host instead.
  std::optional<InputCheck> input_check;
  std::optional<std::string> input_check_error;
  const InputCheck* input_checker() {
    if (!input_check && !input_check_error) {
      auto c = InputCheck::create(*d, info.sms);
      if (c) input_check.emplace(std::move(*c));
      else input_check_error = c.error().message;
    }
    return input_check ? &*input_check : nullptr;
  }
  // The library baseline, created on first use; nullptr (and `why`) when unavailable.
  LibraryBaseline* library(std::string& why) {
    if (!lib && !lib_error) {
      auto l = LibraryBaseline::create(*d);
      if (l) lib = std::move(*l);
      else lib_error = l.error().message;
    }
    if (lib_error) why = "unavailable: " + *lib_error;
    return lib.get();
  }
};

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Adds the wall time of its scope to one phase's total (VerifyPhases), exception or not.
class PhaseTimer {
 public:
  explicit PhaseTimer(double& total) : total_(total), t0_(now_s()) {}
  ~PhaseTimer() { total_ += now_s() - t0_; }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double& total_;
  double t0_;
};

// A failure thrown out of the nested loops; caught once in Executor::run.
struct Abort {
  Failure failure;
  bool fatal = false;
};

[[noreturn]] void abort_with(FailureKind kind, std::string message, std::string where = "", bool fatal = false) {
  throw Abort{{kind, std::move(message), std::move(where)}, fatal};
}

void check_cu(CUresult r, const char* what, const std::string& where) {
  if (r == CUDA_SUCCESS) return;
  if (r == CUDA_ERROR_OUT_OF_MEMORY) abort_with(FailureKind::oom, fmt::format("{}: {}", what, describe(r)), where);
  abort_with(is_sticky(r) ? FailureKind::fault : FailureKind::launch, fmt::format("{}: {}", what, describe(r)), where,
             is_sticky(r));
}

// Device memory released at the end of a scope, even when a case aborts.
class Allocations {
 public:
  explicit Allocations(const Driver& d) : d_(d) {}
  ~Allocations() {
    for (auto p : ptrs_) d_.cuMemFree(p);
  }
  CUdeviceptr alloc(size_t bytes, const std::string& what, const std::string& where) {
    CUdeviceptr p = 0;
    check_cu(d_.cuMemAlloc(&p, std::max<size_t>(bytes, 1)), fmt::format("allocating {} ({} bytes)", what, bytes).c_str(), where);
    ptrs_.push_back(p);
    return p;
  }

 private:
  const Driver& d_;
  std::vector<CUdeviceptr> ptrs_;
};

struct Module {
  const Driver* d = nullptr;
  CUmodule m = nullptr;
  ~Module() {
    if (m) d->cuModuleUnload(m);
  }
};

void load_module(const Driver& d, Module& mod, const std::string& cubin_path, const char* what) {
  auto image = read_file(cubin_path);
  if (!image) abort_with(FailureKind::load, image.error().message);
  char log[8192] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
  mod.d = &d;
  CUresult r = d.cuModuleLoadDataEx(&mod.m, image->data(), 2, opts, vals);
  if (r != CUDA_SUCCESS) abort_with(FailureKind::load, fmt::format("loading the {} failed: {}{}{}", what, describe(r), log[0] ? "\n" : "", log));
}

CUfunction get_function(const Driver& d, CUmodule m, const std::string& name, const char* what) {
  CUfunction f = nullptr;
  if (d.cuModuleGetFunction(&f, m, name.c_str()) != CUDA_SUCCESS)
    abort_with(FailureKind::load, fmt::format("the {} has no kernel '{}'", what, name));
  return f;
}

struct Dims {
  std::array<int64_t, 3> grid, block, cluster{1, 1, 1};
  int64_t smem = 0;
};

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

// Everything one job needs, loaded once.
struct Loaded {
  task::Task task;
  task::LaunchSpec spec;
  Module candidate, reference;
  std::vector<CUfunction> launch_fns;  // one per spec launch
  CUfunction reference_fn = nullptr;
};

// The task is read from its folder; the launch spec comes resolved in the job (the parent
// parsed and checked it against the task and the PTX), so the worker never reads the PTX.
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

// The host side of one (size set, seed): element counts, input bytes, scalar bytes.
struct HostCase {
  task::Bindings symbols;
  std::map<std::string, size_t> counts;            // buffer and scratch elements
  std::map<std::string, task::HostBytes> in;       // initial contents of in/inout buffers
  std::map<std::string, std::array<uint8_t, 8>> scalars;
  std::map<std::string, std::vector<int64_t>> shapes;
};

HostCase make_host_case(const Loaded& L, const task::SizeSet& set, uint64_t seed, const std::string& where) {
  HostCase h;
  h.symbols = set.values;
  for (size_t i = 0; i < L.task.params.size(); ++i) {
    const Param& p = L.task.params[i];
    if (p.kind == Param::buffer) {
      auto n = p.count.evaluate_int(h.symbols);
      if (!n) abort_with(FailureKind::spec, fmt::format("count of '{}': {}", p.name, n.error().message), where);
      h.counts[p.name] = static_cast<size_t>(*n);
      if (p.role != task::Role::out) {
        auto& bytes = h.in[p.name];
        bytes.resize(static_cast<size_t>(*n) * task::dtype_size(p.dtype));
        task::fill_input(bytes.data(), p.dtype, static_cast<size_t>(*n), L.task.init_for(set, p), seed, i);
      }
      for (auto& e : p.shape) {
        auto v = e.evaluate_int(h.symbols);
        if (v) h.shapes[p.name].push_back(*v);
      }
    } else if (p.kind == Param::scalar) {
      auto v = p.value.evaluate(h.symbols);
      if (!v) abort_with(FailureKind::spec, fmt::format("value of '{}': {}", p.name, v.error().message), where);
      std::array<uint8_t, 8> b{};
      task::store_element(b.data(), p.dtype, 0, v->as_double());
      h.scalars[p.name] = b;
    }
  }
  return h;
}

// Element counts of the candidate's scratch buffers (they depend on its spec, not the task).
std::map<std::string, size_t> scratch_counts(const Loaded& L, const task::Bindings& symbols, const std::string& where) {
  std::map<std::string, size_t> out;
  for (auto& sc : L.spec.scratch) {
    auto n = sc.count.evaluate_int(symbols);
    if (!n) abort_with(FailureKind::spec, fmt::format("count of scratch '{}': {}", sc.name, n.error().message), where);
    out[sc.name] = static_cast<size_t>(*n);
  }
  return out;
}

size_t elem_size_of(const Loaded& L, const std::string& name) {
  if (const Param* p = L.task.find_param(name)) return task::dtype_size(p->dtype);
  for (auto& sc : L.spec.scratch)
    if (sc.name == name) return task::dtype_size(sc.dtype);
  return 1;
}

// Kernel arguments: storage that outlives the launch, and the pointer array cuLaunchKernelEx takes.
struct ArgPack {
  std::vector<std::array<uint8_t, 128>> storage;
  std::vector<void*> ptrs;
  void build(const std::vector<std::string>& names, const std::map<std::string, CUdeviceptr>& buffers,
             const HostCase& h, const std::map<std::string, CUtensorMap>& maps) {
    storage.assign(names.size(), {});
    ptrs.clear();
    for (size_t i = 0; i < names.size(); ++i) {
      auto& slot = storage[i];
      if (auto b = buffers.find(names[i]); b != buffers.end()) std::memcpy(slot.data(), &b->second, 8);
      else if (auto s = h.scalars.find(names[i]); s != h.scalars.end()) std::memcpy(slot.data(), s->second.data(), 8);
      else if (auto m = maps.find(names[i]); m != maps.end()) std::memcpy(slot.data(), &m->second, 128);
      ptrs.push_back(slot.data());
    }
  }
};

// Plain device buffers for every buffer parameter: inputs uploaded, outputs zeroed.
std::map<std::string, CUdeviceptr> plain_buffers(const Driver& d, const Loaded& L, const HostCase& h, Allocations& mem,
                                                 const std::string& where) {
  std::map<std::string, CUdeviceptr> bufs;
  for (auto& p : L.task.params) {
    if (p.kind != Param::buffer) continue;
    size_t bytes = h.counts.at(p.name) * task::dtype_size(p.dtype);
    CUdeviceptr ptr = mem.alloc(bytes, p.name, where);
    if (auto it = h.in.find(p.name); it != h.in.end())
      check_cu(d.cuMemcpyHtoD(ptr, it->second.data(), bytes), "uploading an input", where);
    else
      check_cu(d.cuMemsetD8(ptr, 0, bytes), "clearing an output", where);
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

// Runs the reference on plain buffers and returns its outputs; its memory is freed on return.
// The reference kernel's launch over `bufs`: its arguments are the task's parameters in order.
struct ReferenceLaunch {
  ArgPack args;
  Dims dims;
  ReferenceLaunch(const Loaded& L, const HostCase& h, const std::map<std::string, CUdeviceptr>& bufs, const std::string& where) {
    std::vector<std::string> names;
    for (auto& p : L.task.params) names.push_back(p.name);
    args.build(names, bufs, h, {});
    dims = evaluate_launch(L.task.reference, h.symbols, where);
  }
  void run(const Driver& d, const Loaded& L, const std::string& where) {
    check_cu(launch(d, L.reference_fn, dims, args.ptrs.data()), "launching the reference", where + ", reference");
  }
};

std::map<std::string, std::vector<uint8_t>> run_reference(const Driver& d, const Loaded& L, const HostCase& h,
                                                          const std::string& where) {
  Allocations mem(d);
  auto bufs = plain_buffers(d, L, h, mem, where);
  ReferenceLaunch ref(L, h, bufs, where);
  ref.run(d, L, where);
  check_cu(d.cuCtxSynchronize(), "running the reference", where + ", reference");
  return download_outputs(d, L, h, bufs, where);
}

// The candidate's buffers: guarded, inputs uploaded, outputs poisoned, scratch zeroed.
// Canaries: mapped bytes right before and right after a buffer, filled with kCanaryByte.
struct CanarySpans {
  CUdeviceptr head = 0;
  size_t head_len = 0;
  CUdeviceptr tail = 0;
  size_t tail_len = 0;
};

struct CandidateBuffers {
  std::map<std::string, CUdeviceptr> data;
  std::map<std::string, size_t> bytes;
  std::map<std::string, CanarySpans> canaries;  // none for exact placement
  std::map<std::string, CUtensorMap> maps;
  std::unique_ptr<GuardedCase> guarded;         // the reservation, with guard pages
  std::vector<std::string> guarded_names;       // the buffers in it, in slot order
  // Device copies of the read-only inputs taken before the candidate ran, and the kernel that
  // compares them with the buffers afterwards (snapshot_inputs); empty: read them back.
  std::map<std::string, CUdeviceptr> pristine;
  const InputCheck* input_check = nullptr;
};

// Places every buffer of the case with guard pages in one reservation; false (and guard
// pages off for the rest of the worker's life) when the driver refuses for another reason
// than memory.
bool place_guarded(Executor::State& s, const std::vector<std::string>& names, const std::vector<size_t>& sizes,
                   CandidateBuffers& cb, const std::string& where) {
  std::optional<size_t> open;
  if (!s.open_buffer.empty()) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == s.open_buffer) open = i;
    if (!open) abort_with(FailureKind::spec, fmt::format("no buffer named '{}' to open", s.open_buffer), where);
  }
  auto plan = plan_guards(sizes, s.vmm->granularity(), open);
  if (!plan) abort_with(FailureKind::spec, "placing buffers with guard pages: " + plan.error().message, where);
  VmmFailure why;
  cb.guarded = GuardedCase::place(*s.vmm, std::move(*plan), why);
  if (cb.guarded) {
    cb.guarded_names = names;
    return true;
  }
  if (why.out_of_memory) abort_with(FailureKind::oom, "placing buffers with guard pages: " + why.message, where);
  s.vmm.reset();
  s.vmm_note = "guard pages failed (" + why.message + "); plain allocations with canaries instead";
  return false;
}

void setup_candidate(Executor::State& s, const Loaded& L, const HostCase& h, Allocations& mem, CandidateBuffers& cb,
                     const std::string& where) {
  const Driver& d = *s.d;
  std::map<std::string, size_t> counts = h.counts;
  counts.merge(scratch_counts(L, h.symbols, where));
  std::vector<std::string> names;
  std::vector<size_t> sizes;
  for (auto& [name, count] : counts) {
    names.push_back(name);
    sizes.push_back(count * elem_size_of(L, name));
  }
  bool guard_pages = s.placement == Placement::guarded && s.vmm && place_guarded(s, names, sizes, cb, where);
  if (s.placement == Placement::guarded && !guard_pages) s.fell_back = true;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    size_t bytes = sizes[i];
    CUdeviceptr data = 0;
    if (guard_pages) {
      const GuardSlot& slot = cb.guarded->plan().slots[i];
      CUdeviceptr map = cb.guarded->map_start(i);
      data = cb.guarded->data(i);
      check_cu(d.cuMemsetD8(map, task::kCanaryByte, slot.map_bytes), "writing canaries", where);
      cb.canaries[name] = {map, slot.head_canary(), data + bytes, slot.tail_canary()};
    } else if (s.placement == Placement::guarded) {
      GuardedLayout layout{bytes};
      CUdeviceptr base = mem.alloc(layout.total(), name, where);
      check_cu(d.cuMemsetD8(base, task::kCanaryByte, layout.total()), "writing guard regions", where);
      data = base + layout.data_offset();
      cb.canaries[name] = {base, GuardedLayout::kGuard, base + layout.tail_offset(), GuardedLayout::kGuard};
    } else {
      data = mem.alloc(bytes, name, where);  // exact: the sanitizer sees the buffer's own bounds
    }
    const Param* p = L.task.find_param(name);
    if (auto it = h.in.find(name); it != h.in.end()) {
      check_cu(d.cuMemcpyHtoD(data, it->second.data(), bytes), "uploading an input", where);
    } else if (p && s.placement == Placement::exact_unwritten) {
      // left as allocated: initcheck reports a read of an output before the kernel wrote it
    } else if (p && bytes % 4 == 0) {
      check_cu(d.cuMemsetD32(data, task::kPoisonWord, bytes / 4), "poisoning an output", where);
    } else if (p) {
      std::vector<uint8_t> poison(bytes);
      task::fill_poison(poison.data(), bytes);
      check_cu(d.cuMemcpyHtoD(data, poison.data(), bytes), "poisoning an output", where);
    } else {
      check_cu(d.cuMemsetD8(data, 0, bytes), "zeroing a scratch buffer", where);
    }
    cb.data[name] = data;
    cb.bytes[name] = bytes;
  }
  for (auto& choice : L.spec.tensor_maps) {
    const Param* tm = L.task.find_param(choice.name);
    const Param* over = L.task.find_param(tm->over);
    auto m = encode_tensor_map(d, *tm, choice, over->dtype, cb.data.at(over->name), h.symbols);
    if (!m) abort_with(FailureKind::spec, fmt::format("tensor map '{}': {}", choice.name, m.error().message), where);
    cb.maps[choice.name] = *m;
  }
}

// Before the candidate's launch in verify: a device copy of each read-only input, for the input
// check on the GPU (gpu/input_check.h). Timed trials copy fresh inputs in before each trial, so
// they keep the host comparison against that trial's inputs.
void snapshot_inputs(Executor::State& s, const Loaded& L, const HostCase& h, Allocations& mem, CandidateBuffers& cb,
                     const std::string& where) {
  const InputCheck* check = s.input_checker();
  if (!check) return;
  for (auto& [name, initial] : h.in) {
    if (L.task.find_param(name)->role != task::Role::in) continue;
    CUdeviceptr copy = mem.alloc(initial.size(), fmt::format("a copy of input '{}'", name), where);
    check_cu(s.d->cuMemcpyDtoD(copy, cb.data.at(name), initial.size()), "copying an input", where);
    cb.pristine[name] = copy;
  }
  cb.input_check = check;
}

void run_candidate_launches(const Driver& d, const Loaded& L, const HostCase& h, const CandidateBuffers& cb,
                            const std::string& where, bool sync) {
  for (size_t i = 0; i < L.spec.launches.size(); ++i) {
    auto& l = L.spec.launches[i];
    std::string at = L.spec.launches.size() > 1 ? fmt::format("{}, launch {} ({})", where, i + 1, l.entry) : where;
    Dims dims = evaluate_launch(l, h.symbols, at);
    ArgPack args;
    args.build(l.args, cb.data, h, cb.maps);
    check_cu(launch(d, L.launch_fns[i], dims, args.ptrs.data()), "launching the candidate", at);
  }
  if (sync) check_cu(d.cuCtxSynchronize(), "running the candidate", where);
}

CaseResult check_candidate(const Driver& d, const Loaded& L, const HostCase& h, const CandidateBuffers& cb,
                           const std::map<std::string, std::vector<uint8_t>>& expected, const std::string& where) {
  CaseResult cr;
  for (auto& [name, span] : cb.canaries) {
    std::vector<uint8_t> head(span.head_len), tail(span.tail_len);
    if (!head.empty()) check_cu(d.cuMemcpyDtoH(head.data(), span.head, head.size()), "reading canaries", where);
    if (!tail.empty()) check_cu(d.cuMemcpyDtoH(tail.data(), span.tail, tail.size()), "reading canaries", where);
    if (auto v = task::check_canaries(head.data(), head.size(), tail.data(), tail.size(), cb.bytes.at(name)))
      cr.problems.push_back(v->describe(name, elem_size_of(L, name)));
  }
  for (auto& [name, initial] : h.in) {
    const Param* p = L.task.find_param(name);
    if (p->role != task::Role::in) continue;
    std::optional<size_t> changed;  // the first changed byte
    if (auto it = cb.pristine.find(name); it != cb.pristine.end()) {
      check_cu(cb.input_check->first_difference(cb.data.at(name), it->second, initial.size(), changed),
               "comparing an input with its copy", where);
    } else {
      task::HostBytes now(initial.size());
      check_cu(d.cuMemcpyDtoH(now.data(), cb.data.at(name), now.size()), "reading an input back", where);
      auto diff = std::mismatch(now.begin(), now.end(), initial.begin());
      if (diff.first != now.end()) changed = static_cast<size_t>(diff.first - now.begin());
    }
    if (changed)
      cr.problems.push_back(
          fmt::format("input '{}' was modified (first changed element: {})", name, *changed / task::dtype_size(p->dtype)));
  }
  for (auto& p : L.task.params) {
    if (!p.is_output()) continue;
    task::HostBytes actual(cb.bytes.at(p.name));  // every byte is overwritten by the download
    check_cu(d.cuMemcpyDtoH(actual.data(), cb.data.at(p.name), actual.size()), "reading an output", where);
    std::vector<int64_t> shape;
    if (auto it = h.shapes.find(p.name); it != h.shapes.end()) shape = it->second;
    cr.outputs.push_back(task::compare_output(p.name, expected.at(p.name).data(), actual.data(), p.dtype,
                                              h.counts.at(p.name), L.task.tolerance_for(p.name), shape));
  }
  cr.pass = cr.problems.empty();
  for (auto& c : cr.outputs) cr.pass = cr.pass && c.pass;
  return cr;
}

// Inputs and the reference's outputs for (task, reference, size set, seed), kept by the
// worker: the next candidate run with the same base seed (several candidates in one
// `ptxforge run`, the trivial-output check) only runs itself. A compile round draws a fresh
// seed, so its inputs are new.
struct CachedCase {
  HostCase h;
  std::map<std::string, std::vector<uint8_t>> expected;
  bool has_expected = false;
};

std::shared_ptr<CachedCase> cached_case(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set,
                                        uint64_t seed, bool need_expected, const std::string& where);

// `seed_index` is 1..N for the verify seeds (named in `where`), 0 for the launch after timing.
CaseResult verify_case(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set, uint64_t seed,
                       int seed_index) {
  const Driver& d = *s.d;
  std::string where = seed_index > 0    ? fmt::format("size set '{}', seed {}", set.name, seed_index)
                      : seed_index == 0 ? fmt::format("size set '{}', after timing", set.name)
                                        : fmt::format("size set '{}'", set.name);
  std::optional<std::vector<std::string>> placed;  // set once the candidate's buffers exist
  try {
    auto c = cached_case(s, L, job, set, seed, true, where);
    Allocations mem(d);
    CandidateBuffers cb;
    {
      PhaseTimer t(s.phases.candidate_s);
      setup_candidate(s, L, c->h, mem, cb, where);
      placed = cb.guarded_names;
      snapshot_inputs(s, L, c->h, mem, cb, where);
      run_candidate_launches(d, L, c->h, cb, where, true);
    }
    PhaseTimer t(s.phases.compare_s);
    CaseResult cr = check_candidate(d, L, c->h, cb, c->expected, where);
    cr.size_set = set.name;
    cr.shown = set.shown;
    cr.seed = seed;
    cr.seed_index = seed_index;
    return cr;
  } catch (Abort& a) {
    a.failure.held_back = !set.shown;  // `where` names the set: printers for a model leave it out
    if (placed && a.fatal && a.failure.message.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos) {
      // The candidate touched unmapped memory: with guard pages, a buffer's guard region.
      a.failure.out_of_bounds = true;
      a.failure.message = "out-of-bounds access: " + a.failure.message;
      a.failure.size_set = set.name;
      a.failure.seed = seed;
      a.failure.guarded = *placed;
    }
    throw;
  }
}


// ---- Timing (docs/design.md, "Timing"). Every trial starts from fresh state, written on the
// stream before the L2 flush and the start event; the events bracket the kernel launches
// alone. Some trials' outputs are saved right after their stop event and checked afterwards.

// The input sets one size set is timed on: drawn on the host from seeds derived from the
// run's seed, uploaded once to staging buffers, copied into the kernel's buffers before each
// trial. A kernel that remembers the inputs it saw, or computes only on some, meets another set.
struct InputSets {
  std::vector<uint64_t> seeds;
  std::vector<std::shared_ptr<CachedCase>> cases;          // host inputs (expected outputs once checked)
  std::vector<std::map<std::string, CUdeviceptr>> staged;  // per set: in/inout buffer -> its device copy
  int count() const { return static_cast<int>(seeds.size()); }
};

InputSets stage_input_sets(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set,
                           Allocations& mem, const std::string& where) {
  const Driver& d = *s.d;
  uint64_t key = task::size_set_key(set.name);
  auto seed_of = [&](int j) {
    return task::derive_seed(job.seed, task::SeedUse::timing, key, static_cast<uint64_t>(j));
  };
  InputSets in;
  auto first = cached_case(s, L, job, set, seed_of(0), false, where);
  size_t per_set = 0;
  for (auto& [name, bytes] : first->h.in) per_set += bytes.size();
  size_t free_bytes = 0, total_bytes = 0;
  int sets = d.cuMemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS ? timing_input_sets(per_set, free_bytes)
                                                                       : kTimingInputSets;
  for (int j = 0; j < sets; ++j) {
    in.seeds.push_back(seed_of(j));
    in.cases.push_back(j == 0 ? first : cached_case(s, L, job, set, in.seeds.back(), false, where));
    auto& staged = in.staged.emplace_back();
    for (auto& [name, bytes] : in.cases.back()->h.in) {
      CUdeviceptr p = mem.alloc(bytes.size(), name + " (timing input set)", where);
      check_cu(d.cuMemcpyHtoD(p, bytes.data(), bytes.size()), "uploading a timing input set", where);
      staged[name] = p;
    }
  }
  return in;
}

// What is written into one set of kernel buffers before every trial: the trial's input set
// copied in (in and inout buffers), outputs poisoned (the candidate) or zeroed (the reference
// and the library, as verify gives them theirs), scratch zeroed, and the candidate's .global
// variables restored to their loaded values.
struct Preamble {
  struct Copy {
    CUdeviceptr dst;
    std::string name;
    size_t bytes;
  };
  struct Restore {
    CUdeviceptr dst, saved;
    size_t bytes;
  };
  const InputSets* sets = nullptr;
  std::vector<Copy> inputs;
  std::vector<std::pair<CUdeviceptr, size_t>> poison, zero;
  std::vector<Restore> globals;
  CUdeviceptr poison_source = 0;  // the poison pattern, for outputs whose size is not a multiple of 4

  void enqueue(const Driver& d, int set, const std::string& where) const {
    const auto& staged = sets->staged[static_cast<size_t>(set)];
    for (auto& c : inputs)
      check_cu(d.cuMemcpyDtoDAsync(c.dst, staged.at(c.name), c.bytes, nullptr), "refreshing an input", where);
    for (auto& [p, bytes] : poison) {
      if (bytes % 4 == 0)
        check_cu(d.cuMemsetD32Async(p, task::kPoisonWord, bytes / 4, nullptr), "poisoning an output", where);
      else check_cu(d.cuMemcpyDtoDAsync(p, poison_source, bytes, nullptr), "poisoning an output", where);
    }
    for (auto& [p, bytes] : zero) check_cu(d.cuMemsetD8Async(p, 0, bytes, nullptr), "zeroing a buffer", where);
    for (auto& g : globals)
      check_cu(d.cuMemcpyDtoDAsync(g.dst, g.saved, g.bytes, nullptr), "restoring a .global variable", where);
  }
};

Preamble candidate_preamble(const Driver& d, const Loaded& L, const InputSets& sets, const CandidateBuffers& cb,
                            Allocations& mem, const std::string& where) {
  Preamble pre;
  pre.sets = &sets;
  size_t odd = 0;
  for (auto& [name, data] : cb.data) {
    size_t bytes = cb.bytes.at(name);
    if (sets.cases[0]->h.in.count(name)) {
      pre.inputs.push_back({data, name, bytes});
    } else if (L.task.find_param(name)) {
      pre.poison.push_back({data, bytes});
      if (bytes % 4) odd = std::max(odd, bytes);
    } else {
      pre.zero.push_back({data, bytes});  // the candidate's scratch
    }
  }
  if (odd) {
    std::vector<uint8_t> pattern(odd);
    task::fill_poison(pattern.data(), odd);
    pre.poison_source = mem.alloc(odd, "poison pattern", where);
    check_cu(d.cuMemcpyHtoD(pre.poison_source, pattern.data(), odd), "uploading the poison pattern", where);
  }
  return pre;
}

Preamble plain_preamble(const Loaded& L, const InputSets& sets, const HostCase& h,
                        const std::map<std::string, CUdeviceptr>& bufs) {
  Preamble pre;
  pre.sets = &sets;
  for (auto& p : L.task.params) {
    if (p.kind != Param::buffer) continue;
    size_t bytes = h.counts.at(p.name) * task::dtype_size(p.dtype);
    if (h.in.count(p.name)) pre.inputs.push_back({bufs.at(p.name), p.name, bytes});
    else pre.zero.push_back({bufs.at(p.name), bytes});
  }
  return pre;
}

// The instrumented copy's counters (ptx/instrument.h) after a case, cleared for the next one:
// what the warps that executed each required family's instructions added.
std::vector<uint64_t> take_executed(const Driver& d, const Loaded& L, int slots) {
  CUdeviceptr p = 0;
  size_t bytes = 0;
  check_cu(d.cuModuleGetGlobal(&p, &bytes, L.candidate.m, "__ptxforge_executed"), "finding the executed-instruction counters",
           "the instrumented candidate");
  if (bytes != sizeof(uint64_t) * static_cast<size_t>(slots))
    abort_with(FailureKind::spec, fmt::format("the counters hold {} bytes, not {} slots", bytes, slots));
  std::vector<uint64_t> counts(static_cast<size_t>(slots));
  check_cu(d.cuCtxSynchronize(), "finishing the instrumented runs", "the instrumented candidate");
  check_cu(d.cuMemcpyDtoH(counts.data(), p, bytes), "reading the executed-instruction counters", "the instrumented candidate");
  check_cu(d.cuMemsetD8(p, 0, bytes), "clearing the executed-instruction counters", "the instrumented candidate");
  return counts;
}

// The candidate's .global variables as loaded, before its first launch in this job, saved so
// that every trial starts from them. Each is found by its name in the cubin; one the driver
// does not resolve is placed from a resolved one of the same section (a section is loaded as
// one block), else it is named in `notes` and only the checked trials guard against it.
std::vector<Preamble::Restore> save_globals(const Driver& d, const Loaded& L, const Job& job, Allocations& mem,
                                            std::vector<std::string>& notes) {
  const std::string where = "saving the candidate's .global variables";
  auto image = read_file(job.candidate_cubin);
  if (!image) abort_with(FailureKind::load, image.error().message, where);
  std::vector<Preamble::Restore> out;
  auto sections = cubin_global_sections(*image);
  if (!sections) {
    notes.push_back("the candidate's .global variables could not be read from its cubin, so they are not restored between "
                    "timed trials: " + sections.error().message);
    return out;
  }
  for (auto& sec : *sections) {
    std::optional<CUdeviceptr> base;
    std::vector<const GlobalSymbol*> unresolved;
    for (auto& sym : sec.symbols) {
      if (sym.size == 0) continue;
      CUdeviceptr p = 0;
      size_t bytes = 0;
      if (d.cuModuleGetGlobal(&p, &bytes, L.candidate.m, sym.name.c_str()) == CUDA_SUCCESS && p != 0 && bytes > 0) {
        base = p - sym.offset;
        out.push_back({p, 0, bytes});
      } else {
        unresolved.push_back(&sym);
      }
    }
    for (const GlobalSymbol* sym : unresolved) {
      if (base) out.push_back({*base + sym->offset, 0, sym->size});
      else
        notes.push_back(fmt::format("the .global variable '{}' could not be restored between timed trials", sym->name));
    }
  }
  for (auto& r : out) {
    r.saved = mem.alloc(r.bytes, ".global variable copy", where);
    check_cu(d.cuMemcpyDtoD(r.saved, r.dst, r.bytes), "saving a .global variable", where);
  }
  return out;
}

struct TrialRun {
  TimingStats stats;
  int trials = 0;
  std::vector<int> set_of_trial;
};

// Times `body` (one run of the kernel or kernels) with CUDA events around it alone. Before
// each trial, on the same stream: the preamble, then the L2 flush (so the fresh inputs are
// not left in the L2). After the stop event, `save(slot)` when the sampler picks the trial.
template <typename Body>
TrialRun time_runs(Executor::State& s, Body&& body, const Preamble& pre, Rotation& rot, TrialSampler* sampler,
                   const std::function<void(int)>& save, int max_trials, double budget_s, const std::string& where) {
  const Driver& d = *s.d;
  CUevent start, stop;
  check_cu(d.cuEventCreate(&start, CU_EVENT_DEFAULT), "creating an event", where);
  check_cu(d.cuEventCreate(&stop, CU_EVENT_DEFAULT), "creating an event", where);
  struct Events {
    const Driver& d;
    CUevent a, b;
    ~Events() {
      d.cuEventDestroy(a);
      d.cuEventDestroy(b);
    }
  } guard{d, start, stop};
  for (int i = 0; i < 3; ++i) {  // warm-up: module load, instruction cache, clocks
    pre.enqueue(d, i % rot.sets(), where);
    body();
  }
  check_cu(d.cuCtxSynchronize(), "warm-up", where);
  TrialRun run;
  std::vector<double> samples;
  double t0 = now_s();
  for (int trial = 0; trial < max_trials && (trial < 5 || now_s() - t0 < budget_s); ++trial) {
    int set = rot.set_for(trial);
    pre.enqueue(d, set, where);
    check_cu(d.cuMemsetD32Async(s.flush, static_cast<unsigned>(trial), s.flush_bytes / 4, nullptr), "flushing the L2", where);
    check_cu(d.cuEventRecord(start, nullptr), "recording an event", where);
    body();
    check_cu(d.cuEventRecord(stop, nullptr), "recording an event", where);
    if (sampler)
      if (int slot = sampler->offer(trial); slot >= 0) save(slot);
    check_cu(d.cuEventSynchronize(stop), "timing", where);
    float ms = 0;
    check_cu(d.cuEventElapsedTime(&ms, start, stop), "reading an event", where);
    samples.push_back(ms);
    run.set_of_trial.push_back(set);
  }
  check_cu(d.cuCtxSynchronize(), "timing", where);  // the last saves
  run.trials = static_cast<int>(samples.size());
  run.stats = summarize(std::move(samples));
  return run;
}

// Where the sampled trials' outputs go: one copy of every output per slot.
using SaveSlots = std::vector<std::map<std::string, CUdeviceptr>>;

SaveSlots make_save_slots(const Loaded& L, const CandidateBuffers& cb, Allocations& mem, const std::string& where) {
  SaveSlots slots(kCheckSlots);
  for (auto& slot : slots)
    for (auto& p : L.task.params)
      if (p.is_output()) slot[p.name] = mem.alloc(cb.bytes.at(p.name), p.name + " (saved trial outputs)", where);
  return slots;
}

// Compares the checked trials' outputs with the reference's outputs on the same input set
// (computed now, once per set). The last trial is checked in place, guards and unchanged
// inputs included; the others from their saved copies. Fills st.checked; returns the first
// failure in trial order.
std::optional<std::string> check_trials(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set,
                                        const InputSets& sets, const CandidateBuffers& cb, const TrialRun& run,
                                        const TrialSampler& sampler, const SaveSlots& saved, SizeTiming& st,
                                        const std::string& where) {
  const Driver& d = *s.d;
  std::optional<std::string> first;
  const std::vector<int>& held = sampler.held();
  for (int t : checked_trials(held, run.trials)) {
    int set_index = run.set_of_trial[static_cast<size_t>(t)];
    auto c = cached_case(s, L, job, set, sets.seeds[static_cast<size_t>(set_index)], true, where);
    const HostCase& h = c->h;
    bool last = t == run.trials - 1;
    CaseResult cr;
    if (last) {
      cr = check_candidate(d, L, h, cb, c->expected, where);
    } else {
      size_t slot = static_cast<size_t>(std::find(held.begin(), held.end(), t) - held.begin());
      for (auto& p : L.task.params) {
        if (!p.is_output()) continue;
        std::vector<uint8_t> actual(cb.bytes.at(p.name));
        check_cu(d.cuMemcpyDtoH(actual.data(), saved[slot].at(p.name), actual.size()),
                 "reading a trial's saved outputs", where);
        std::vector<int64_t> shape;
        if (auto it = h.shapes.find(p.name); it != h.shapes.end()) shape = it->second;
        cr.outputs.push_back(task::compare_output(p.name, c->expected.at(p.name).data(), actual.data(), p.dtype,
                                                  h.counts.at(p.name), L.task.tolerance_for(p.name), shape));
      }
      cr.pass = true;
      for (auto& o : cr.outputs) cr.pass = cr.pass && o.pass;
    }
    TrialCheck tc{t + 1, set_index + 1, last, cr.pass, ""};
    if (!cr.pass) {
      tc.problem = describe_trial_failure(t, run.trials, set_index, set.name, cr.problems, cr.outputs);
      if (!first) first = tc.problem;
    }
    st.checked.push_back(tc);
  }
  return first;
}

TimeReport time_job(Executor::State& s, const Loaded& L, const Job& job) {
  const Driver& d = *s.d;
  TimeReport rep;
  rep.trials_pass = true;
  auto shown = L.task.size_sets(false);
  double per = job.budget_s / (2.0 * static_cast<double>(shown.size()));
  Allocations job_mem(d);
  std::vector<Preamble::Restore> globals;  // saved before the candidate's first launch in this job
  if (job.reset_globals) globals = save_globals(d, L, job, job_mem, rep.notes);
  for (const task::SizeSet* set : shown) {
    std::string where = fmt::format("timing size set '{}'", set->name);
    uint64_t key = task::size_set_key(set->name);
    Allocations staging(d);
    InputSets sets = stage_input_sets(s, L, job, *set, staging, where);
    const HostCase& h = sets.cases[0]->h;  // sizes and scalars: the same for every input set
    SizeTiming st;
    st.size_set = set->name;
    st.input_sets = sets.count();
    {
      Allocations mem(d);
      CandidateBuffers cb;
      setup_candidate(s, L, h, mem, cb, where);
      Preamble pre = candidate_preamble(d, L, sets, cb, mem, where);
      pre.globals = globals;
      SaveSlots saved = make_save_slots(L, cb, mem, where);
      Rotation rot(sets.count(), task::derive_seed(job.seed, task::SeedUse::rotation, key));
      TrialSampler sampler(kCheckSlots, task::derive_seed(job.seed, task::SeedUse::trial_pick, key));
      auto save = [&](int slot) {
        for (auto& [name, copy] : saved[static_cast<size_t>(slot)])
          check_cu(d.cuMemcpyDtoDAsync(copy, cb.data.at(name), cb.bytes.at(name), nullptr), "saving a trial's outputs",
                   where);
      };
      TrialRun run = time_runs(
          s, [&] { run_candidate_launches(d, L, h, cb, where, false); }, pre, rot, &sampler, save, job.max_trials, per,
          where);
      st.candidate = run.stats;
      if (auto problem = check_trials(s, L, job, *set, sets, cb, run, sampler, saved, st, where)) {
        rep.trials_pass = false;
        rep.trial_problem = *problem;
        rep.sizes.push_back(st);
        return rep;  // the kernel's timing means nothing: the baselines and later sizes are not timed
      }
    }
    {
      Allocations mem(d);
      auto bufs = plain_buffers(d, L, h, mem, where);
      Preamble pre = plain_preamble(L, sets, h, bufs);
      ReferenceLaunch ref(L, h, bufs, where);
      Rotation rot(sets.count(), task::derive_seed(job.seed, task::SeedUse::rotation, key));
      st.reference = time_runs(
                         s, [&] { ref.run(d, L, where); }, pre, rot, nullptr, {}, job.max_trials, per, where)
                         .stats;
    }
    if (L.task.baseline) {
      LibraryBaseline* lib = s.library(st.library_name);
      if (lib) {
        st.library_name = LibraryBaseline::name(*L.task.baseline);
        Allocations mem(d);
        auto bufs = plain_buffers(d, L, h, mem, where);
        Preamble pre = plain_preamble(L, sets, h, bufs);
        Rotation rot(sets.count(), task::derive_seed(job.seed, task::SeedUse::rotation, key));
        st.library = time_runs(
                         s,
                         [&] {
                           if (auto r = lib->run(L.task, h.symbols, bufs); !r)
                             abort_with(FailureKind::library, r.error().message, where);
                         },
                         pre, rot, nullptr, {}, job.max_trials, per, where)
                         .stats;
      }
    }
    rep.sizes.push_back(st);
  }
  // Fresh buffers and inputs, one more launch: the kernel as verify sees it, after the trials.
  const task::SizeSet* last = shown.back();
  CaseResult again = verify_case(
      s, L, job, *last, task::derive_seed(job.seed, task::SeedUse::reverify, task::size_set_key(last->name)), 0);
  rep.reverify_pass = again.pass;
  if (!again.pass) {
    std::vector<std::string> why = again.problems;
    for (auto& c : again.outputs)
      if (!c.pass) why.push_back(fmt::format("'{}': {} of {} elements wrong{}", c.output, c.mismatches, c.count, c.hint.empty() ? "" : " (" + c.hint + ")"));
    rep.reverify_problem = fmt::format("after timing, a launch with fresh inputs on '{}' failed: {}", last->name, fmt::join(why, "; "));
  }
  return rep;
}

// The task's own defence: outputs a cheating or lazy kernel would leave (all zeros, a copy
// of an input, never written) must fail the comparison on every size set.
std::vector<CaseResult> trivial_cases(Executor::State& s, const Loaded& L, const Job& job) {
  const Driver& d = *s.d;
  std::vector<CaseResult> out;
  for (const task::SizeSet* set : L.task.size_sets(true)) {
    std::string where = fmt::format("size set '{}', trivial outputs", set->name);
    uint64_t seed = task::derive_seed(job.seed, task::SeedUse::trivial, task::size_set_key(set->name));
    auto cached = cached_case(s, L, job, *set, seed, true, where);
    const HostCase& h = cached->h;
    const auto& expected = cached->expected;
    const task::HostBytes* first_input = h.in.empty() ? nullptr : &h.in.begin()->second;
    for (const char* kind : {"zeros", "input-copy", "unwritten"}) {
      CaseResult cr;
      cr.trivial = kind;
      cr.size_set = set->name;
      cr.shown = set->shown;
      cr.seed = seed;
      for (auto& p : L.task.params) {
        if (!p.is_output()) continue;
        std::vector<uint8_t> actual(expected.at(p.name).size(), 0);
        if (std::string(kind) == "unwritten") task::fill_poison(actual.data(), actual.size());
        if (std::string(kind) == "input-copy" && first_input)
          std::memcpy(actual.data(), first_input->data(), std::min(actual.size(), first_input->size()));
        if (p.role == task::Role::inout && std::string(kind) != "zeros")
          actual.assign(h.in.at(p.name).begin(), h.in.at(p.name).end());  // left unchanged
        cr.outputs.push_back(task::compare_output(p.name, expected.at(p.name).data(), actual.data(), p.dtype,
                                                  h.counts.at(p.name), L.task.tolerance_for(p.name)));
      }
      cr.pass = true;
      for (auto& c : cr.outputs) cr.pass = cr.pass && c.pass;
      out.push_back(std::move(cr));
    }
    std::string why;
    LibraryBaseline* lib = L.task.baseline ? s.library(why) : nullptr;
    if (lib) {
      // The library computes the same product: the reference must agree with it.
      Allocations mem(d);
      auto bufs = plain_buffers(d, L, h, mem, where);
      if (auto r = lib->run(L.task, h.symbols, bufs); !r) abort_with(FailureKind::library, r.error().message, where);
      check_cu(d.cuCtxSynchronize(), "running the library", where);
      auto got = download_outputs(d, L, h, bufs, where);
      CaseResult cr;
      cr.trivial = "library";
      cr.size_set = set->name;
      cr.shown = set->shown;
      cr.seed = seed;
      for (auto& p : L.task.params)
        if (p.is_output())
          cr.outputs.push_back(task::compare_output(p.name, expected.at(p.name).data(), got.at(p.name).data(), p.dtype,
                                                    h.counts.at(p.name), L.task.tolerance_for(p.name)));
      cr.pass = true;
      for (auto& c : cr.outputs) cr.pass = cr.pass && c.pass;
      out.push_back(std::move(cr));
    }
  }
  return out;
}

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
    c->h = make_host_case(L, set, seed, where);
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

}  // namespace

// How this job's candidate buffers were placed, for the record.
static void note_placement(const Executor::State& s, Outcome& out) {
  if (s.placement != Placement::guarded) {
    out.guard = GuardMode::exact;
    out.guard_note.clear();
    return;
  }
  bool vmm = s.vmm && !s.fell_back;
  out.guard = vmm ? GuardMode::vmm : GuardMode::canary;
  out.guard_note = vmm ? "" : s.vmm_note;
}

Executor::Executor(std::unique_ptr<State> s) : s_(std::move(s)) {}
Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::create(int ordinal) {
  auto dr = driver();
  if (!dr) return dr.error();
  auto s = std::make_unique<State>();
  s->d = *dr;
  auto info = device_info(ordinal);
  if (!info) return info.error();
  s->info = *info;
  CUdevice dev;
  s->d->cuDeviceGet(&dev, ordinal);
  if (CUresult r = s->d->cuDevicePrimaryCtxRetain(&s->ctx, dev); r != CUDA_SUCCESS) return Error{"cuDevicePrimaryCtxRetain: " + describe(r)};
  if (CUresult r = s->d->cuCtxSetCurrent(s->ctx); r != CUDA_SUCCESS) return Error{"cuCtxSetCurrent: " + describe(r)};
  if (auto v = open_vmm(*s->d, dev); v) s->vmm = std::move(*v);
  else s->vmm_note = "guard pages unavailable (" + v.error().message + "); plain allocations with canaries instead";
  s->flush_bytes = std::max<size_t>(2 * static_cast<size_t>(s->info.l2_bytes), size_t{64} << 20);
  if (CUresult r = s->d->cuMemAlloc(&s->flush, s->flush_bytes); r != CUDA_SUCCESS) return Error{"allocating the L2 flush buffer: " + describe(r)};
  return std::unique_ptr<Executor>(new Executor(std::move(s)));
}

Outcome Executor::run(const Job& job) {
  Outcome out;
  double t0 = now_s();
  try {
    if (job.kind == JobKind::device) {
      out.device = s_->info;
      return out;
    }
    if (job.kind == JobKind::peaks) {
      auto p = measure_peaks(*s_->d, s_->info);
      if (!p) abort_with(FailureKind::launch, p.error().message, "measuring the GPU's peaks", /*fatal=*/true);
      out.peaks = *p;
      return out;
    }
    s_->placement = job.placement;
    s_->open_buffer = job.kind == JobKind::locate ? job.open_buffer : "";
    s_->fell_back = false;
    s_->phases = {};
    if (job.kind != JobKind::trivial) note_placement(*s_, out);  // as the job starts; a fallback updates it below
    Loaded L;
    load(*s_->d, job, L);
    switch (job.kind) {
      case JobKind::verify: {
        VerifyReport rep;
        for (const task::SizeSet* set : L.task.size_sets(job.held_back)) {
          if (!job.size_sets.empty() && std::find(job.size_sets.begin(), job.size_sets.end(), set->name) == job.size_sets.end())
            continue;
          for (int k = 1; k <= job.seeds; ++k) {
            rep.cases.push_back(verify_case(*s_, L, job, *set,
                                            task::derive_seed(job.seed, task::SeedUse::verify,
                                                              task::size_set_key(set->name), static_cast<uint64_t>(k)),
                                            k));
            if (job.executed_slots > 0) {
              rep.cases.back().executed = take_executed(*s_->d, L, job.executed_slots);
              rep.executed.resize(rep.cases.back().executed.size());
              for (size_t i = 0; i < rep.executed.size(); ++i) rep.executed[i] += rep.cases.back().executed[i];
            }
          }
        }
        rep.seconds = now_s() - t0;
        rep.phases = s_->phases;
        out.verify = std::move(rep);
        break;
      }
      case JobKind::locate: {
        const task::SizeSet* found = nullptr;
        for (const task::SizeSet* set : L.task.size_sets(true))
          if (set->name == job.locate_set) found = set;
        if (!found) abort_with(FailureKind::spec, fmt::format("no size set '{}' to locate a fault in", job.locate_set));
        VerifyReport rep;
        rep.cases.push_back(verify_case(*s_, L, job, *found, job.locate_seed, -1));
        rep.seconds = now_s() - t0;
        out.verify = std::move(rep);
        break;
      }
      case JobKind::trivial: {
        VerifyReport rep;
        rep.cases = trivial_cases(*s_, L, job);
        rep.seconds = now_s() - t0;
        out.verify = std::move(rep);
        break;
      }
      case JobKind::time: {
        TimeReport rep = time_job(*s_, L, job);
        rep.seconds = now_s() - t0;
        out.time = std::move(rep);
        break;
      }
      case JobKind::device:
      case JobKind::peaks:
        break;
    }
  } catch (const Abort& a) {
    out.failure = a.failure;
    out.fatal = a.fatal;
  }
  if (out.guard) note_placement(*s_, out);
  return out;
}

}  // namespace ptxforge::gpu
