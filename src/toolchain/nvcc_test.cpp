// nvcc as a bounded, sandboxed child: the project's references still build (host compiler,
// headers and all), no credential reaches nvcc, and its messages name the caller's file.
#include "toolchain/nvcc.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {
namespace {

class Nvcc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "nvcc not installed";
    auto d = TempDir::create("ptxforge-nvcctest");
    ASSERT_TRUE(d.ok());
    dir_.emplace(std::move(*d));
    setenv("PTXFORGE_CACHE_DIR", (dir_->path() + "/cache").c_str(), 1);  // no cached cubin
  }
  void TearDown() override { unsetenv("PTXFORGE_CACHE_DIR"); }
  std::optional<TempDir> dir_;
};

TEST_F(Nvcc, ShippedReferencesBuildInTheSandbox) {
  auto data = data_dir();
  ASSERT_TRUE(data.has_value());
  // The smallest and the largest reference (host headers, <cuda_bf16.h>, <math.h>).
  for (const char* t : {"level1/vector_add", "level3/flash_attn_fwd"}) {
    auto b = build_reference(*data + "/tasks/" + t + "/reference.cu", "sm_90a");
    ASSERT_TRUE(b.ok()) << t << ": " << b.error().message;
    EXPECT_FALSE(b->cached);
    auto cubin = read_file(b->cubin_path);
    ASSERT_TRUE(cubin.ok());
    EXPECT_EQ(cubin->substr(1, 3), "ELF");
  }
}

TEST_F(Nvcc, ErrorsNameTheCallersFileAndLeakNothing) {
  setenv("PTXFORGE_TEST_SECRET", "canary-xyz-nvcc", 1);
  std::string cu = dir_->path() + "/mine.cu";
  ASSERT_TRUE(write_file(cu, "__global__ void k(float* x) {\n  x[0] = undefined_thing;\n}\n").ok());
  auto r = nvcc_ptx(cu, "sm_90");
  unsetenv("PTXFORGE_TEST_SECRET");
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_NE(m.find(cu + "(2): error: identifier \"undefined_thing\" is undefined"), std::string::npos) << m;
  EXPECT_EQ(m.find("ptxforge-nvcc-"), std::string::npos) << "the private copy's path is not shown: " << m;
  EXPECT_EQ(m.find("canary-xyz"), std::string::npos) << m;
}

TEST_F(Nvcc, PtxOfAGoodSource) {
  std::string cu = dir_->path() + "/good.cu";
  ASSERT_TRUE(write_file(cu, "#include <cuda_fp16.h>\n#include <stdint.h>\nextern \"C\" __global__ void k(__half* h) { h[0] = __float2half(1.0f); }\n").ok());
  auto r = nvcc_ptx(cu, "sm_90");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find(".entry k"), std::string::npos);
}

}  // namespace
}  // namespace ptxforge::toolchain
