// The CPU engine's answer to a gpu::Job (docs/emu.md section 1): the same Outcome the GPU
// worker gives, computed by running the task's reference and the candidate's PTX on
// emu::Machine, with the same inputs (task/host_case.h), seeds (task/seeds.h) and comparison
// (task/compare.h) as the worker, so that the two verdicts differ only where execution does.
// The emu-worker process (emu/emu_main.h) is its production caller; tests call it directly.
#pragma once

#include <functional>
#include <memory>
#include <variant>

#include "emu/engine.h"
#include "gpu/job.h"
#include "ptx/ast.h"

namespace ptxforge::emu {

// Makes a Machine from a validated module: Machine::create in production, a fake in tests.
using MachineFactory = std::function<std::variant<std::unique_ptr<Machine>, Finding>(const ptx::Module&)>;

class Executor {
 public:
  explicit Executor(MachineFactory make_machine);

  // verify, trivial and device are answered; time and peaks fail with `unsupported` ("not
  // timed: CPU engine"), and so does locate (every out-of-bounds access is named on the first run).
  gpu::Outcome run(const gpu::Job& job);

  // What the engine reports as its device: sm_90 limits, `sms` = the host's threads.
  static gpu::DeviceInfo device_info();

 private:
  MachineFactory make_machine_;
};

}  // namespace ptxforge::emu
