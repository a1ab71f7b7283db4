// The vendor library as a baseline: cuBLAS, cuBLASLt or cuDNN (loaded with dlopen) computing what a task asks,
// on the same device buffers, so its time sits beside the candidate's and the nvcc
// reference's, and its output can confirm the reference. Row-major tasks map onto cuBLAS's
// column-major API by swapping operands (C = A B  <=>  C^T = B^T A^T).
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <string>

#include "worker/vendor/cublaslt.h"
#include "worker/vendor/cudnn_sdpa.h"
#include "worker/driver.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::gpu {

class LibraryBaseline {
 public:
  static Result<std::unique_ptr<LibraryBaseline>> create(const Driver& d);
  ~LibraryBaseline();
  // Enqueues the task's library call ([baseline], task/baselines.h) on the default stream; `buffers` maps task
  // parameter names to device pointers.
  Status run(const task::Task& t, const task::Bindings& symbols, const std::map<std::string, CUdeviceptr>& buffers);

  struct Api;

 private:
  LibraryBaseline(const Driver& d, std::unique_ptr<Api> api);
  // One runner per task::BaselineKind (task/baselines.h).
  using Buffers = std::map<std::string, CUdeviceptr>;
  Status run_sgemm(const task::Task& t, const task::Bindings& symbols, const Buffers& buffers);
  Status run_sgemv(const task::Task& t, const task::Bindings& symbols, const Buffers& buffers);
  Status run_lt_matmul(const task::Task& t, const task::Bindings& symbols, const Buffers& buffers);
  Status run_sdpa(const task::Task& t, const task::Bindings& symbols, const Buffers& buffers);
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
