// cuBLASLt's matmul as a library baseline (dlopen, like cuBLAS): C = A B for row-major A (m x k)
// and C (m x n), with B row-major k x n ("n"-major) or stored n x k ("k"-major, C = A Bt of
// the stored matrix). Operand types come from the task's buffers: f16/bf16 and fp8 on the
// tensor cores with f32 accumulation, f32 as tf32. The heuristic's best algorithm for the
// shape runs with a 32 MiB workspace; each shape's plan is made once and kept.
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "worker/driver.h"
#include "task/dtype.h"
#include "util/result.h"

namespace ptxforge::gpu {

struct LtMatmul {
  int64_t m = 0, n = 0, k = 0;
  task::DType a = task::DType::f16, b = task::DType::f16, c = task::DType::f32;
  bool b_k_major = false;
  float alpha = 1.0f;  // C = alpha A B (the scale is applied in f32, before the rounding to C's type)
  CUdeviceptr A = 0, B = 0, C = 0;
};

class CublasLt {
 public:
  static Result<std::unique_ptr<CublasLt>> create(const Driver& d);
  ~CublasLt();
  Status run(const LtMatmul& mm);  // enqueued on the default stream

  struct Api;
  struct Plan;

 private:
  CublasLt(const Driver& d, std::unique_ptr<Api> api);
  Result<const Plan*> plan_for(const LtMatmul& mm);
  const Driver& d_;
  std::unique_ptr<Api> api_;
  CUdeviceptr workspace_ = 0;
  std::map<std::tuple<int64_t, int64_t, int64_t, int, int, int, bool>, std::unique_ptr<Plan>> plans_;
};

}  // namespace ptxforge::gpu
