// cuDNN's fused attention forward as a library baseline: O = softmax(scale Q Kᵀ [causal mask]) V
// with the row statistics lse = log(sum exp(...)) (natural log, f32), for Q, K, V and O of
// [batch][heads][seq][head_dim] row-major f16 or bf16. The graph is the one cuDNN's fused
// flash-attention engines recognise: matmul, a scale, the top-left causal mask (row >= column
// kept), softmax as max / subtract / exp / sum / divide with log and add for the statistics,
// matmul, P rounded to the inputs' type before the second product. The heuristic's first
// configuration that builds a plan runs; the plan of each shape, type, scale and choice of
// lse is made once and kept.
#pragma once

#include <cuda.h>

#include <array>
#include <map>
#include <memory>
#include <tuple>

#include "worker/vendor/cudnn_backend.h"
#include "worker/driver.h"
#include "task/dtype.h"
#include "util/result.h"

namespace ptxforge::gpu {

struct SdpaCall {
  int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;
  bool causal = false;
  float scale = 1.0f;                     // applied to Q Kᵀ before the mask and the softmax
  task::DType dtype = task::DType::bf16;  // of q, k, v and o
  CUdeviceptr q = 0, k = 0, v = 0, o = 0;
  CUdeviceptr lse = 0;  // [batch][heads][seq] f32; 0 for none
};

class CudnnSdpa {
 public:
  static Result<std::unique_ptr<CudnnSdpa>> create(const Driver& d);
  ~CudnnSdpa();
  Status run(const SdpaCall& call);  // enqueued on the default stream
  size_t version() const { return lib_->version(); }

  struct Plan;

 private:
  CudnnSdpa(const Driver& d, std::unique_ptr<cudnn::Library> lib);
  Result<Plan*> plan_for(const SdpaCall& call);
  Status ensure_workspace(size_t bytes);

  const Driver& d_;
  std::unique_ptr<cudnn::Library> lib_;
  CUdeviceptr workspace_ = 0;
  size_t workspace_bytes_ = 0;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, bool, bool, int, float>, std::unique_ptr<Plan>> plans_;
};

}  // namespace ptxforge::gpu
