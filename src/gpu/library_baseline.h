// The vendor library as a baseline: cuBLAS, cuBLASLt or cuDNN (loaded with dlopen) computing what a task asks,
// on the same device buffers, so its time sits beside the candidate's and the nvcc
// reference's, and its output can confirm the reference. Row-major tasks map onto cuBLAS's
// column-major API by swapping operands (C = A B  <=>  C^T = B^T A^T).
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <string>

#include "gpu/cublaslt.h"
#include "gpu/cudnn_sdpa.h"
#include "gpu/driver.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::gpu {

class LibraryBaseline {
 public:
  static Result<std::unique_ptr<LibraryBaseline>> create(const Driver& d);
  ~LibraryBaseline();
  // Enqueues the task's library call ([baseline]) on the default stream; `buffers` maps task
  // parameter names to device pointers.
  Status run(const task::Task& t, const task::Bindings& symbols, const std::map<std::string, CUdeviceptr>& buffers);
  static std::string name(const task::Baseline& b);  // "cuBLAS sgemm"

  struct Api;

 private:
  LibraryBaseline(const Driver& d, std::unique_ptr<Api> api);
  Status run_sdpa(const task::Task& t, const task::Bindings& symbols,
                  const std::map<std::string, CUdeviceptr>& buffers);
  const Driver& d_;
  std::unique_ptr<Api> api_;
  // Loaded on first use (cuBLAS is loaded by create): a missing cuBLASLt or cuDNN stops only
  // the tasks that name it.
  std::unique_ptr<CublasLt> lt_;
  std::string lt_error_;
  std::unique_ptr<CudnnSdpa> sdpa_;
  std::string sdpa_error_;
};

}  // namespace ptxforge::gpu
