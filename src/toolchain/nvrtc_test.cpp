// NVRTC in its sandboxed child, against the candidates that would steal through it: includes
// of the environment, of task files by absolute and relative path, computed and digraph
// includes, and a preprocessor bomb. Each must fail clearly, in bounded time, with no byte of
// a canary (an environment variable and a file) in anything that comes back. Legitimate
// headers and the shipped solutions that NVRTC can compile must still compile.
#include "toolchain/nvrtc.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>

#include "util/paths.h"
#include "util/sandbox.h"
#include "util/text.h"
#include "util/test_env.h"

namespace ptxforge::toolchain {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;


constexpr const char* kCanary = "canary-xyz";

class Nvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto st = nvrtc_available(); !st) GTEST_SKIP() << st.error().message;
    secret_.emplace("PTXFORGE_TEST_SECRET", "canary-xyz-env");
    key_.emplace("OPENAI_API_KEY", "canary-xyz-key");
    auto d = TempDir::create("ptxforge-nvrtc-test");
    ASSERT_TRUE(d.ok());
    dir_.emplace(std::move(*d));
    canary_file_ = dir_->path() + "/task.toml";
    ASSERT_TRUE(write_file(canary_file_, "held_back = \"canary-xyz-file\"\nint canary_xyz_decl;\n").ok());
  }
  // Compiles, and checks that no canary byte is anywhere in what came back.
  Result<CudaCompile> compile(const std::string& src, const NvrtcLimits& limits = default_nvrtc_limits()) {
    auto r = compile_cuda_to_ptx(src, dir_->path() + "/k.cu", "sm_90", {"-std=c++17", "-default-device"}, limits);
    std::string all = r ? r->ptx + r->log : r.error().message;
    EXPECT_EQ(all.find(kCanary), std::string::npos) << "a canary leaked:\n" << all;
    EXPECT_EQ(all.find("canary_xyz"), std::string::npos) << "a canary leaked:\n" << all;
    return r;
  }
  void expect_refused(const std::string& src, const std::string& says) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = compile(src);
    ASSERT_FALSE(r.ok()) << src;
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
  }
  std::optional<ScopedEnv> secret_, key_;
  std::optional<TempDir> dir_;
  std::string canary_file_;
};

TEST_F(Nvrtc, IncludeOfTheEnvironmentIsRefused) {
  expect_refused("#include \"/proc/self/environ\"\n__global__ void k() {}\n", "[include-quoted]");
  expect_refused("#include </proc/self/environ>\n__global__ void k() {}\n", "[include-path]");
  expect_refused("#include </proc/self/environ>\n", "k.cu:1:");  // points at the candidate's line
}

TEST_F(Nvrtc, IncludeOfATaskFileIsRefused) {
  expect_refused("#include \"" + canary_file_ + "\"\n", "[include-quoted]");
  expect_refused("#include <" + canary_file_ + ">\n", "[include-path]");
  expect_refused("#include <../../../../../../../../" + canary_file_ + ">\n", "[include-path]");
  expect_refused("#include <../../tasks/level1/vector_add/task.toml>\n", "[include-path]");
}

TEST_F(Nvrtc, ComputedAndDigraphIncludesAreRefused) {
  expect_refused("#define F \"" + canary_file_ + "\"\n#include F\n", "[include-computed]");
  expect_refused("%:include \"" + canary_file_ + "\"\n", "[include-digraph]");
  expect_refused("#\\\ninclude \"" + canary_file_ + "\"\n", "[include-continuation]");
  expect_refused("#if __has_include(\"" + canary_file_ + "\")\nint x;\n#endif\n", "[include-has-include]");
}

