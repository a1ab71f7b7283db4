// The trial-check kernels on a GPU (ctest label gpu; skipped without a driver): for every
// dtype a task may declare, expected and actual outputs full of the elements that decide a
// comparison (equal, random bits, just inside and just outside the tolerance, exactly on it,
// NaN, infinities, -0, subnormals, the poison pattern) are counted by the GPU and by
// task::compare_output, and the counts must be equal: the same mismatches, the same
// never-written ones. A difference names the dtype and both counts.
#include "worker/trial_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "task/buffers.h"
#include "task/compare.h"

namespace ptxforge::gpu {
namespace {

struct Gpu {
  const Driver* d = nullptr;
  CUcontext ctx = nullptr;
  int sms = 1;
  std::string why;
};

Gpu& gpu() {
  static Gpu g = [] {
    Gpu g;
    auto d = driver();
    if (!d) {
      g.why = d.error().message;
      return g;
    }
    CUdevice dev;
    if ((*d)->cuDeviceGet(&dev, 0) != CUDA_SUCCESS || (*d)->cuDevicePrimaryCtxRetain(&g.ctx, dev) != CUDA_SUCCESS ||
        (*d)->cuCtxSetCurrent(g.ctx) != CUDA_SUCCESS) {
      g.why = "no CUDA device";
      return g;
    }
    (*d)->cuDeviceGetAttribute(&g.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    g.d = *d;
    return g;
  }();
  return g;
}

// Expected and actual buffers of `n` elements of `t` that exercise every branch of the predicate.
void make_case(task::DType t, size_t n, const task::Tolerance& tol, uint64_t seed, std::vector<uint8_t>& e,
               std::vector<uint8_t>& a) {
  size_t sz = task::dtype_size(t);
  e.assign(n * sz, 0);
  a.assign(n * sz, 0);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-4, 4);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  bool fl = task::is_float(t);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* ei = e.data() + i * sz;
    uint8_t* ai = a.data() + i * sz;
    if (rng() % 8 == 0) {  // raw bits: subnormals, huge values, every NaN and infinity encoding
      for (size_t b = 0; b < sz; ++b) ei[b] = static_cast<uint8_t>(rng());
    } else {
      task::store_element(e.data(), t, i, fl ? uni(rng) : std::floor(uni(rng) * 30));
    }
    double ev = task::load_element(e.data(), t, i);
    double band = tol.atol + tol.rtol * std::fabs(ev);
    switch (rng() % 12) {
      case 0: std::memcpy(ai, ei, sz); break;
      case 1:
        for (size_t b = 0; b < sz; ++b) ai[b] = static_cast<uint8_t>(rng());
        break;
      case 2: task::store_element(a.data(), t, i, ev + 0.5 * band); break;
      case 3: task::store_element(a.data(), t, i, ev + 1.5 * band + (fl ? 0 : 1)); break;
      case 4: task::store_element(a.data(), t, i, ev - band); break;  // on the boundary, as stored
      case 5: task::store_element(a.data(), t, i, nan); break;
      case 6:
        task::store_element(e.data(), t, i, nan);
        task::store_element(a.data(), t, i, rng() % 2 ? nan : 1.0);
        break;
      case 7:
        task::store_element(e.data(), t, i, rng() % 2 ? inf : -inf);
        task::store_element(a.data(), t, i, rng() % 3 == 0 ? -task::load_element(e.data(), t, i)
                                            : rng() % 2  ? task::load_element(e.data(), t, i)
                                                         : 1e30);
        break;
      case 8:  // never written: the poison pattern at this element's byte offset
        for (size_t b = 0; b < sz; ++b) ai[b] = static_cast<uint8_t>(task::kPoisonWord >> (8 * ((i * sz + b) % 4)));
        break;
      case 9:
        task::store_element(e.data(), t, i, 0.0);
        task::store_element(a.data(), t, i, (rng() % 2 ? 0.999 : 1.001) * tol.atol * (rng() % 2 ? 1 : -1));
        break;
      case 10: task::store_element(a.data(), t, i, -0.0), task::store_element(e.data(), t, i, 0.0); break;
      default: task::store_element(a.data(), t, i, ev * (1 + tol.rtol * (rng() % 2 ? 0.999 : 1.001))); break;
    }
  }
}

TEST(TrialCheckOnGpu, EveryDtypeCountsWhatCompareOutputCounts) {
  Gpu& g = gpu();
  if (!g.d) GTEST_SKIP() << "no GPU: " << g.why;
  const Driver& d = *g.d;
  auto checker = TrialChecker::create(d, g.sms);
  ASSERT_TRUE(checker.ok()) << checker.error().message;
  using task::DType;
  const size_t n = 200003;  // several blocks and a ragged tail
  int k = 0;
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i8, DType::u8, DType::i16, DType::u16,
                  DType::i32, DType::u32, DType::i64, DType::u64, DType::e4m3, DType::e5m2}) {
    for (task::Tolerance tol : {task::Tolerance{1e-5, 1e-6, 1.0}, task::Tolerance{2e-2, 1e-3, 0.9},
                                task::Tolerance{0.0, 0.0, 1.0}}) {
      SCOPED_TRACE(fmt::format("{} rtol {} atol {}", task::dtype_name(t), tol.rtol, tol.atol));
      std::vector<uint8_t> e, a;
      make_case(t, n, tol, 1234 + static_cast<uint64_t>(k++), e, a);
      task::Comparison host = task::compare_output("c", e.data(), a.data(), t, n, tol);
      CUdeviceptr de = 0, da = 0, cnt = 0;
      ASSERT_EQ(d.cuMemAlloc(&de, e.size()), CUDA_SUCCESS);
      ASSERT_EQ(d.cuMemAlloc(&da, a.size()), CUDA_SUCCESS);
      ASSERT_EQ(d.cuMemAlloc(&cnt, 16), CUDA_SUCCESS);
      ASSERT_EQ(d.cuMemcpyHtoD(de, e.data(), e.size()), CUDA_SUCCESS);
      ASSERT_EQ(d.cuMemcpyHtoD(da, a.data(), a.size()), CUDA_SUCCESS);
      ASSERT_EQ(d.cuMemsetD8(cnt, 0, 16), CUDA_SUCCESS);
      ASSERT_EQ(checker->enqueue(t, de, da, n, tol, cnt), CUDA_SUCCESS);
      uint64_t got[2] = {};
      ASSERT_EQ(d.cuMemcpyDtoH(got, cnt, 16), CUDA_SUCCESS);
      d.cuMemFree(de);
      d.cuMemFree(da);
      d.cuMemFree(cnt);
      EXPECT_GT(host.mismatches, 0u) << "the case plants wrong elements";
      EXPECT_LT(host.mismatches, n) << "and right ones";
      EXPECT_EQ(got[0], host.mismatches) << "mismatches: GPU " << got[0] << ", compare_output " << host.mismatches;
      EXPECT_EQ(got[1], host.never_written) << "never written: GPU " << got[1] << ", compare_output "
                                            << host.never_written;
    }
  }
}

