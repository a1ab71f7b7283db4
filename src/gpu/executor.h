// The GPU side of the harness, run inside the worker process: loads the reference and the
// candidate, and for every size set and seed computes the reference first, then runs the
// candidate on guarded, poisoned buffers and compares; or times both with the L2 flushed
// and the buffers refreshed (a rotation of input sets, outputs poisoned, scratch zeroed,
// .global variables restored) before every trial, checks some trials' outputs afterwards and
// verifies once more. A fault is reported, and `fatal`
// tells the worker that the context is gone and it must exit.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gpu/measurement.h"
#include "task/launch_spec.h"
#include "util/result.h"

namespace ptxforge::gpu {

// What a job asks of the worker: verify, time, trivial (do trivial outputs fail the task?),
// or device (the GPU's facts; nothing else in the job is read). JSON's "op" spells them as
// to_string does.
enum class JobKind { verify, time, trivial, device };
std::string_view to_string(JobKind k);
std::optional<JobKind> job_kind_from_string(std::string_view s);

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
  // Restore the candidate's .global variables before every timed trial. Only tests turn this
  // off, to show that the checked trials alone catch a kernel that carries state across launches.
  bool reset_globals = true;
};

struct Outcome {
  std::optional<VerifyReport> verify;
  std::optional<TimeReport> time;
  std::optional<DeviceInfo> device;  // a device job's answer
  std::optional<Failure> failure;
  bool fatal = false;  // the CUDA context is unusable: the worker exits after replying
};

class Executor {
 public:
  static Result<std::unique_ptr<Executor>> create();
  ~Executor();
  Outcome run(const Job& job);

  struct State;

 private:
  explicit Executor(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace ptxforge::gpu
