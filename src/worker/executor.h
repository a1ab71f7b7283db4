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
#include <vector>

#include "gpu/job.h"
#include "util/result.h"

namespace ptxforge::gpu {

class Executor {
 public:
  static Result<std::unique_ptr<Executor>> create(int ordinal = 0);
  ~Executor();
  Outcome run(const Job& job);

  struct State;

 private:
  explicit Executor(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace ptxforge::gpu
