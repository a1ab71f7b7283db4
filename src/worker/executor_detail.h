// Internals of the executor (worker/executor.h) shared by its files: the worker's state, the
// failure thrown out of the nested loops, device memory and modules, the host side of a case
// and its cache, the candidate's buffers, and what each file offers the others. Not part of
// the public API.
//
//   executor.cpp            Executor::create and Executor::run: one job, by kind
//   executor_launch.cpp     loading a job's modules, evaluating and launching kernels
//   executor_cases.cpp      a case's inputs on the host and the reference's outputs, cached
//   executor_candidate.cpp  the candidate's buffers (guard pages, canaries, poison), its
//                           launches, and the check of its outputs, guards and inputs
//   executor_verify.cpp     one verify case, the trivial outputs, the executed-instruction counters
//   executor_timing.cpp     the time job: input sets, the per-trial preamble, timed trials each
//                           checked on the GPU (worker/trial_check.h)
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "util/phase_timer.h"
#include "worker/driver.h"
#include "worker/executor.h"
#include "worker/guarded_memory_cuda.h"
#include "worker/input_check.h"
#include "worker/vendor/library_baseline.h"
#include "worker/trial_check.h"
#include "task/buffers.h"
#include "task/host_case.h"
#include "task/launch_spec.h"

namespace ptxforge::gpu {

struct Executor::State {
  const Driver* d = nullptr;
  CUcontext ctx = nullptr;
  DeviceInfo info;
  CUdeviceptr flush = 0;  // written before every timed trial to evict the L2
  size_t flush_bytes = 0;
  std::map<std::string, std::shared_ptr<void>> cases;  // detail::CachedCase (executor_cases.cpp)
  size_t case_bytes = 0;
  std::unique_ptr<LibraryBaseline> lib;
  std::optional<std::string> lib_error;
  // Guard pages (worker/guarded_memory.h): the driver's virtual-memory calls, or null and why not.
  std::unique_ptr<VmmApi> vmm;
  std::string vmm_note;
  // The job in hand: how its candidate buffers are placed, the buffer whose guard windows a
  // locate job maps, and whether a case fell back to canaries.
  Placement placement = Placement::guarded;
  uint64_t slack_seed = 0;  // the job's seed: the sanitizer placement's slack (gpu/guard_layout.h)
  std::string open_buffer;
  bool fell_back = false;
  VerifyPhases phases;  // the job in hand's verify time, by phase
  // The input check's kernel (worker/input_check.h), loaded on first use; null and why when it
  // cannot be, and the inputs are then read back to the host instead.
  std::optional<InputCheck> input_check;
  std::optional<std::string> input_check_error;
  // The trial-check kernels (worker/trial_check.h), loaded on first use; without them the time job fails.
  std::optional<TrialChecker> trial_check;
  std::optional<std::string> trial_check_error;
  const TrialChecker* trial_checker() {
    if (!trial_check && !trial_check_error) {
      auto c = TrialChecker::create(*d, info.sms);
      if (c) trial_check.emplace(std::move(*c));
      else trial_check_error = c.error().message;
    }
    return trial_check ? &*trial_check : nullptr;
  }
  // The device malloc heap as last set (CU_LIMIT_MALLOC_HEAP_SIZE); nullopt before the first job.
  std::optional<size_t> heap_bytes;
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

namespace detail {

using ptxforge::now_s;
using ptxforge::PhaseTimer;

// ---- executor_launch.cpp: failures, device memory, modules, launches ----------------------------

// A failure thrown out of the nested loops; caught once in Executor::run.
struct Abort {
  Failure failure;
  bool fatal = false;
};

// Sets the candidate's device malloc heap (CU_LIMIT_MALLOC_HEAP_SIZE) to `bytes`, or the
// smallest size the driver accepts above it; "" when done, else why not (the driver refuses
// once a kernel that calls malloc has run in the context).
std::string set_device_heap(Executor::State& s, size_t bytes);

[[noreturn]] void abort_with(FailureKind kind, std::string message, std::string where = "", bool fatal = false);
void check_cu(CUresult r, const char* what, const std::string& where);

// Device memory released at the end of a scope, even when a case aborts. Memory that held the
// reference's outputs is zeroed first (`zero_before_free`): the driver hands freed memory to
// the next allocation as it is, and that may be a candidate's buffer.
class Allocations {
 public:
  explicit Allocations(const Driver& d, bool zero_before_free = false) : d_(d), zero_(zero_before_free) {}
  ~Allocations() {
    for (auto& [p, bytes] : ptrs_) {
      if (zero_) d_.cuMemsetD8(p, 0, bytes);  // best effort: after a fault the context is gone anyway
      d_.cuMemFree(p);
    }
  }
  Allocations(const Allocations&) = delete;
  Allocations& operator=(const Allocations&) = delete;
  CUdeviceptr alloc(size_t bytes, const std::string& what, const std::string& where) {
    CUdeviceptr p = 0;
    check_cu(d_.cuMemAlloc(&p, std::max<size_t>(bytes, 1)),
             fmt::format("allocating {} ({} bytes)", what, bytes).c_str(), where);
    ptrs_.emplace_back(p, std::max<size_t>(bytes, 1));
    return p;
  }

