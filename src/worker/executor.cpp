// The executor's entry points: the worker's state set up once (context, guard pages, the L2
// flush buffer), and one job run by kind. The work itself is in the executor_*.cpp files
// (worker/executor_detail.h lists them); a failure anywhere comes back here as an Abort.
#include "worker/executor.h"

#include <algorithm>

#include <fmt/format.h>

#include "worker/driver.h"
#include "worker/executor_detail.h"
#include "worker/guarded_memory_cuda.h"
#include "worker/peak_measure.h"
#include "task/seeds.h"

namespace ptxforge::gpu {

using detail::Abort;
using detail::abort_with;
using detail::load;
using detail::Loaded;
using detail::now_s;
using detail::take_executed;
using detail::time_job;
using detail::trivial_cases;
using detail::verify_case;

// The device heap a task declares (`device_heap_bytes`, 0 unless it says otherwise).
static size_t declared_heap_bytes(const task::Task& t) { return static_cast<size_t>(t.device_heap_bytes); }

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
  if (CUresult r = s->d->cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS) return Error{"cuDeviceGet: " + describe(r)};
  if (CUresult r = s->d->cuDevicePrimaryCtxRetain(&s->ctx, dev); r != CUDA_SUCCESS)
    return Error{"cuDevicePrimaryCtxRetain: " + describe(r)};
  if (CUresult r = s->d->cuCtxSetCurrent(s->ctx); r != CUDA_SUCCESS) return Error{"cuCtxSetCurrent: " + describe(r)};
  if (auto v = open_vmm(*s->d, dev); v) s->vmm = std::move(*v);
  else s->vmm_note = "guard pages unavailable (" + v.error().message + "); plain allocations with canaries instead";
  s->flush_bytes = std::max<size_t>(2 * static_cast<size_t>(s->info.l2_bytes), size_t{64} << 20);
  if (CUresult r = s->d->cuMemAlloc(&s->flush, s->flush_bytes); r != CUDA_SUCCESS)
    return Error{"allocating the L2 flush buffer: " + describe(r)};
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
    s_->slack_seed = job.seed;
    s_->open_buffer = job.kind == JobKind::locate ? job.open_buffer : "";
    s_->fell_back = false;
    s_->phases = {};
    if (job.kind != JobKind::trivial) note_placement(*s_, out);  // as the job starts; a fallback updates it below
    Loaded L;
    load(*s_->d, job, L);
    // The candidate's device malloc heap: none unless the task declares one (a heap that
    // outlives a launch is memory a kernel could remember answers in).
    std::string heap_note = detail::set_device_heap(*s_, declared_heap_bytes(L.task));
    if (job.executed_slots > 0) attach_executed(*s_->d, L, job.executed_slots);
    switch (job.kind) {
      case JobKind::verify: {
        VerifyReport rep;
        for (const task::SizeSet* set : L.task.size_sets(job.held_back)) {
          if (!job.size_sets.empty() &&
              std::find(job.size_sets.begin(), job.size_sets.end(), set->name) == job.size_sets.end())
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
        if (!heap_note.empty()) rep.notes.push_back(heap_note);
        rep.seconds = now_s() - t0;
        out.time = std::move(rep);
        break;
      }
      case JobKind::device:
      case JobKind::peaks: break;
    }
  } catch (const Abort& a) {
    out.failure = a.failure;
    out.fatal = a.fatal;
  }
  if (out.guard) note_placement(*s_, out);
  return out;
}

}  // namespace ptxforge::gpu
