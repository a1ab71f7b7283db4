// `ptxforge task new --from-cuda kernel.cu --entry NAME`: a task folder from a user's own
// CUDA kernel, so any kernel can be compiled by the model and checked against nvcc within
// minutes. Parameters come from the signature (`const T*` an input buffer, `T*` an output,
// integers size symbols, floats scalars); sizes and the launch are first guesses, marked
// for the user to check.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace ptxforge::task {

struct KernelParam {
  std::string name, type;  // type: our dtype name ("f32")
  bool pointer = false, is_const = false;
};

// Parses the parameter list of `entry` in CUDA source; an error says what it could not read.
Result<std::vector<KernelParam>> parse_kernel_signature(const std::string& source, const std::string& entry);
// The task.toml text for those parameters. `reference_entry` is the kernel's name in the
// reference's PTX: `entry` itself for an extern "C" kernel, else its mangled name.
std::string draft_task_toml(const std::string& entry, const std::vector<KernelParam>& params,
                            const std::string& reference_entry = "");
// The name nvcc gave `entry` in its PTX: `entry` for an extern "C" kernel, else the mangled
// name whose demangled form is `entry(...)`. An error lists the entries there are.
Result<std::string> find_entry_in_ptx(const std::string& ptx, const std::string& entry);
// Writes <dir>/task.toml, reference.cu and a starting solution.ptx (nvcc's PTX of the kernel,
// its entry named `entry`). nvcc must compile the file: a task's reference is built with it,
// so a failure is an error and nothing is written.
Result<std::string> create_task_from_cuda(const std::string& dir, const std::string& cu_path, const std::string& entry);

}  // namespace ptxforge::task
