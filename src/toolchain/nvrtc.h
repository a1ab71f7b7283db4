// CUDA C++ with inline PTX as a candidate: NVRTC turns it into PTX, and from there it takes
// the same path as a PTX candidate. The source is untrusted, so NVRTC never runs in this
// process: after the include policy (cuda_includes.h) it runs in ptxforge-nvrtc, a child in
// the bubblewrap sandbox with a clean environment and limits on time, memory and output
// (util/sandbox.h), and only the lines of its log located in the candidate come back
// (compiler_log.h). Without a sandbox a .cu candidate is refused.
//
// NVRTC ships no C or C++ library headers, so a candidate that includes <stdint.h> (or a
// toolkit header that does, like <cuda.h>) cannot compile under it. Such a candidate, and only
// such a one, is compiled by nvcc instead: the same include policy, the same limits, the same
// sandbox with the host compiler's public headers visible. A candidate NVRTC compiles never
// meets nvcc, so its PTX is what it always was.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"
#include "util/subprocess.h"

namespace ptxforge::toolchain {

// Which compiler made a candidate's PTX.
enum class CudaCompiler { nvrtc, nvcc };
std::string_view to_string(CudaCompiler c);

struct CudaCompile {
  std::string ptx;
  std::string log;  // the compiler's warnings, filtered to the candidate's own lines
  CudaCompiler compiler = CudaCompiler::nvrtc;
  std::string note;  // nvcc: why NVRTC could not ("NVRTC cannot open <stdint.h>: ...")
};

// The bounds one NVRTC compile runs under.
struct NvrtcLimits {
  std::chrono::milliseconds wall{60000};  // wall clock: a macro bomb is stopped here
  ResourceLimits process;                 // memory, output file size, CPU time, processes
  size_t max_ptx_bytes = 0;               // the PTX it may print
};
// 60 s wall, 4 GiB of address space, 120 s of CPU, 256 MiB of PTX.
NvrtcLimits default_nvrtc_limits();

// A candidate: NVRTC with -std=c++17 -default-device -lineinfo, and nvcc where NVRTC cannot
// open a header (above). An error carries the compiler's log (file(line): error ...), the
// include policy's refusals, the limit that stopped it (wall clock, memory, output), or says
// NVRTC, nvcc or the sandbox is missing.
Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch);
Result<CudaCompile> compile_cuda_candidate(const std::string& source, const std::string& name, const std::string& arch,
                                           const NvrtcLimits& limits);
// NVRTC alone with these options (besides the target and the CUDA include folders): no nvcc
// (`data pairs` chooses its compilers itself).
Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch,
                                        const std::vector<std::string>& options);
Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch,
                                        const std::vector<std::string>& options, const NvrtcLimits& limits);
// nvcc alone on a candidate (-ptx -std=c++17 -lineinfo), under the include policy, in the
// sandbox with the host compiler's headers, bounded by `limits`; the PTX names the candidate
// as `name`, as NVRTC's does.
Result<CudaCompile> compile_cuda_with_nvcc(const std::string& source, const std::string& name, const std::string& arch,
                                           const NvrtcLimits& limits);
// Whether NVRTC can compile here (the library loads in its sandboxed child), else why not.
Status nvrtc_available();

}  // namespace ptxforge::toolchain
