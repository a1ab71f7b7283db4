// The engine's limits (emu/limits.h) on declarations that validate but that no GPU would load:
// sizes whose product wraps, variables that add up past the memory limit, parameter lists
// beyond what a GPU accepts. Each must be a `limit` finding when the machine is made, never a
// wrapped size, a runaway allocation or undefined behaviour; and work that grows with a
// declaration (a call's frame) is charged to the budget. Found fuzzing the engine
// (fuzz/emu_fuzz.cpp).
#include <gtest/gtest.h>

#include "emu/engine.h"
#include "emu/limits.h"
#include "emu/machine_testing.h"

namespace ptxforge::emu {
namespace {

// A `limit` finding from Machine::create at `line`.
void expect_limit(const std::string& body, uint32_t line) {
  auto b = build(std::string(kHeader) + body);
  ASSERT_FALSE(b.m);
  ASSERT_TRUE(b.finding);
  EXPECT_EQ(b.finding->kind, FindingKind::limit) << b.finding->message;
  EXPECT_EQ(b.finding->pos.line, line) << b.finding->message;
}

// 2^32 x 2^32 bytes is 0 modulo 2^64: laid out as an empty variable, an access to it was out of
// bounds, and the empty initial image was copied from a null pointer.
TEST(EmuLimits, AnArrayWhoseSizeWrapsIsALimit) {
  expect_limit(R"(
.global .b8 g[4294967296][4294967296];
.visible .entry k()
{
  ret;
}
)", 5);
  expect_limit(R"(
.visible .entry k()
{
  .local .b8 big[4294967296][4294967296];
  ret;
}
)", 7);
  expect_limit(R"(
.func f(.param .b8 a[4294967296])
{
  ret;
}
.visible .entry k()
{
  ret;
}
)", 5);
}

// Each variable under 1 GiB, together over it: the machine would hold them all (twice over,
// with their init bits), so they count against one limit, whatever their space.
TEST(EmuLimits, ModuleVariablesAddUpAgainstTheMemoryLimit) {
  static_assert(limits::kMaxAllocatedBytes == uint64_t{1} << 30);
  expect_limit(R"(
.global .b8 a[600000000];
.global .b8 b[600000000];
.visible .entry k()
{
  ret;
}
)", 6);
  expect_limit(R"(
.global .b8 a[600000000];
.visible .entry k()
{
  .shared .b8 s[600000000];
  ret;
}
)", 8);
}

// Only an initialized variable keeps an image of its bytes until the machine copies it; the
// others start as zeros (a large one costs its allocation, no copy).
TEST(EmuLimits, VariablesStartAsTheirInitializerOrZeros) {
  auto b = build(std::string(kHeader) + R"(
.global .u32 init[2] = {7, 9};
.const .u32 c = 5;
.global .b8 big[67108864];
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %o, %a;
  ld.param.u64 %o, [out];
  ld.global.u32 %r1, [init+4];
  ld.const.u32 %r2, [c];
  mov.u64 %a, big;
  ld.global.u8 %r3, [%a+67108863];
  st.global.v4.u32 [%o], {%r1, %r2, %r3, %r1};
  ret;
}
)");
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 16, Init::unwritten);
  std::vector<ParamBytes> p{u64p(out)};
  auto r = b.m->launch("k", LaunchConfig{}, p);
  ASSERT_TRUE(r.ok()) << r.finding->message;
  EXPECT_EQ(get<uint32_t>(*b.m, out, 4), (std::vector<uint32_t>{9, 5, 0, 9}));
}

// A kernel parameter's bytes are built at its declared size for every launch: 3 GB of them
// was an allocation per launch. sm_70+ accepts at most 32764 bytes.
TEST(EmuLimits, KernelParametersPastTheGpuMaximumAreALimit) {
  // `check` reports the parameter space (param-space); the engine, given the module anyway,
  // makes no machine.
  auto checked = ptx::check_source(std::string(kHeader) + R"(
.visible .entry k(.param .u64 out, .param .align 8 .b8 big[3000000000])
{
  ret;
}
)");
  EXPECT_FALSE(checked.ok());
  auto r = Machine::create(checked.module);
  auto* f = std::get_if<Finding>(&r);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, FindingKind::limit) << f->message;
  EXPECT_EQ(f->pos.line, 5u) << f->message;
  // 32764 bytes, the most from PTX 8.1 on.
  auto b = build(".version 8.1\n.target sm_80\n.address_size 64\n" + std::string(R"(
.visible .entry k(.param .u64 out, .param .align 4 .b8 most[32756])
{
  ret;
}
)"));
  ASSERT_TRUE(b.m);
  EXPECT_EQ(b.m->param_sizes("k"), (std::vector<uint32_t>{8, 32756}));
}

// An unsized .extern .global variable has no bytes: the machine is made, and any access to it
// is out of bounds.
TEST(EmuLimits, AnUnsizedExternVariableHasNoBytes) {
  auto b = build(std::string(kHeader) + R"(
.extern .global .align 4 .b8 g[];
.visible .entry k()
{
  .reg .b64 %a;
  mov.u64 %a, g;
  st.global.u32 [%a], 1;
  ret;
}
)");
  ASSERT_TRUE(b.m);
  auto r = b.m->launch("k", LaunchConfig{}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::oob) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, 10u);
}

// Each call of f sets up 64 KiB of .local: a loop of them must spend the budget on that work,
// not one lane-instruction a call (which took hours of host time under the default budget).
TEST(EmuLimits, ACallChargesItsFrameSetupToTheBudget) {
  auto b = build(std::string(kHeader) + R"(
.func f()
{
  .local .b8 big[65536];
  ret;
}
.visible .entry k()
{
LOOP:
  call f, ();
  bra LOOP;
}
)");
  ASSERT_TRUE(b.m);
  LaunchConfig cfg;
  cfg.budget = 1'000'000;
  auto r = b.m->launch("k", cfg, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::budget) << r.finding->message;
  uint64_t calls = 0;
  for (auto& c : b.m->counts())
    if (c.opcode == "call") calls = c.lane_executions;
  EXPECT_GT(calls, 0u);
  EXPECT_LE(calls, cfg.budget / (65536 / limits::kFrameBytesPerLaneInstruction) + 1);
}

}  // namespace
}  // namespace ptxforge::emu