// The sandbox alone, with the policy out of the way: a header the policy passes, in a toolkit
// folder the test controls, includes a file beside it by absolute path. That file is valid
// CUDA whose kernel name is the canary, so without the sandbox the compile would succeed and
// the canary would be in the PTX (and the log filter could not help).
TEST_F(Nvrtc, SandboxHoldsWhereThePolicyIsOutwitted) {
  fs::create_directories(dir_->path() + "/cuda/include");
  std::string kernel = dir_->path() + "/kernel.cuh";
  ASSERT_TRUE(write_file(kernel, "extern \"C\" __global__ void canary_xyz_kernel() {}\n").ok());
  ASSERT_TRUE(write_file(dir_->path() + "/cuda/include/evil.h", "#include \"" + kernel + "\"\n").ok());
  fs::create_symlink(cuda_home() + "/lib64", dir_->path() + "/cuda/lib64");
  fs::create_symlink(cuda_home() + "/bin", dir_->path() + "/cuda/bin");
  ScopedEnv home("PTXFORGE_CUDA_HOME", (dir_->path() + "/cuda").c_str());
  auto r = compile("#include <evil.h>\n__global__ void k() {}\n");
  ASSERT_FALSE(r.ok()) << "the header could open a file outside the sandbox's view";
  EXPECT_NE(r.error().message.find("NVRTC could not compile"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("toolkit header <evil.h>"), std::string::npos) << r.error().message;
}

// In the sandbox /proc/self/environ is NVRTC's own, rebuilt from nothing: PATH, HOME, LANG.
TEST_F(Nvrtc, SandboxedEnvironmentHoldsNoSecret) {
  fs::create_directories(dir_->path() + "/cuda/include");
  ASSERT_TRUE(write_file(dir_->path() + "/cuda/include/env.h", "#include \"/proc/self/environ\"\n").ok());
  fs::create_symlink(cuda_home() + "/lib64", dir_->path() + "/cuda/lib64");
  ScopedEnv home("PTXFORGE_CUDA_HOME", (dir_->path() + "/cuda").c_str());
  ASSERT_FALSE(compile("#include <env.h>\n").ok());  // compile() asserts no canary came back
}

TEST_F(Nvrtc, PreprocessorBombStopsAtTheLimitAndSaysSo) {
  // Each level doubles the expansion: 2^40 tokens.
  std::string bomb = "#define A0 x\n";
  for (int i = 1; i <= 40; ++i) bomb += fmt::format("#define A{} A{} A{}\n", i, i - 1, i - 1);
  bomb += "int y = A40;\n";
  NvrtcLimits limits = default_nvrtc_limits();
  limits.wall = 8s;  // the default is 60 s; the mechanism is the same
  limits.process.address_space_bytes = uint64_t{2} << 30;
  auto t0 = std::chrono::steady_clock::now();
  auto r = compile(bomb, limits);
  auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  bool named = m.find("wall-clock limit") != std::string::npos || m.find("memory limit") != std::string::npos ||
               m.find("CPU-time limit") != std::string::npos;
  EXPECT_TRUE(named) << "the limit that stopped it is named: " << m;
  EXPECT_LT(took, 20s);
}

// Token pasting doubles an identifier per level: 2^32 characters from a three-line source.
TEST_F(Nvrtc, PasteBombStopsAtTheMemoryLimitAndSaysSo) {
  std::string open, close;
  for (int i = 0; i < 32; ++i) open += "Q(", close += ")";
  NvrtcLimits limits = default_nvrtc_limits();
  limits.process.address_space_bytes = uint64_t{2} << 30;  // the default is 4 GiB
  auto r = compile("#define P(a) a##a\n#define Q(a) P(a)\nint " + open + "x" + close + ";\n", limits);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("ran out of its 2 GiB memory limit"), std::string::npos) << r.error().message;
}

TEST_F(Nvrtc, CompileErrorsAreTheCandidatesOwnLines) {
  auto r = compile("__global__ void k(float* x) {\n  x[0] = undefined_thing;\n}\n");
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("NVRTC could not compile"), std::string::npos) << m;
  EXPECT_NE(m.find("k.cu(2): error: identifier \"undefined_thing\" is undefined"), std::string::npos) << m;
  EXPECT_NE(m.find("x[0] = undefined_thing;"), std::string::npos) << "the candidate's own line is quoted: " << m;
  EXPECT_EQ(m.find("memory"), std::string::npos);
}

TEST_F(Nvrtc, ToolkitHeadersStillCompile) {
  auto r = compile(
      "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <mma.h>\n#include <cuda/barrier>\n"
      "extern \"C\" __global__ void k(__half* h, __nv_bfloat16* b) {\n"
      "  h[threadIdx.x] = __float2half(1.0f); b[threadIdx.x] = __float2bfloat16(2.0f);\n}\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->ptx.find(".entry k"), std::string::npos);
}

// Every shipped solution.cu either compiles or fails for a stated reason of its own (a host
// header NVRTC does not have), never because of the sandbox.
TEST_F(Nvrtc, ShippedSolutionsCompileOrSayWhyNot) {
  auto data = data_dir();
  if (!data) GTEST_SKIP() << "no data folder";
  int compiled = 0;
  for (auto& e : fs::recursive_directory_iterator(*data + "/tasks")) {
    if (e.path().filename() != "solution.cu") continue;
    auto src = read_file(e.path().string());
    ASSERT_TRUE(src.ok());
    std::string arch = src->find("wgmma") != std::string::npos || src->find("setmaxnreg") != std::string::npos ? "sm_90a" : "sm_80";
    auto r = compile_cuda_to_ptx(*src, e.path().string(), arch);
    if (r) {
      ++compiled;
      EXPECT_NE(r->ptx.find(".entry"), std::string::npos) << e.path();
    } else {
      const std::string& m = r.error().message;
      bool host_header = m.find("[include-missing]") != std::string::npos || m.find("toolkit header <cuda.h>") != std::string::npos;
      EXPECT_TRUE(host_header) << e.path() << ": " << m;
      EXPECT_EQ(m.find("sandbox"), std::string::npos) << m;
    }
  }
  EXPECT_GE(compiled, 2) << "hgemm_mma and bgemm_cp_async compile under NVRTC";
}

TEST(NvrtcSandbox, WithoutASandboxCudaCandidatesAreRefused) {
  ScopedEnv none("PTXFORGE_SANDBOX", "none");
  auto r = compile_cuda_to_ptx("__global__ void k() {}\n", "k.cu", "sm_90");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("bubblewrap"), std::string::npos) << r.error().message;
  auto a = nvrtc_available();
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("sandbox"), std::string::npos) << a.error().message;
}

}  // namespace
}  // namespace ptxforge::toolchain
