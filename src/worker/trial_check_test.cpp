// The trial-check kernels are PTX we write by hand, so they meet the same bar as a candidate's:
// our front end finds nothing in them and ptxas assembles every one for the GPUs we time on.
// That they count exactly what task::compare_output counts is shown on a GPU
// (trial_check_gpu_test.cpp).
#include "worker/trial_check.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"

namespace ptxforge::gpu {
namespace {

TEST(TrialCheck, KernelsPassOurFrontEndWithoutFindings) {
  auto r = ptx::check_source(trial_check_ptx());
  EXPECT_TRUE(r.ok());
  for (auto& d : r.diags.list()) ADD_FAILURE() << d.loc.line << ": " << d.message;
}

TEST(TrialCheck, EveryKernelAssemblesForHopperAndAmpere) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    toolchain::AssembleOptions o;
    o.arch = arch;
    auto r = toolchain::assemble_with_ptxas(trial_check_ptx(), o);
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(r->ok) << arch << ": " << r->log;
    for (CompareKernel k : kCompareKernels) {
      auto* f = r->find(compare_kernel_entry(k));
      ASSERT_NE(f, nullptr) << arch << ": " << compare_kernel_entry(k);
      EXPECT_EQ(f->spill_stores + f->spill_loads, 0) << compare_kernel_entry(k);
    }
  }
}

// Every dtype a task may declare has a kernel, and types of one width share the bitwise one.
TEST(TrialCheck, EveryDtypeHasAKernelOfItsWidth) {
  using task::DType;
  std::set<std::string_view> used;
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i8, DType::u8, DType::i16, DType::u16,
                  DType::i32, DType::u32, DType::i64, DType::u64, DType::e4m3, DType::e5m2})
    used.insert(compare_kernel_entry(compare_kernel_for(t)));
  EXPECT_EQ(used.size(), std::size(kCompareKernels)) << "each kernel serves some dtype";
  EXPECT_EQ(compare_kernel_for(DType::i32), compare_kernel_for(DType::u32));
  EXPECT_EQ(compare_kernel_for(DType::i64), CompareKernel::b64) << "64-bit integers by their bits, not via a double";
  EXPECT_NE(compare_kernel_for(DType::f16), compare_kernel_for(DType::bf16));
  EXPECT_NE(compare_kernel_for(DType::e4m3), compare_kernel_for(DType::u8)) << "-0 and +0, NaN and NaN match";
}

// The fp8 tables are the host's decoders, entry by entry: the e4m3 NaN (0x7F), e5m2's
// infinity (0x7C) and a subnormal.
TEST(TrialCheck, Fp8TablesHoldTheHostDecoding) {
  std::string ptx = trial_check_ptx();
  auto table = [&](const std::string& name) {
    size_t at = ptx.find(".b32 " + name + "[256] = {");
    EXPECT_NE(at, std::string::npos) << name;
    std::vector<uint32_t> v;
    size_t pos = ptx.find('{', at) + 1, end = ptx.find('}', at);
    while (pos < end) {
      size_t x = ptx.find("0x", pos);
      if (x == std::string::npos || x > end) break;
      v.push_back(static_cast<uint32_t>(std::stoul(ptx.substr(x + 2, 8), nullptr, 16)));
      pos = x + 10;
    }
    return v;
  };
  auto bits = [](float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  };
  auto e4 = table("pf_e4m3_table"), e5 = table("pf_e5m2_table");
  ASSERT_EQ(e4.size(), 256u);
  ASSERT_EQ(e5.size(), 256u);
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(e4[b], bits(task::e4m3_to_float(static_cast<uint8_t>(b)))) << b;
    EXPECT_EQ(e5[b], bits(task::e5m2_to_float(static_cast<uint8_t>(b)))) << b;
  }
  EXPECT_EQ(e4[0x7E], bits(448.0f));
  EXPECT_EQ(e5[0x7C], 0x7F800000u) << "e5m2 0x7C is +infinity";
  EXPECT_EQ(e4[0x01], bits(0.001953125f)) << "the smallest e4m3 subnormal, 2^-9";
}

}  // namespace
}  // namespace ptxforge::gpu
