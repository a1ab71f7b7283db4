// CUDA C++ with inline PTX as a candidate: NVRTC turns it into PTX, and from there it takes
// the same path as a PTX candidate. The source is untrusted, so NVRTC never runs in this
// process: after the include policy (cuda_includes.h) it runs in ptxforge-nvrtc, a child in
// the bubblewrap sandbox with a clean environment and limits on time, memory and output
// (util/sandbox.h), and only the lines of its log located in the candidate come back
// (compiler_log.h). Without a sandbox a .cu candidate is refused.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "util/result.h"
#include "util/subprocess.h"

namespace ptxforge::toolchain {

struct CudaCompile {
  std::string ptx;
  std::string log;  // NVRTC's warnings, filtered to the candidate's own lines
};

// The bounds one NVRTC compile runs under.
struct NvrtcLimits {
  std::chrono::milliseconds wall{60000};  // wall clock: a macro bomb is stopped here
  ResourceLimits process;                 // memory, output file size, CPU time, processes
  size_t max_ptx_bytes = 0;               // the PTX it may print
};
// 60 s wall, 4 GiB of address space, 120 s of CPU, 256 MiB of PTX.
NvrtcLimits default_nvrtc_limits();

// An error carries NVRTC's log (file(line): error ...), the include policy's refusals, the
// limit that stopped it (wall clock, memory, output), or says NVRTC or the sandbox is missing.
// A candidate is compiled with -std=c++17 -default-device -lineinfo.
Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch);
// The same with these options (besides the target and the CUDA include folders).
Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch,
                                        const std::vector<std::string>& options);
Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch,
                                        const std::vector<std::string>& options, const NvrtcLimits& limits);
// Whether NVRTC can compile here (the library loads in its sandboxed child), else why not.
Status nvrtc_available();

}  // namespace ptxforge::toolchain