// A correct output counts nothing, and the counts add up over calls (each trial's counters are
// cleared by the caller, not by the kernel).
TEST(TrialCheckOnGpu, EqualOutputsCountNothingAndCountsAccumulate) {
  Gpu& g = gpu();
  if (!g.d) GTEST_SKIP() << "no GPU: " << g.why;
  const Driver& d = *g.d;
  auto checker = TrialChecker::create(d, g.sms);
  ASSERT_TRUE(checker.ok()) << checker.error().message;
  std::vector<float> e(4097, 1.5f), a = e;
  a[4096] = 2.0f;
  CUdeviceptr de = 0, da = 0, cnt = 0;
  ASSERT_EQ(d.cuMemAlloc(&de, e.size() * 4), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemAlloc(&da, a.size() * 4), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemAlloc(&cnt, 16), CUDA_SUCCESS);
  d.cuMemcpyHtoD(de, e.data(), e.size() * 4);
  d.cuMemcpyHtoD(da, e.data(), e.size() * 4);
  d.cuMemsetD8(cnt, 0, 16);
  ASSERT_EQ(checker->enqueue(task::DType::f32, de, da, e.size(), {}, cnt), CUDA_SUCCESS);
  uint64_t got[2] = {9, 9};
  d.cuMemcpyDtoH(got, cnt, 16);
  EXPECT_EQ(got[0], 0u);
  EXPECT_EQ(got[1], 0u);
  d.cuMemcpyHtoD(da, a.data(), a.size() * 4);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(checker->enqueue(task::DType::f32, de, da, e.size(), {}, cnt), CUDA_SUCCESS);
  d.cuMemcpyDtoH(got, cnt, 16);
  EXPECT_EQ(got[0], 3u) << "the last element, the only wrong one, three times";
  d.cuMemFree(de);
  d.cuMemFree(da);
  d.cuMemFree(cnt);
}

}  // namespace
}  // namespace ptxforge::gpu
