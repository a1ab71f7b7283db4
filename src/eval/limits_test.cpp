// The policy limits: each one is broken by a module the front end accepts (and, for the
// ones ptxas would take, ptxas too), and no shipped module comes near any of them.
#include "eval/limits.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "ptx/front_end.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = PTXFORGE_SOURCE_DIR;

// A kernel around `decls` (module scope) and `body_decls` (inside the entry), front-end clean.
std::string module(const std::string& decls, const std::string& body_decls = "", const std::string& params = "") {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n" + decls +
         "\n.visible .entry k(.param .u64 out" + params + ")\n{\n" + body_decls +
         "\n  .reg .b64 %rd<3>;\n  .reg .b32 %r<2>;\n  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n"
         "  mov.u32 %r1, %tid.x;\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
}

struct Checked {
  ptx::CheckResult fe;
  Diagnostics policy;
};

Checked run(const std::string& text, uint64_t heap = 0) {
  Checked c{ptx::check_source(text), {}};
  c.policy = check_policy(c.fe.module, {text.size(), 0, heap});
  return c;
}

// The module passes the front end (the limits are policy, not ISA rules) and breaks exactly `id`.
void expect_only(const Checked& c, const std::string& id, uint32_t line) {
  EXPECT_TRUE(c.fe.ok()) << "the front end must accept a module that only breaks a policy limit";
  ASSERT_EQ(c.policy.list().size(), 1u);
  const Diagnostic& d = c.policy.list()[0];
  EXPECT_EQ(d.check_id, id);
  EXPECT_EQ(d.severity, Severity::error);
  EXPECT_EQ(d.loc.line, line) << d.message;
  EXPECT_NE(d.message.find("ptxforge allows"), std::string::npos) << d.message;
}

TEST(Limits, AHugeAlignmentIsRefusedAtItsLine) {
  // ptxas writes this as a 64 MiB cubin (11 s, 270 MB of memory), each load 64 MiB of device memory.
  auto c = run(module(".global .align 4 .b8 a = 1;\n.global .align 67108864 .b8 b = 2;"));
  ASSERT_FALSE(c.policy.empty());
  EXPECT_EQ(c.policy.list()[0].check_id, "limit-align");
  EXPECT_EQ(c.policy.list()[0].loc.line, 5u);
  EXPECT_NE(c.policy.list()[0].message.find(".align 67108864"), std::string::npos);
  EXPECT_NE(c.policy.list()[0].message.find("at most .align 4096"), std::string::npos);
  // The gap before b is initialised module data too: cubin bytes.
  ASSERT_EQ(c.policy.list().size(), 2u);
  EXPECT_EQ(c.policy.list()[1].check_id, "limit-module-data");
}

TEST(Limits, TheAlignmentRealKernelsUseIsAllowed) {
  auto c = run(module("", "  .shared .align 1024 .b8 tile[16384];\n  .local .align 4096 .b8 x[16];"));
  EXPECT_TRUE(c.fe.ok());
  EXPECT_TRUE(c.policy.empty()) << c.policy.list()[0].message;
}

TEST(Limits, ModuleVariablesCountTheirGaps) {
  // Variables of one byte, each at the largest allowed alignment, are a few KiB: fine. 1 GiB
  // of uninitialised .global is not (ptxas takes it without a word: "1073741824 bytes gmem").
  EXPECT_TRUE(run(module(".global .align 4096 .b8 a;\n.global .align 4096 .b8 b;\n.const .align 4096 .b8 c;")).policy.empty());
  expect_only(run(module(".global .align 4 .b8 g[1073741824];")), "limit-module-bytes", 4);
  // Split over many variables and both spaces, the line is where the total crosses the limit.
  expect_only(run(module(".global .b8 a[134217728];\n.const .b8 b[4096];\n.global .b8 c[134217728];\n.global .b8 d[4];")),
              "limit-module-bytes", 6);
  // Initialised data is cubin bytes: 16 MiB of it at most. A partial initializer suffices to
  // make ptxas write all of it ({1} for 16 MiB: a 16 MiB cubin).
  expect_only(run(module(".global .align 4 .b8 a[8388609] = {1};\n.global .b8 u[8388608];\n.global .b8 b[8388608] = {2};")),
              "limit-module-data", 6);
}

