// One candidate as the stages see it: what `check` makes of the file (the PTX, its parsed
// module, the launch spec resolved against the task and the module) and what `assemble`
// adds (the cubin and each function's resources). The GPU stages take the resolved spec
// from here and send it to the worker, so nothing downstream reads the file again.
#pragma once

#include <string>
#include <vector>

#include "ptx/ast.h"
#include "task/launch_spec.h"
#include "toolchain/ptxas.h"

namespace ptxforge::eval {

struct Candidate {
  std::string path;       // as given: PTX with `// @launch` lines, or CUDA C++ (.cu)
  std::string ptx_name;   // the PTX's file name in diagnostics and launch-spec errors
  std::string ptx;        // the PTX (NVRTC's output for a .cu)
  ptx::Module module;     // parsed and validated by the front end
  task::LaunchSpec launch;  // checked against the task and the module; entries and arguments filled in
  // Set by assemble:
  std::string cubin_path;
  std::vector<toolchain::FunctionResources> resources;

  bool checked() const { return !launch.launches.empty(); }
  bool assembled() const { return !cubin_path.empty(); }
};

}  // namespace ptxforge::eval
