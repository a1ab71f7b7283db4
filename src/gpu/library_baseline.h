// The vendor library as a baseline: cuBLAS (loaded with dlopen) computing what a task asks,
// on the same device buffers, so its time sits beside the candidate's and the nvcc
// reference's, and its output can confirm the reference. Row-major tasks map onto cuBLAS's
// column-major API by swapping operands (C = A B  <=>  C^T = B^T A^T).
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <string>

#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::gpu {

class LibraryBaseline {
 public:
  static Result<std::unique_ptr<LibraryBaseline>> create();
  ~LibraryBaseline();
  // Enqueues the library call on the default stream; `buffers` maps task parameter names to
  // device pointers.
  Status run(const task::Baseline& b, const task::Bindings& symbols, const std::map<std::string, CUdeviceptr>& buffers);
  static std::string name(const task::Baseline& b);  // "cuBLAS sgemm"

  struct Api;

 private:
  explicit LibraryBaseline(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace ptxforge::gpu