TEST(Limits, ExactlyAtALimitPasses) {
  EXPECT_TRUE(run(module(".global .b8 a[268435456];")).policy.empty());
  expect_only(run(module(".global .b8 a[268435457];")), "limit-module-bytes", 4);
  EXPECT_TRUE(run(module(".global .b8 a[16777216] = {1};")).policy.empty());
  expect_only(run(module(".global .b8 a[16777217] = {1};")), "limit-module-data", 4);
  EXPECT_TRUE(run(module("", "  .local .b32 x[131072];")).policy.empty());  // 512 KiB
  expect_only(run(module("", "  .local .b32 x[131073];")), "limit-local", 7);
}

TEST(Limits, PerVariableLocalSharedAndParamSizes) {
  // ptxas takes a 16 MiB stack frame per thread, and a 256 MiB function .param runs it for
  // minutes and gigabytes before it crashes.
  expect_only(run(module("", "  .local .align 4 .b8 loc[16777216];")), "limit-local", 7);
  expect_only(run(module("", "  .shared .align 16 .v4 .f32 s[65537];")), "limit-shared", 7);
  // A kernel's 1 MiB parameter also passes the ISA's parameter space (param-space, from the front
  // end); the policy's limit is the one a .func parameter meets, which has no such space.
  auto k = run(module("", "", ", .param .align 4 .b8 big[1048576]"));
  bool space = false;
  for (auto& d : k.fe.diags.list()) space = space || (d.check_id == "param-space" && d.loc.line == 5);
  EXPECT_TRUE(space);
  ASSERT_EQ(k.policy.list().size(), 1u);
  EXPECT_EQ(k.policy.list()[0].check_id, "limit-param");
  std::string f = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                  ".func (.param .b32 r) f(.param .align 4 .b8 p[268435456])\n{\n  .reg .b32 %r<2>;\n"
                  "  ld.param.u32 %r1, [p+4096];\n  st.param.b32 [r], %r1;\n  ret;\n}\n";
  expect_only(run(f), "limit-param", 4);
}

TEST(Limits, DimensionsThatOverflowSaturate) {
  ptx::CheckResult fe = ptx::check_source(module(".global .b64 a[4294967296][4294967296];"));
  auto d = check_policy(fe.module, {});
  ASSERT_EQ(d.list().size(), 1u);
  EXPECT_EQ(d.list()[0].check_id, "limit-module-bytes");
  EXPECT_NE(d.list()[0].message.find("more than 16 EiB"), std::string::npos) << d.list()[0].message;
}

TEST(Limits, UnsizedArraysCountTheirInitializer) {
  ptx::CheckResult fe = ptx::check_source(module(".const .align 4 .b32 t[] = {1, 2, 3, 4, 5};"));
  for (auto& item : fe.module.items)
    if (auto* v = std::get_if<ptx::VarDecl>(&item.node)) EXPECT_EQ(variable_bytes(*v, v->names[0]), 20u);
}

TEST(Limits, TheCandidateSize) {
  ptx::CheckResult fe = ptx::check_source(module(""));
  EXPECT_TRUE(check_policy(fe.module, {kLimits.ptx_bytes, 0, 0}).empty());
  auto d = check_policy(fe.module, {kLimits.ptx_bytes + 1, 0, 0});
  ASSERT_EQ(d.list().size(), 1u);
  EXPECT_EQ(d.list()[0].check_id, "limit-candidate-size");
  EXPECT_EQ(check_policy(fe.module, {100, kLimits.cuda_bytes + 1, 0}).list().at(0).check_id, "limit-candidate-size");
}

TEST(Limits, TheCubinSize) {
  EXPECT_TRUE(check_cubin_size(kLimits.cubin_bytes).empty());
  auto d = check_cubin_size(kLimits.cubin_bytes + 1);
  ASSERT_EQ(d.list().size(), 1u);
  EXPECT_EQ(d.list()[0].check_id, "limit-cubin-size");
  EXPECT_NE(d.list()[0].message.find("at most 64 MiB"), std::string::npos);
}

