// The engine on small kernels whose results are worked out by hand: the shipped vector_add
// and saxpy solutions, divergence, per-lane loop exits, exit before a barrier, a shared-memory
// reduction, recursion, and the findings (oob, budget, unsupported, uninit).
#include <gtest/gtest.h>

#include "emu/engine.h"
#include "emu/machine_testing.h"
#include "emu/support.h"
#include "ptx/front_end.h"
#include "ptx/isa.h"

namespace ptxforge::emu {
namespace {

TEST(EmuMachine, VectorAddSolution) {
  auto b = build(slurp(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add/solution.ptx"));
  ASSERT_TRUE(b.m);
  const uint32_t n = 1000;  // a tail: 4 CTAs of 256, the last partly idle
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i), y[i] = 0.5f * float(i);
  uint64_t a = floats(*b.m, "a", x), bb = floats(*b.m, "b", y);
  uint64_t c = b.m->alloc("c", n * 4, Init::unwritten, true);
  std::vector<ParamBytes> p{u64p(a), u64p(bb), u64p(c), u32p(n)};
  LaunchConfig cfg;
  cfg.grid = {4, 1, 1};
  cfg.block = {256, 1, 1};
  auto r = b.m->launch("vector_add", cfg, p);
  ASSERT_TRUE(r.ok()) << r.finding->message;
  auto out = get<float>(*b.m, c, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 1.5f * float(i)) << i;
  auto w = b.m->last_writer(c + 4 * 999);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->who.cta[0], 3u);  // element 999 = CTA 3, thread 231
  EXPECT_EQ(w->who.thread[0], 231u);
}

TEST(EmuMachine, SaxpySolution) {
  auto b = build(slurp(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/saxpy/solution.ptx"));
  ASSERT_TRUE(b.m);
  const uint32_t n = 300;
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i), y[i] = 1.0f;
  uint64_t px = floats(*b.m, "x", x), py = floats(*b.m, "y", y);
  std::vector<ParamBytes> p{u32p(n), f32p(2.0f), u64p(px), u64p(py)};
  LaunchConfig cfg;
  cfg.grid = {2, 1, 1};
  cfg.block = {256, 1, 1};
  auto r = b.m->launch("saxpy", cfg, p);
  ASSERT_TRUE(r.ok()) << r.finding->message;
  auto out = get<float>(*b.m, py, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * float(i) + 1.0f) << i;
}

// out[tid] = tid odd ? 100 + tid : 7 * tid, then + (number of loop trips = tid % 5).
TEST(EmuMachine, DivergentIfElseAndPerLaneLoop) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .pred %p, %q;
  .reg .b32 %t, %v, %k, %odd;
  .reg .b64 %o, %off;
  ld.param.u64 %o, [out];
  mov.u32 %t, %tid.x;
  and.b32 %odd, %t, 1;
  setp.eq.u32 %p, %odd, 1;
  @%p bra ODD;
  mul.lo.u32 %v, %t, 7;
  bra JOIN;
ODD:
  add.u32 %v, %t, 100;
JOIN:
  rem.u32 %k, %t, 5;
LOOP:
  setp.eq.u32 %q, %k, 0;
  @%q bra DONE;
  add.u32 %v, %v, 1;
  sub.u32 %k, %k, 1;
  bra LOOP;
DONE:
  mul.wide.u32 %off, %t, 4;
  add.u64 %o, %o, %off;
  st.global.u32 [%o], %v;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 64 * 4, Init::unwritten, true);
  std::vector<ParamBytes> p{u64p(out)};
  LaunchConfig cfg;
  cfg.block = {64, 1, 1};
  auto r = b.m->launch("k", cfg, p);
  ASSERT_TRUE(r.ok()) << r.finding->message;
  auto v = get<uint32_t>(*b.m, out, 64);
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(v[t], (t % 2 ? 100 + t : 7 * t) + t % 5) << t;
  // The join reconverges: the store issues once per warp.
  for (auto& c : b.m->counts()) {
    if (c.opcode == "st.global.u32") {
      EXPECT_EQ(c.warp_issues, 2u);
      EXPECT_EQ(c.lane_executions, 64u);
    }
  }
}

// Lanes >= 40 exit; the rest sum their warp's tids through shared memory after bar.sync.
TEST(EmuMachine, ExitThenBarrierAndSharedReduction) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .u32 s[64];
  .reg .pred %p;
  .reg .b32 %t, %a, %i, %v, %sum;
  .reg .b64 %o;
  mov.u32 %t, %tid.x;
  setp.ge.u32 %p, %t, 40;
  @%p exit;
  shl.b32 %a, %t, 2;
  st.shared.u32 [%a], %t;
  bar.sync 0;
  setp.ne.u32 %p, %t, 0;
  @%p bra END;
  mov.u32 %sum, 0;
  mov.u32 %i, 0;
LOOP:
  shl.b32 %a, %i, 2;
  ld.shared.u32 %v, [%a];
  add.u32 %sum, %sum, %v;
  add.u32 %i, %i, 1;
  setp.lt.u32 %p, %i, 40;
  @%p bra LOOP;
  ld.param.u64 %o, [out];
  st.global.u32 [%o], %sum;
END:
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 4, Init::unwritten, true);
  std::vector<ParamBytes> p{u64p(out)};
  LaunchConfig cfg;
  cfg.block = {64, 1, 1};
  auto r = b.m->launch("k", cfg, p);
  ASSERT_TRUE(r.ok()) << r.finding->message;
  EXPECT_EQ(get<uint32_t>(*b.m, out, 1)[0], 780u);  // 0 + 1 + ... + 39
}

