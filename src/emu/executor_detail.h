// Internals of emu::Executor shared by its files: the failure thrown out of the nested loops,
// the job's modules loaded onto machines, and one verify case. Not part of the public API.
//
//   executor.cpp       Executor::run by job kind, the device facts, the trivial outputs
//   executor_case.cpp  one (size set, seed): inputs, the reference, the candidate's launches,
//                      the comparison, the wrong elements with their last writers
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emu/executor.h"
#include "gpu/measurement.h"
#include "ptx/front_end.h"
#include "task/host_case.h"
#include "task/task_spec.h"

namespace ptxforge::emu::detail {

// A failure thrown out of the nested loops; caught once in Executor::run.
struct Abort {
  gpu::Failure failure;
};
[[noreturn]] void abort_with(gpu::FailureKind kind, std::string message, std::string where = "");

// One PTX module, validated and lowered onto its own machine. The parse result is kept: the
// machine may refer to the module for as long as it lives.
struct LoadedModule {
  std::string file_name;  // the PTX file's base name, for "k.ptx:LINE:COL" in messages
  std::unique_ptr<ptx::CheckResult> checked;
  std::unique_ptr<Machine> machine;
};

// Reads, validates and lowers the PTX at `path` (`what`: "candidate" or "reference"). A file
// that does not read or validate is a `load` failure; a construct the engine does not execute
// is an `unsupported` one naming it and its line.
LoadedModule load_module(const MachineFactory& make, const std::string& path, const char* what);

// The largest case (the sum of its buffers' bytes) the engine allocates (docs/emu.md section 8).
inline constexpr uint64_t kMaxCaseBytes = uint64_t{1} << 30;

struct JobState {
  const gpu::Job* job = nullptr;
  task::Task task;
  LoadedModule candidate, reference;
  gpu::VerifyPhases phases;
};

// The inputs of (set, seed), after checking their size against kMaxCaseBytes.
task::HostCase host_case(const task::Task& t, const task::SizeSet& set, uint64_t seed, const std::string& where);

// The reference's outputs on the case, run on its own machine over buffers it frees afterwards.
std::map<std::string, std::vector<uint8_t>> run_reference(JobState& s, const task::HostCase& h,
                                                           const std::string& where);

// One verify case, as the worker's verify_case: `seed_index` 1..N names the seed in `where`.
gpu::CaseResult verify_case(JobState& s, const task::SizeSet& set, uint64_t seed, int seed_index);

// A finding of the engine as a Failure of the case; `module` is the one that ran.
gpu::Failure failure_of(const Finding& f, const LoadedModule& module, bool reference);
gpu::FailureKind failure_kind_of(FindingKind k);

// Element i of a buffer of `t` as text: integers exactly, floats in their shortest form.
std::string element_text(const uint8_t* data, task::DType t, size_t i);
// The row-major multi-index of flat element `i` in `shape` (empty when the shape does not
// cover `count` elements).
std::vector<int64_t> multi_index(const std::vector<int64_t>& shape, size_t count, size_t i);

}  // namespace ptxforge::emu::detail
