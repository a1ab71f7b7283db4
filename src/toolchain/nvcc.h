// Building a task's reference.cu with nvcc (the "traditional compiler backend" a candidate is
// measured against) into a cubin for the device's architecture, cached by content so a suite
// run builds each reference once.
#pragma once

#include <chrono>
#include <string>

#include "util/result.h"

namespace ptxforge::toolchain {

struct ReferenceBuild {
  std::string cubin_path;
  bool cached = false;
  double seconds = 0;
};

// nvcc -cubin -O3 -arch=<arch>; an error carries nvcc's messages.
Result<ReferenceBuild> build_reference(const std::string& cu_path, const std::string& arch,
                                       std::chrono::milliseconds timeout = std::chrono::minutes(3));

// The PTX nvcc -O3 emits for a .cu file (comment lines dropped): the few-shot example.
Result<std::string> nvcc_ptx(const std::string& cu_path, const std::string& arch,
                             std::chrono::milliseconds timeout = std::chrono::minutes(3));

}  // namespace ptxforge::toolchain
