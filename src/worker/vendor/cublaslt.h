// cuBLASLt's matmul as a library baseline (dlopen, like cuBLAS): C = A B for row-major A (m x k)
// and C (m x n), with B row-major k x n ("n"-major) or stored n x k ("k"-major, C = A Bt of
// the stored matrix). Operand types come from the task's buffers: f16/bf16 and fp8 on the
// tensor cores with f32 accumulation, f32 as tf32. fp8 may be block-scaled (MXFP8: a UE8M0
// scale per 32 elements of k of each row, in cuBLASLt's tiled layout; the VEC32_UE8M0 scale
// mode of CUDA 12.8+, which only Blackwell runs). The heuristic's best algorithm for the
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
  // Block scales of A and B (both or neither): UE8M0 bytes, round_up(rows, 128) x round_up(k, 128) / 32 each.
  CUdeviceptr A_scale = 0, B_scale = 0;
  bool block_scaled() const { return A_scale != 0; }
};

// The bytes of a block-scale buffer cuBLASLt reads for `rows` rows of k elements (VEC32_UE8M0:
// 512-byte tiles of 128 rows x 4 scales, rows and scale columns padded to whole tiles).
int64_t block_scale_bytes(int64_t rows, int64_t k);

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
  std::map<std::tuple<int64_t, int64_t, int64_t, int, int, int, bool, bool>, std::unique_ptr<Plan>> plans_;
};

}  // namespace ptxforge::gpu
