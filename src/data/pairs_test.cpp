#include "data/pairs.h"

#include <gtest/gtest.h>

#include "toolchain/nvrtc.h"
#include "util/paths.h"

namespace ptxforge::data {
namespace {

const SourceUnit kPlain{"plain.cu", "test", "",
                        "extern \"C\" __global__ void scale(float* y, const float* x, float a, int n) {\n"
                        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                        "  if (i < n) y[i] = a * x[i];\n"
                        "}\n"};
// NVRTC has no <cstdio>: this unit needs nvcc.
const SourceUnit kNeedsNvcc{"stdio.cu", "test", "",
                            "#include <cstdio>\n"
                            "extern \"C\" __global__ void hello(int* out) { out[threadIdx.x] = threadIdx.x; if (!threadIdx.x) printf(\"hi\\n\"); }\n"};

bool tools_here() { return toolchain::nvrtc_available().ok() && find_cuda_tool("nvcc") && find_cuda_tool("ptxas"); }

TEST(Pairs, NvrtcCompilesInThisProcessAndNvccTakesWhatItCannot) {
  if (!tools_here()) GTEST_SKIP() << "needs NVRTC, nvcc and ptxas";
  PairOptions o;
  o.archs = {"sm_80"};
  o.flags = {"-O3", "-O3 -Xptxas -v"};  // the second set is not NVRTC's: nvcc compiles it
  PairStats st;
  auto pairs = make_pairs({kPlain, kNeedsNvcc}, o, st);
  ASSERT_TRUE(pairs.ok()) << pairs.error().message;
  EXPECT_EQ(st.nvcc_failed, 0) << (st.problems.empty() ? "" : st.problems[0]);
  // plain -O3 by NVRTC; plain with the nvcc-only flag: the same PTX, dropped as a duplicate;
  // stdio.cu by nvcc in both sets (the second a duplicate).
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[0].source_id, "plain.cu");
  EXPECT_EQ((*pairs)[0].compiler, "nvrtc");
  EXPECT_EQ((*pairs)[1].source_id, "stdio.cu");
  EXPECT_EQ((*pairs)[1].compiler, "nvcc");
  EXPECT_EQ(st.by_nvrtc, 1);
  EXPECT_EQ(st.by_nvcc, 3);
  EXPECT_EQ(st.duplicates, 2) << "NVRTC's -O3 PTX is nvcc's, to the normalised hash";
  for (auto& p : *pairs) EXPECT_TRUE(p.assembles) << p.source_id << ": " << p.ptxas_error;
}

TEST(Pairs, OnlyNvrtcReportsWhatItCannotCompile) {
  if (!tools_here()) GTEST_SKIP() << "needs NVRTC, nvcc and ptxas";
  PairOptions o;
  o.archs = {"sm_80"};
  o.flags = {"-lineinfo"};
  o.compiler = Compiler::nvrtc;
  PairStats st;
  auto pairs = make_pairs({kPlain, kNeedsNvcc}, o, st);
  ASSERT_TRUE(pairs.ok()) << pairs.error().message;
  ASSERT_EQ(pairs->size(), 1u);
  EXPECT_NE((*pairs)[0].ptx.find(".loc"), std::string::npos) << "-lineinfo reached NVRTC";
  EXPECT_EQ(st.nvcc_failed, 1);
  ASSERT_EQ(st.problems.size(), 1u);
  EXPECT_NE(st.problems[0].find("stdio.cu (sm_80, -lineinfo): "), std::string::npos) << st.problems[0];
  EXPECT_NE(st.problems[0].find("cstdio"), std::string::npos) << st.problems[0];
}

}  // namespace
}  // namespace ptxforge::data
