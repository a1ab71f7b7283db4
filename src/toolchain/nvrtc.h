// CUDA C++ with inline PTX as a candidate: NVRTC (loaded with dlopen) turns it into PTX, and
// from there it takes the same path as a PTX candidate.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace ptxforge::toolchain {

struct CudaCompile {
  std::string ptx;
  std::string log;  // NVRTC's warnings
};

// An error carries NVRTC's log (file:line: error ...) or says the library is missing.
// A candidate is compiled with -std=c++17 -default-device -lineinfo.
Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch);
// The same with these options (besides the target and the CUDA include folders).
Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch,
                                        const std::vector<std::string>& options);
// Whether NVRTC loads here (else why not).
Status nvrtc_available();

}  // namespace ptxforge::toolchain
