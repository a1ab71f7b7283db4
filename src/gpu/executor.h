// The GPU side of the harness, run inside the worker process: loads the reference and the
// candidate, and for every size set and seed computes the reference first, then runs the
// candidate on guarded, poisoned buffers and compares; or times both with the L2 flushed
// before every trial and verifies once more afterwards. A fault is reported, and `fatal`
// tells the worker that the context is gone and it must exit.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gpu/measurement.h"
#include "util/result.h"

namespace ptxforge::gpu {

struct Job {
  std::string op;               // "verify", "time", or "trivial" (do trivial outputs fail the task?)
  std::string task_dir;
  std::string candidate_path;   // the PTX (its `// @launch` lines are the spec unless launch_path is set)
  std::string launch_path;      // optional TOML launch spec
  std::string candidate_cubin;  // assembled by the parent
  std::string reference_cubin;  // reference.cu built by nvcc
  bool held_back = true;        // verify the held-back size sets too
  int seeds = 3;
  int max_trials = 100;
  double budget_s = 10;         // time budget for the whole time job
};

struct Outcome {
  std::optional<VerifyReport> verify;
  std::optional<TimeReport> time;
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