 private:
  const Driver& d_;
  bool zero_;
  std::vector<std::pair<CUdeviceptr, size_t>> ptrs_;
};

struct Module {
  const Driver* d = nullptr;
  CUmodule m = nullptr;
  ~Module() {
    if (m) d->cuModuleUnload(m);
  }
};

struct Dims {
  std::array<int64_t, 3> grid, block, cluster{1, 1, 1};
  int64_t smem = 0;
};

Dims evaluate_launch(const task::Launch& l, const task::Bindings& b, const std::string& where);
CUresult launch(const Driver& d, CUfunction f, const Dims& dims, void** params);

// Everything one job needs, loaded once.
// The instrumented copy's execution counters: a plain allocation of their own, outside the
// candidate's module, whose address every launch of the copy gets as a hidden last argument.
struct ExecutedCounters {
  const Driver* d = nullptr;
  CUdeviceptr p = 0;
  size_t bytes = 0;
  ExecutedCounters() = default;
  ExecutedCounters(const ExecutedCounters&) = delete;
  ExecutedCounters& operator=(const ExecutedCounters&) = delete;
  ~ExecutedCounters();
};

struct Loaded {
  task::Task task;
  task::LaunchSpec spec;
  Module candidate, reference;
  std::vector<CUfunction> launch_fns;  // one per spec launch
  CUfunction reference_fn = nullptr;
  std::unique_ptr<ExecutedCounters> executed;  // set for an instrumented copy (Job::executed_slots)
};

// The task is read from its folder; the launch spec comes resolved in the job (the parent
// parsed and checked it against the task and the PTX), so the worker never reads the PTX.
void load(const Driver& d, const Job& job, Loaded& L);

// ---- executor_cases.cpp: a case's inputs and the reference's outputs ----------------------------

// The host side of one (size set, seed), shared with the CPU engine (task/host_case.h).
using task::HostCase;

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
                                                 const std::string& where);
std::map<std::string, std::vector<uint8_t>> download_outputs(const Driver& d, const Loaded& L, const HostCase& h,
                                                             const std::map<std::string, CUdeviceptr>& bufs,
                                                             const std::string& where);

// The reference kernel's launch over `bufs`: its arguments are the task's parameters in order.
struct ReferenceLaunch {
  ArgPack args;
  Dims dims;
  ReferenceLaunch(const Loaded& L, const HostCase& h, const std::map<std::string, CUdeviceptr>& bufs,
                  const std::string& where) {
    std::vector<std::string> names;
    for (auto& p : L.task.params) names.push_back(p.name);
    args.build(names, bufs, h, {});
    dims = evaluate_launch(L.task.reference, h.symbols, where);
  }
  void run(const Driver& d, const Loaded& L, const std::string& where) {
    check_cu(launch(d, L.reference_fn, dims, args.ptrs.data()), "launching the reference", where + ", reference");
  }
};

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

// ---- executor_candidate.cpp: the candidate's buffers, launches and check ------------------------

// Canaries: mapped bytes right before and right after a buffer, filled with kCanaryByte.
struct CanarySpans {
  CUdeviceptr head = 0;
  size_t head_len = 0;
  CUdeviceptr tail = 0;
  size_t tail_len = 0;
};

// The candidate's buffers: guarded, inputs uploaded, outputs poisoned, scratch zeroed.
struct CandidateBuffers {
  std::map<std::string, CUdeviceptr> data;
  std::map<std::string, size_t> bytes;
  std::map<std::string, CanarySpans> canaries;  // none for exact placement
  std::map<std::string, CUtensorMap> maps;
  std::unique_ptr<GuardedCase> guarded;    // the reservation, with guard pages
  std::vector<std::string> guarded_names;  // the buffers in it, in slot order
  // Device copies of the read-only inputs taken before the candidate ran, and the kernel that
  // compares them with the buffers afterwards (snapshot_inputs); empty: read them back.
  std::map<std::string, CUdeviceptr> pristine;
  const InputCheck* input_check = nullptr;
};

void setup_candidate(Executor::State& s, const Loaded& L, const HostCase& h, Allocations& mem, CandidateBuffers& cb,
                     const std::string& where);

// Before the candidate's launch in verify: a device copy of each read-only input, for the input
// check on the GPU (worker/input_check.h). Timed trials copy fresh inputs in before each trial, so
// they keep the host comparison against that trial's inputs.
void snapshot_inputs(Executor::State& s, const Loaded& L, const HostCase& h, Allocations& mem, CandidateBuffers& cb,
                     const std::string& where);
void run_candidate_launches(const Driver& d, const Loaded& L, const HostCase& h, const CandidateBuffers& cb,
                            const std::string& where, bool sync);
CaseResult check_candidate(const Driver& d, const Loaded& L, const HostCase& h, const CandidateBuffers& cb,
                           const std::map<std::string, std::vector<uint8_t>>& expected, const std::string& where);

// ---- executor_verify.cpp: verify cases, trivial outputs, executed-instruction counters ----------

// `seed_index` is 1..N for the verify seeds (named in `where`), 0 for the launch after timing.
CaseResult verify_case(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set, uint64_t seed,
                       int seed_index);

// The instrumented copy's counters (ptx/instrument.h) after a case, cleared for the next one:
// what the warps that executed each required family's instructions added.
std::vector<uint64_t> take_executed(const Driver& d, const Loaded& L, int slots);
// Allocates and zeroes the counters before the first case of an instrumented copy.
void attach_executed(const Driver& d, Loaded& L, int slots);

// The task's own defence: outputs a cheating or lazy kernel would leave (all zeros, a copy
// of an input, never written) must fail the comparison on every size set.
std::vector<CaseResult> trivial_cases(Executor::State& s, const Loaded& L, const Job& job);

// ---- executor_timing.cpp: the time job ----------------------------------------------------------

TimeReport time_job(Executor::State& s, Loaded& L, const Job& job);

}  // namespace detail
}  // namespace ptxforge::gpu
