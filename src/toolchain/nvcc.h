// Building a task's reference.cu with nvcc (the "traditional compiler backend" a candidate is
// measured against) into a cubin for the device's architecture, cached by content so a suite
// run builds each reference once. nvcc runs as a bounded child on a private copy of the
// source (nvcc.cpp), in the sandbox where there is one.
#pragma once

#include <chrono>
#include <string>

#include "util/result.h"
#include "util/subprocess.h"

namespace ptxforge::toolchain {

struct ReferenceBuild {
  std::string cubin_path;
  bool cached = false;
  double seconds = 0;
};

// nvcc's bounds: 16 GiB of address space (cicc on a large kernel), 256 MiB files, 4096
// processes; CPU time is the timeout plus 10 s.
ResourceLimits default_nvcc_limits();

// nvcc -cubin -O3 -arch=<arch>; an error carries nvcc's messages.
Result<ReferenceBuild> build_reference(const std::string& cu_path, const std::string& arch,
                                       std::chrono::milliseconds timeout = std::chrono::minutes(3));

// The PTX nvcc -O3 emits for a .cu file (comment lines dropped): the few-shot example.
Result<std::string> nvcc_ptx(const std::string& cu_path, const std::string& arch,
                             std::chrono::milliseconds timeout = std::chrono::minutes(3));

}  // namespace ptxforge::toolchain
