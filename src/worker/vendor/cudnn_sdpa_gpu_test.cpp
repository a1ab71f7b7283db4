// cuDNN's fused attention as the harness drives it (ctest label gpu; skipped without a driver or
// without cuDNN 9): o and lse against attention computed here in double, with and without the
// causal mask, on a sequence that fills no tile, in bf16 and f16, with another scale, and a scale
// of 0 refused.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "worker/vendor/cudnn_sdpa.h"
#include "worker/driver.h"

namespace ptxforge::gpu {
namespace {

struct Problem {
  int64_t b = 2, h = 3, s = 77, d = 128;
  bool causal = false;
  float scale = 0;
  task::DType dtype = task::DType::bf16;
};

uint16_t to_16(float f, task::DType t) {
  return t == task::DType::f16 ? task::float_to_half(f) : task::float_to_bf16(f);
}
float from_16(uint16_t v, task::DType t) {
  return t == task::DType::f16 ? task::half_to_float(v) : task::bf16_to_float(v);
}

class CudnnSdpaOnGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto d = driver();
    if (!d) {
      why_ = d.error().message;
      return;
    }
    d_ = *d;
    CUdevice dev;
    CUcontext ctx;
    if (d_->cuDeviceGet(&dev, 0) != CUDA_SUCCESS || d_->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
        d_->cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
      why_ = "no context on device 0";
      d_ = nullptr;
      return;
    }
    auto s = CudnnSdpa::create(*d_);
    if (s) sdpa_ = s->release();
    else why_ = s.error().message;
  }
  static void TearDownTestSuite() {
    delete sdpa_;
    sdpa_ = nullptr;
  }
  void SetUp() override {
    if (!sdpa_) GTEST_SKIP() << why_;
  }

  CUdeviceptr upload(const void* data, size_t bytes) {
    CUdeviceptr p = 0;
    EXPECT_EQ(d_->cuMemAlloc(&p, bytes), CUDA_SUCCESS);
    if (data) EXPECT_EQ(d_->cuMemcpyHtoD(p, data, bytes), CUDA_SUCCESS);
    else EXPECT_EQ(d_->cuMemsetD8(p, 0xff, bytes), CUDA_SUCCESS);  // NaN everywhere until written
    allocated_.push_back(p);
    return p;
  }
  void TearDown() override {
    for (CUdeviceptr p : allocated_) d_->cuMemFree(p);
  }

  // Runs cuDNN on random inputs and checks every o and lse against double-precision attention
  // (P rounded to the inputs' type, as cuDNN's second product takes it).
  void check(const Problem& pr) {
    const int64_t rows = pr.b * pr.h * pr.s, n = rows * pr.d;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> wide(-3, 3), narrow(-1, 1);
    std::vector<uint16_t> q(n), k(n), v(n);
    for (auto& x : q) x = to_16(wide(rng), pr.dtype);
    for (auto& x : k) x = to_16(wide(rng), pr.dtype);
    for (auto& x : v) x = to_16(narrow(rng), pr.dtype);
    SdpaCall call;
    call.batch = pr.b, call.heads = pr.h, call.seq = pr.s, call.head_dim = pr.d;
    call.causal = pr.causal;
    call.scale = pr.scale;
    call.dtype = pr.dtype;
    call.q = upload(q.data(), n * 2), call.k = upload(k.data(), n * 2), call.v = upload(v.data(), n * 2);
    call.o = upload(nullptr, n * 2), call.lse = upload(nullptr, rows * 4);
    auto r = sdpa_->run(call);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(d_->cuCtxSynchronize(), CUDA_SUCCESS);
    std::vector<uint16_t> o(n);
    std::vector<float> lse(rows);
    ASSERT_EQ(d_->cuMemcpyDtoH(o.data(), call.o, n * 2), CUDA_SUCCESS);
    ASSERT_EQ(d_->cuMemcpyDtoH(lse.data(), call.lse, rows * 4), CUDA_SUCCESS);

    int wrong_o = 0, wrong_lse = 0, nan_o = 0;
    double worst_o = 0;
    for (int64_t bh = 0; bh < pr.b * pr.h; ++bh)
      for (int64_t i = 0; i < pr.s; ++i) {
        const int64_t keys = pr.causal ? i + 1 : pr.s;
        std::vector<double> score(keys);
        double max = -INFINITY;
        for (int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < pr.d; ++c)
            dot += double(from_16(q[(bh * pr.s + i) * pr.d + c], pr.dtype)) *
                   from_16(k[(bh * pr.s + j) * pr.d + c], pr.dtype);
          score[j] = dot * pr.scale;
          max = std::max(max, score[j]);
        }
        double sum = 0;
        for (double& x : score) sum += (x = std::exp(x - max));
        const double want_lse = max + std::log(sum);
        if (std::abs(lse[bh * pr.s + i] - want_lse) > 1e-3 + 1e-3 * std::abs(want_lse)) ++wrong_lse;
        for (int64_t c = 0; c < pr.d; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < keys; ++j)
            acc += double(from_16(to_16(float(score[j] / sum), pr.dtype), pr.dtype)) *
                   from_16(v[(bh * pr.s + j) * pr.d + c], pr.dtype);
          double got = from_16(o[(bh * pr.s + i) * pr.d + c], pr.dtype), err = std::abs(got - acc);
          if (std::isnan(got)) ++nan_o;
          else worst_o = std::max(worst_o, err);
          if (!(err <= 5e-3 + 1e-2 * std::abs(acc))) ++wrong_o;
        }
      }
    EXPECT_EQ(wrong_o, 0) << "of " << n << " outputs (" << nan_o << " NaN, never written); worst error " << worst_o;
    EXPECT_EQ(wrong_lse, 0) << "of " << rows << " row statistics";
  }

  static inline const Driver* d_ = nullptr;
  static inline CudnnSdpa* sdpa_ = nullptr;
  static inline std::string why_;
  std::vector<CUdeviceptr> allocated_;
};

const float kScale = 1.0f / std::sqrt(128.0f);

TEST_F(CudnnSdpaOnGpu, MatchesAttentionWithoutTheMask) { check({.causal = false, .scale = kScale}); }

TEST_F(CudnnSdpaOnGpu, MatchesAttentionUnderTheCausalMask) { check({.causal = true, .scale = kScale}); }

TEST_F(CudnnSdpaOnGpu, TakesHalfPrecisionToo) {
  check({.b = 1, .h = 2, .s = 130, .causal = true, .scale = kScale, .dtype = task::DType::f16});
}

// Another scale than 1/sqrt(head_dim) reaches the kernel (the reference above uses it too).
TEST_F(CudnnSdpaOnGpu, TakesTheScaleItIsGiven) { check({.b = 1, .h = 1, .s = 64, .causal = false, .scale = 0.03f}); }

// cuDNN 9.14 leaves every o NaN for a scale of 0 (its lse is right): the call is refused first.
TEST_F(CudnnSdpaOnGpu, AScaleOfZeroIsRefused) {
  SdpaCall call;
  call.batch = call.heads = 1, call.seq = 64, call.head_dim = 128;
  call.scale = 0.0f;
  call.q = call.k = call.v = call.o = upload(nullptr, 64 * 128 * 2);
  auto r = sdpa_->run(call);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("scale"), std::string::npos) << r.error().message;
}

TEST_F(CudnnSdpaOnGpu, FiveRowsUnderTheMask) { check({.b = 3, .h = 2, .s = 5, .causal = true, .scale = kScale}); }

}  // namespace
}  // namespace ptxforge::gpu
