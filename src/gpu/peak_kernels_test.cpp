#include <gtest/gtest.h>

#include "gpu/peak_kernels.h"
#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"

namespace ptxforge::gpu {
namespace {

TEST(PeakKernels, PassOurFrontEndWithoutFindings) {
  auto r = ptx::check_source(peak_kernels_ptx());
  EXPECT_TRUE(r.ok());
  for (auto& d : r.diags.list()) ADD_FAILURE() << d.loc.line << ": " << d.message;
}

TEST(PeakKernels, AssembleWithPtxasForHopperWithoutSpills) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  toolchain::AssembleOptions o;
  o.arch = "sm_90a";
  auto r = toolchain::assemble_with_ptxas(peak_kernels_ptx(), o);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->ok) << r->log;
  for (const char* name : {"pf_copy", "pf_read", "pf_fma"}) {
    auto* f = r->find(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->spill_stores + f->spill_loads, 0) << name;
    // 2048 threads per SM (8 blocks of 256) need at most 32 registers a thread.
    EXPECT_LE(f->registers, 32) << name;
  }
}

}  // namespace
}  // namespace ptxforge::gpu
