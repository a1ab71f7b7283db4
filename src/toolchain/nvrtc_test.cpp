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
#include "testing/test_env.h"

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
  // The same through the candidate's path (NVRTC, then nvcc for a standard header).
  Result<CudaCompile> compile_candidate(const std::string& src, const NvrtcLimits& limits = default_nvrtc_limits()) {
    auto r = compile_cuda_candidate(src, dir_->path() + "/k.cu", "sm_90", limits);
    std::string all = r ? r->ptx + r->log + r->note : r.error().message;
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
  // A 2^40-token preprocessor bomb (each level doubles the expansion) after `prefix`, through
  // NVRTC alone or the candidate's path: it stops in bounded time at a limit it names.
  void expect_bomb_stopped(const std::string& prefix, bool candidate_path) {
    std::string bomb = prefix + "#define A0 x\n";
    for (int i = 1; i <= 40; ++i) bomb += fmt::format("#define A{} A{} A{}\n", i, i - 1, i - 1);
    bomb += "int y = A40;\n";
    NvrtcLimits limits = default_nvrtc_limits();
    limits.wall = 8s;  // the default is 60 s; the mechanism is the same
    limits.process.address_space_bytes = uint64_t{2} << 30;
    auto t0 = std::chrono::steady_clock::now();
    auto r = candidate_path ? compile_candidate(bomb, limits) : compile(bomb, limits);
    auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_FALSE(r.ok());
    const std::string& m = r.error().message;
    bool named = false;
    for (const char* limit : {"wall-clock limit", "memory limit", "CPU-time limit", "file-size limit"})
      named = named || m.find(limit) != std::string::npos;
    EXPECT_TRUE(named) << "the limit that stopped it is named: " << m;
    EXPECT_LT(took, 20s);
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

TEST_F(Nvrtc, PreprocessorBombStopsAtTheLimitAndSaysSo) { expect_bomb_stopped("", false); }

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

// Every shipped solution.cu compiles. One NVRTC takes alone keeps the PTX it always had (NVRTC's,
// byte for byte: nvcc never sees it); one that includes a C/C++ standard header (directly, or
// through <cuda.h>) is compiled by nvcc, which says so. Without nvcc those fail naming both.
TEST_F(Nvrtc, EveryShippedSolutionCompiles) {
  auto data = data_dir();
  if (!data) GTEST_SKIP() << "no data folder";
  bool have_nvcc = find_cuda_tool("nvcc").has_value();
  int found = 0, by_nvrtc = 0, by_nvcc = 0;
  for (auto& e : fs::recursive_directory_iterator(*data + "/tasks")) {
    if (e.path().filename() != "solution.cu") continue;
    ++found;
    auto src = read_file(e.path().string());
    ASSERT_TRUE(src.ok());
    std::string arch = src->find("tcgen05") != std::string::npos                                                  ? "sm_100a"
                       : src->find("wgmma") != std::string::npos || src->find("setmaxnreg") != std::string::npos ? "sm_90a"
                                                                                                                 : "sm_80";
    std::string path = e.path().string();
    auto r = compile_cuda_to_ptx(*src, path, arch);
    auto alone = compile_cuda_to_ptx(*src, path, arch, {"-std=c++17", "-default-device", "-lineinfo"});
    if (alone) {
      ASSERT_TRUE(r.ok()) << path << ": " << r.error().message;
      EXPECT_EQ(r->compiler, CudaCompiler::nvrtc) << path;
      EXPECT_TRUE(r->ptx == alone->ptx) << path << ": the PTX differs from NVRTC's own";
      ++by_nvrtc;
    } else if (have_nvcc) {
      ASSERT_TRUE(r.ok()) << path << ": " << r.error().message << "\n(NVRTC alone: " << alone.error().message << ")";
      EXPECT_EQ(r->compiler, CudaCompiler::nvcc) << path;
      EXPECT_NE(r->note.find("NVRTC cannot open <"), std::string::npos) << r->note;
      EXPECT_NE(r->ptx.find(".entry"), std::string::npos) << path;
      EXPECT_NE(r->ptx.find("\"" + path + "\""), std::string::npos) << path << ": the PTX names the candidate";
      EXPECT_EQ(r->ptx.find("candidate.cu"), std::string::npos) << path << ": the private copy is not named";
      ++by_nvcc;
    } else {
      ASSERT_FALSE(r.ok()) << path;
      EXPECT_NE(r.error().message.find("nvcc, which compiles such a candidate instead, is not installed"), std::string::npos)
          << r.error().message;
    }
  }
  EXPECT_GE(found, 6) << "the shipped solution.cu files";
  EXPECT_GE(by_nvrtc, 2) << "hgemm_mma and bgemm_cp_async compile under NVRTC";
  if (have_nvcc) {
    EXPECT_EQ(by_nvrtc + by_nvcc, found);
  }
}

// A standard header goes to nvcc; what it needs from the host's headers (UINT32_MAX, INFINITY)
// is there, and the PTX names the candidate as NVRTC's does, not the private copy.
TEST_F(Nvrtc, StandardHeadersCompileWithNvcc) {
  if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "no nvcc";
  auto r = compile_candidate(
      "#include <stdint.h>\n#include <cstdint>\n#include <math.h>\n#include <type_traits>\n"
      "static_assert(std::is_same<uint32_t, std::uint32_t>::value, \"\");\n"
      "extern \"C\" __global__ void k(uint32_t* p, float* f) { p[0] = UINT32_MAX; f[0] = INFINITY; }\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->compiler, CudaCompiler::nvcc);
  EXPECT_NE(r->note.find("NVRTC cannot open <stdint.h>"), std::string::npos) << r->note;
  EXPECT_NE(r->ptx.find(".entry k"), std::string::npos);
  EXPECT_NE(r->ptx.find("\"" + dir_->path() + "/k.cu\""), std::string::npos) << r->ptx.substr(r->ptx.rfind(".file"));
  EXPECT_EQ(r->ptx.find("ptxforge-cu"), std::string::npos) << "the private copy's folder is not in the PTX";
  // Without a standard header nothing changes: NVRTC compiles it.
  auto plain = compile_candidate("extern \"C\" __global__ void k(unsigned* p) { p[0] = 1; }\n");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->compiler, CudaCompiler::nvrtc);
  EXPECT_TRUE(plain->note.empty());
}

TEST_F(Nvrtc, NvccErrorsAreTheCandidatesOwnLines) {
  if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "no nvcc";
  auto r = compile_candidate("#include <stdint.h>\n__global__ void k(uint32_t* x) {\n  x[0] = undefined_thing;\n}\n");
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("NVRTC cannot open <stdint.h>"), std::string::npos) << m;
  EXPECT_NE(m.find("nvcc could not compile"), std::string::npos) << m;
  EXPECT_NE(m.find("k.cu(3): error: identifier \"undefined_thing\" is undefined"), std::string::npos) << m;
  EXPECT_EQ(m.find("ptxforge-cu"), std::string::npos) << "the private copy is not named: " << m;
}

// The include policy holds on the nvcc path as on NVRTC's: a standard header in front of a
// stealing include changes nothing.
TEST_F(Nvrtc, StandardHeaderDoesNotOpenThePolicy) {
  for (const std::string& steal : std::vector<std::string>{"#include \"/proc/self/environ\"\n", "#include </proc/self/environ>\n",
                                   "#include \"" + canary_file_ + "\"\n", "#include <../../" + canary_file_ + ">\n",
                                   "#define F \"" + canary_file_ + "\"\n#include F\n", "%:include \"" + canary_file_ + "\"\n",
                                   "#include_next <stdint.h>\n", "#include <stdint.h/../../../" + canary_file_ + ">\n"}) {
    auto r = compile_candidate("#include <stdint.h>\n#include <cmath>\n" + steal + "__global__ void k() {}\n");
    ASSERT_FALSE(r.ok()) << steal;
    EXPECT_NE(r.error().message.find("break the include policy"), std::string::npos) << r.error().message;
    auto n = compile_cuda_with_nvcc("#include <stdint.h>\n" + steal, "k.cu", "sm_90", default_nvrtc_limits());
    ASSERT_FALSE(n.ok()) << steal;
    EXPECT_NE(n.error().message.find("break the include policy"), std::string::npos) << n.error().message;
  }
}

// The sandbox alone on the nvcc path, the policy out of the way as in
// SandboxHoldsWhereThePolicyIsOutwitted: a toolkit (a copy of the real one's headers) whose
// evil.h includes a file outside it by absolute path. The control, a header that includes a
// file inside the toolkit, compiles: the failure is the sandbox's, not a broken toolkit's.
TEST_F(Nvrtc, SandboxHoldsOnTheNvccPath) {
  if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "no nvcc";
  std::string fake = dir_->path() + "/cuda";
  fs::create_directories(fake + "/targets/x86_64-linux");
  std::error_code ec;
  fs::copy(cuda_home() + "/include", fake + "/include", fs::copy_options::recursive, ec);
  ASSERT_FALSE(ec) << ec.message();
  for (const char* part : {"bin", "lib64", "nvvm"}) fs::create_symlink(fs::canonical(cuda_home() + "/" + part), fake + "/" + part);
  fs::create_symlink("../../include", fake + "/targets/x86_64-linux/include");
  std::string kernel = dir_->path() + "/kernel.cuh", inside = fake + "/include/inside.cuh";
  ASSERT_TRUE(write_file(kernel, "extern \"C\" __global__ void canary_xyz_kernel() {}\n").ok());
  ASSERT_TRUE(write_file(inside, "extern \"C\" __global__ void inside_kernel() {}\n").ok());
  ASSERT_TRUE(write_file(fake + "/include/evil.h", "#include \"" + kernel + "\"\n").ok());
  ASSERT_TRUE(write_file(fake + "/include/fine.h", "#include \"" + inside + "\"\n").ok());
  ScopedEnv home("PTXFORGE_CUDA_HOME", fake.c_str());
  auto control = compile_candidate("#include <stdint.h>\n#include <fine.h>\n__global__ void k() {}\n");
  ASSERT_TRUE(control.ok()) << "the copied toolkit works for nvcc: " << control.error().message;
  ASSERT_EQ(control->compiler, CudaCompiler::nvcc);
  EXPECT_NE(control->ptx.find("inside_kernel"), std::string::npos);
  auto r = compile_candidate("#include <stdint.h>\n#include <evil.h>\n__global__ void k() {}\n");
  ASSERT_FALSE(r.ok()) << "the header could open a file outside the sandbox's view";
  EXPECT_NE(r.error().message.find("nvcc could not compile"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("toolkit header <evil.h>"), std::string::npos) << r.error().message;
}

// A preprocessor bomb behind a standard header reaches nvcc, and stops at the same limits.
TEST_F(Nvrtc, BombOnTheNvccPathStopsAtTheLimit) {
  if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "no nvcc";
  expect_bomb_stopped("#include <stdint.h>\n", true);
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