TEST(EmuMachine, OobReadOnePastTheEnd) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 a, .param .u64 out)
{
  .reg .b32 %t, %v;
  .reg .b64 %pa, %po, %off;
  ld.param.u64 %pa, [a];
  ld.param.u64 %po, [out];
  mov.u32 %t, %tid.x;
  mul.wide.u32 %off, %t, 4;
  add.u64 %pa, %pa, %off;
  ld.global.u32 %v, [%pa];
  add.u64 %po, %po, %off;
  st.global.u32 [%po], %v;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t a = b.m->alloc("a", 32 * 4, Init::written);
  uint64_t out = b.m->alloc("out", 33 * 4, Init::unwritten);
  std::vector<ParamBytes> p{u64p(a), u64p(out)};
  LaunchConfig cfg;
  cfg.block = {33, 1, 1};
  auto r = b.m->launch("k", cfg, p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::oob);
  EXPECT_EQ(r.finding->buffer, "a");
  EXPECT_EQ(r.finding->offset, 128u);
  EXPECT_EQ(r.finding->pos.line, 14u);  // the ld.global (the header is lines 1-3)
  ASSERT_TRUE(r.finding->who);
  EXPECT_EQ(r.finding->who->thread[0], 32u);
}

TEST(EmuMachine, InfiniteLoopIsBudget) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k()
{
L:
  bra L;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  LaunchConfig cfg;
  cfg.block = {32, 1, 1};
  cfg.budget = 1 << 20;
  auto r = b.m->launch("k", cfg, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::budget);
}

TEST(EmuMachine, RecursiveFactorial) {
  std::string src = std::string(kHeader) + R"(
.func (.param .b32 r) fact(.param .b32 n)
{
  .reg .pred %p;
  .reg .b32 %n, %m, %s;
  ld.param.b32 %n, [n];
  setp.le.u32 %p, %n, 1;
  @%p bra BASE;
  sub.u32 %m, %n, 1;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %m;
    call (b), fact, (a);
    ld.param.b32 %s, [b];
  }
  mul.lo.u32 %s, %s, %n;
  st.param.b32 [r], %s;
  ret;
BASE:
  st.param.b32 [r], 1;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %t, %v;
  .reg .b64 %o, %off;
  mov.u32 %t, %tid.x;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %t;
    call (b), fact, (a);
    ld.param.b32 %v, [b];
  }
  ld.param.u64 %o, [out];
  mul.wide.u32 %off, %t, 4;
  add.u64 %o, %o, %off;
  st.global.u32 [%o], %v;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m) << b.finding->message << " line " << b.finding->pos.line;
  uint64_t out = b.m->alloc("out", 10 * 4, Init::unwritten);
  std::vector<ParamBytes> p{u64p(out)};
  LaunchConfig cfg;
  cfg.block = {10, 1, 1};
  auto r = b.m->launch("k", cfg, p);
  ASSERT_TRUE(r.ok()) << r.finding->message << " line " << r.finding->pos.line;
  auto v = get<uint32_t>(*b.m, out, 10);
  uint32_t f = 1;
  for (uint32_t t = 0; t < 10; ++t) {
    f *= t ? t : 1;
    EXPECT_EQ(v[t], f) << t;
  }
}