std::string heap_module() {
  // As nvcc writes a kernel that calls malloc and free (or new and delete).
  return ".version 8.0\n.target sm_90a\n.address_size 64\n"
         ".extern .func (.param .b64 func_retval0) malloc\n(\n  .param .b64 malloc_param_0\n)\n;\n"
         ".extern .func free\n(\n  .param .b64 free_param_0\n)\n;\n"
         ".visible .entry k(.param .u64 out)\n{\n  .reg .b64 %rd<4>;\n  ld.param.u64 %rd1, [out];\n"
         "  {\n  .param .b64 p0;\n  st.param.b64 [p0], 64;\n  .param .b64 rv;\n"
         "  call.uni (rv), malloc, (p0);\n  ld.param.b64 %rd2, [rv];\n  }\n"
         "  st.global.u64 [%rd1], %rd2;\n  ret;\n}\n";
}

TEST(Limits, TheDeviceAllocatorNeedsTheTasksLeave) {
  auto c = run(heap_module(), 0);
  EXPECT_TRUE(c.fe.ok()) << "the front end must accept a call to malloc";
  ASSERT_EQ(c.policy.list().size(), 1u);  // one finding for the allocator, not one per function
  EXPECT_EQ(c.policy.list()[0].check_id, "device-heap");
  EXPECT_EQ(c.policy.list()[0].loc.line, 4u);
  EXPECT_NE(c.policy.list()[0].message.find("device_heap_bytes"), std::string::npos);
  EXPECT_TRUE(run(heap_module(), 1 << 20).policy.empty());
}

TEST(Limits, AFunctionOfTheModuleNamedLikeTheAllocatorIsNotTheHeap) {
  std::string text = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                     ".func (.param .b64 r) malloc(.param .b64 n)\n{\n  .reg .b64 %rd<2>;\n"
                     "  ld.param.b64 %rd1, [n];\n  st.param.b64 [r], %rd1;\n  ret;\n}\n";
  auto c = run(text);
  EXPECT_TRUE(c.fe.ok());
  EXPECT_TRUE(c.policy.empty());
  for (auto name : {"malloc", "free", "__nv_aligned_device_malloc", "cudaMalloc", "cudaFree"}) EXPECT_TRUE(is_device_allocator(name));
  EXPECT_FALSE(is_device_allocator("vprintf"));
}

// Generous above everything the project ships: every solution, candidate, example and
// hand-written module passes every limit with room (a tenth of each size limit, 1024 of align).
TEST(Limits, NoShippedModuleComesNearALimit) {
  Limits tenth = kLimits;
  tenth.align = 1024;
  tenth.module_bytes /= 10;
  tenth.module_data_bytes /= 10;
  tenth.local_bytes /= 10;
  tenth.shared_bytes /= 4;  // 64 KiB: the largest static shared array shipped is 16 KiB
  tenth.param_bytes /= 10;
  tenth.ptx_bytes /= 10;
  int checked = 0;
  for (std::string dir : {"tasks", "tests/candidates", "tests/handwritten", "tests/golden", "examples", "tests/adversarial"}) {
    for (auto& e : fs::recursive_directory_iterator(kRoot + "/" + dir)) {
      if (e.path().extension() != ".ptx") continue;
      auto text = read_file(e.path().string());
      ASSERT_TRUE(text.ok());
      ptx::CheckResult fe = ptx::check_source(*text);
      if (!fe.ok()) continue;  // negative examples: the front end stops them first
      // The adversarial kernels are held to the limits themselves (a cheat may be big: a 64 MiB
      // .global answer cache must reach the GPU stages, which neutralise it), with a heap
      // granted (uninit_heap_read runs on a task that grants one); tests/adversarial/limit_*
      // are the modules written to break a limit.
      bool adversarial = e.path().string().find("/tests/adversarial/") != std::string::npos;
      if (adversarial && e.path().parent_path().filename().string().rfind("limit_", 0) == 0) continue;
      auto d = check_policy(fe.module, PolicyInput{text->size(), 0, adversarial ? 1u << 20 : 0}, adversarial ? kLimits : tenth);
      EXPECT_TRUE(d.empty()) << e.path() << ": " << d.list()[0].message;
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}

}  // namespace
}  // namespace ptxforge::eval
