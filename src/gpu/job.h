// The contract between the parent and the GPU worker: what a job asks (Job) and what comes
// back (Outcome). The parent builds jobs and reads outcomes (gpu/worker_client.h,
// gpu/protocol.h carries them as JSON lines); the worker process (src/worker/) runs them.
// Nothing here needs the CUDA driver: the parent never includes <cuda.h>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/measurement.h"
#include "gpu/peaks.h"
#include "task/launch_spec.h"

namespace ptxforge::gpu {

// What a job asks of the worker: verify, time, trivial (do trivial outputs fail the task?),
// device (the GPU's facts; nothing else in the job is read), peaks (measure the GPU's copy
// bandwidth and FMA peak, gpu/peaks.h; nothing else is read), or locate (one case of an
// out-of-bounds fault again, with one buffer's guard windows mapped: gpu/locate_fault.h).
// JSON's "op" spells them as to_string does.
enum class JobKind { verify, time, trivial, device, peaks, locate };
std::string_view to_string(JobKind k);
std::optional<JobKind> job_kind_from_string(std::string_view s);

// How the candidate's buffers are placed: guarded (guard pages where the driver allows, else
// canaries), exact (plain allocations of exactly the buffer's size: compute-sanitizer sees the
// true bounds), exact_unwritten (exact, and outputs left unwritten before the launch, so that
// initcheck sees a read of an output the kernel has not written yet).
enum class Placement { guarded, exact, exact_unwritten };
std::string_view to_string(Placement p);
std::optional<Placement> placement_from_string(std::string_view s);

struct Job {
  JobKind kind = JobKind::verify;
  std::string task_dir;
  task::LaunchSpec launch;      // resolved and checked by the parent (entries and arguments filled in)
  std::string candidate_cubin;  // assembled by the parent
  std::string reference_cubin;  // reference.cu built by nvcc
  bool held_back = true;        // verify the held-back size sets too
  int seeds = 3;
  uint64_t seed = 0;            // the run's base seed: every input set derives from it (task/seeds.h)
  int max_trials = 100;
  double budget_s = 10;         // time budget for the whole time job
  Placement placement = Placement::guarded;
  std::vector<std::string> size_sets;  // verify only these size sets (empty: every one `held_back` allows)
  // locate: the case to run again and the buffer whose guard windows are mapped
  std::string locate_set;
  uint64_t locate_seed = 0;
  std::string open_buffer;
  // Restore the candidate's .global variables before every timed trial. Only tests turn this
  // off, to show that the checked trials alone catch a kernel that carries state across launches.
  bool reset_globals = true;
  // verify: the candidate is an instrumented copy (ptx/instrument.h) with this many u64
  // counters in its __ptxforge_executed array; they are read back after the last case.
  int executed_slots = 0;
  // The CPU engine (emu-worker) reads PTX, not cubins: the candidate's and the reference's PTX
  // files. `emu_budget` caps each launch at that many lane-instructions (a kernel that runs
  // past it fails with FailureKind::budget, never with a verdict on its outputs).
  std::string candidate_ptx;
  std::string reference_ptx;
  uint64_t emu_budget = kDefaultEmuBudget;
  static constexpr uint64_t kDefaultEmuBudget = uint64_t{1} << 33;
};

struct Outcome {
  std::optional<VerifyReport> verify;
  std::optional<TimeReport> time;
  std::optional<DeviceInfo> device;  // a device job's answer
  std::optional<DevicePeaks> peaks;  // a peaks job's answer
  std::optional<Failure> failure;
  std::optional<GuardMode> guard;  // how the candidate's buffers were placed (jobs that placed them)
  std::string guard_note;          // why guard pages were not used, when they were not
  bool fatal = false;  // the CUDA context is unusable: the worker exits after replying
};

}  // namespace ptxforge::gpu