TEST(EmuMachine, UnsupportedInstructionNamesItsLine) {
  std::string src = std::string(".version 8.0\n.target sm_90a\n.address_size 64\n") + R"(
.visible .entry k()
{
  wgmma.fence.sync.aligned;
  ret;
}
)";
  auto b = build(src);
  ASSERT_FALSE(b.m);
  ASSERT_TRUE(b.finding);
  EXPECT_EQ(b.finding->kind, FindingKind::unsupported);
  EXPECT_EQ(b.finding->pos.line, 7u);
  EXPECT_NE(b.finding->message.find("wgmma.fence"), std::string::npos);
}

// Some ALU opcodes without a type, found fuzzing: the engine must refuse them, not run them at a
// width of 0 (`copysign` shifted by -1; `popc` counted no bits).
TEST(EmuMachine, AnAluInstructionWithoutATypeIsUnsupported) {
  // `check` rejects these (ptxas: "Unexpected instruction types"); the engine, given such a
  // module anyway, refuses the instruction rather than run it at width 0.
  for (const char* ins : {"copysign %r1, %r2, %r3;", "popc %r1, %r2;", "prmt %r1, %r2, %r3, %r1;"}) {
    std::string src = std::string(kHeader) + R"(
.visible .entry k()
{
  .reg .b32 %r<4>;
  mov.b32 %r2, 1;
  mov.b32 %r3, 2;
  )" + ins + R"(
  ret;
}
)";
    auto checked = ptx::check_source(src);
    bool missing_type = false;
    for (auto& d : checked.diags.list()) missing_type = missing_type || (d.check_id == "missing-type" && d.loc.line == 10);
    EXPECT_TRUE(missing_type) << ins;
    auto r = Machine::create(checked.module);
    auto* f = std::get_if<Finding>(&r);
    ASSERT_TRUE(f) << ins;
    EXPECT_EQ(f->kind, FindingKind::unsupported) << ins;
    EXPECT_EQ(f->pos.line, 10u) << ins;
  }
}

TEST(EmuMachine, UninitReadOfAnOutputStoredIsAFinding) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %v;
  .reg .b64 %o;
  ld.param.u64 %o, [out];
  ld.global.u32 %v, [%o+4];
  st.global.u32 [%o], %v;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 8, Init::unwritten);
  std::vector<ParamBytes> p{u64p(out)};
  auto r = b.m->launch("k", LaunchConfig{}, p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::uninit);
  EXPECT_EQ(r.finding->buffer, "out");
}

// An accumulator never zeroed: the engine's registers start at 0, a GPU's hold garbage, so
// storing it is uninit rather than a lucky pass.
TEST(EmuMachine, NeverWrittenRegisterStoredIsAFinding) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %acc;
  .reg .b64 %o;
  add.u32 %acc, %acc, 5;
  ld.param.u64 %o, [out];
  st.global.u32 [%o], %acc;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 4, Init::unwritten);
  std::vector<ParamBytes> p{u64p(out)};
  auto r = b.m->launch("k", LaunchConfig{}, p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::uninit);
  EXPECT_EQ(r.finding->pos.line, 11u);  // the st.global
}

TEST(EmuSupport, EveryFamilyIsDecided) {
  for (auto& f : ptx::isa_families()) EXPECT_TRUE(family_support(f.name).has_value()) << f.name;
  EXPECT_EQ(family_support("wgmma.mma_async"), Support::unsupported);
  EXPECT_EQ(family_support("add"), Support::executed);
}

// Which shipped level-1 solutions lower fully (all of them: none uses an unsupported family).
TEST(EmuMachine, Level1SolutionsLower) {
  for (const char* t : {"gelu", "gemv", "histogram", "inclusive_scan", "reduce_sum", "row_softmax", "saxpy", "sgemm",
                        "transpose", "vector_add"}) {
    auto text = slurp(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/" + t + "/solution.ptx");
    auto checked = ptx::check_source(text);
    ASSERT_TRUE(checked.ok()) << t;
    auto r = Machine::create(checked.module);
    const Finding* f = std::get_if<Finding>(&r);
    EXPECT_EQ(f, nullptr) << t << ": " << (f ? f->message + " at line " + std::to_string(f->pos.line) : "");
  }
}

}  // namespace
}  // namespace ptxforge::emu
