// The engine's synchronisation and memory checks on small kernels: a warp sum through
// shfl.sync, a shfl whose member mask leaves out a lane that executes it, barriers reached at
// different instructions, a deadlock, a barrier count that is not a multiple of 32, a
// misaligned load, shared-memory atomics, and generic addressing of shared memory.
#include <gtest/gtest.h>

#include "emu/engine.h"
#include "emu/machine_testing.h"

namespace ptxforge::emu {
namespace {

LaunchResult run1(Built& b, uint32_t threads, uint64_t out) {
  std::vector<ParamBytes> p{u64p(out)};
  LaunchConfig cfg;
  cfg.block = {threads, 1, 1};
  return b.m->launch("k", cfg, p);
}

// Every lane ends with the sum of the warp's lane ids: 0 + ... + 31 = 496.
TEST(EmuSync, ShflButterflySum) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %v, %w, %t, %i;
  .reg .pred %p;
  .reg .b64 %o, %off;
  mov.u32 %t, %laneid;
  mov.u32 %v, %t;
  mov.u32 %i, 16;
L:
  shfl.sync.bfly.b32 %w, %v, %i, 31, -1;
  add.u32 %v, %v, %w;
  shr.u32 %i, %i, 1;
  setp.ne.u32 %p, %i, 0;
  @%p bra L;
  ld.param.u64 %o, [out];
  mul.wide.u32 %off, %t, 4;
  add.u64 %o, %o, %off;
  st.global.u32 [%o], %v;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 32 * 4, Init::unwritten);
  auto r = run1(b, 32, out);
  ASSERT_TRUE(r.ok()) << r.finding->message;
  for (uint32_t v : get<uint32_t>(*b.m, out, 32)) EXPECT_EQ(v, 496u);
}

// Lane 31 executes a shfl whose mask 0x7fffffff leaves it out: undefined in the manual.
TEST(EmuSync, ShflOutsideItsMemberMask) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %v;
  mov.u32 %v, %laneid;
  shfl.sync.down.b32 %v, %v, 1, 31, 0x7fffffff;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  auto r = run1(b, 32, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::warp_mask);
  EXPECT_EQ(r.finding->pos.line, 9u);
  EXPECT_EQ(r.finding->who->thread[0], 31u);
}

// Lanes 0-15 and 16-31 of one warp wait at two different bar.sync instructions.
TEST(EmuSync, BarrierDivergenceInAWarp) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %t;
  .reg .pred %p;
  mov.u32 %t, %tid.x;
  setp.lt.u32 %p, %t, 16;
  @%p bra A;
  bar.sync 0;
  bra E;
A:
  bar.sync 0;
E:
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  auto r = run1(b, 32, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::barrier_divergence);
}

// Warp 0 waits at barrier 1, warp 1 at barrier 2, each counting 64 threads: neither completes.
TEST(EmuSync, DeadlockNamesTheBlockedWarps) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %t;
  .reg .pred %p;
  mov.u32 %t, %tid.x;
  setp.lt.u32 %p, %t, 32;
  @%p bra A;
  bar.sync 2, 64;
  bra E;
A:
  bar.sync 1, 64;
E:
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  auto r = run1(b, 64, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::deadlock);
  EXPECT_NE(r.finding->message.find("warp 0"), std::string::npos) << r.finding->message;
  EXPECT_NE(r.finding->message.find("warp 1"), std::string::npos) << r.finding->message;
}

TEST(EmuSync, BarrierCountNotAMultipleOf32) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %n;
  mov.u32 %n, 48;
  bar.sync 0, %n;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  auto r = run1(b, 64, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::barrier_count);
}

TEST(EmuSync, MisalignedLoad) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %v;
  .reg .b64 %o;
  ld.param.u64 %o, [out];
  ld.global.u32 %v, [%o+2];
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 16, Init::written);
  auto r = run1(b, 1, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::misaligned);
}

// 64 threads add 1 to bin tid % 4 of a shared histogram (16 each), reached through a generic
// address (cvta.shared); thread 0 copies the bins out after a barrier.
TEST(EmuSync, SharedAtomicsThroughGenericAddresses) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .u32 bins[4];
  .reg .b32 %t, %b, %v, %old;
  .reg .pred %p;
  .reg .b64 %g, %a, %o, %off;
  mov.u32 %t, %tid.x;
  setp.ge.u32 %p, %t, 4;
  @%p bra INIT_DONE;
  mul.wide.u32 %off, %t, 4;
  mov.u64 %a, bins;
  add.u64 %a, %a, %off;
  st.shared.u32 [%a], 0;
INIT_DONE:
  bar.sync 0;
  and.b32 %b, %t, 3;
  mul.wide.u32 %off, %b, 4;
  mov.u64 %a, bins;
  cvta.shared.u64 %g, %a;
  add.u64 %g, %g, %off;
  atom.add.u32 %old, [%g], 1;
  bar.sync 0;
  setp.ge.u32 %p, %t, 4;
  @%p bra END;
  mul.wide.u32 %off, %t, 4;
  mov.u64 %a, bins;
  add.u64 %a, %a, %off;
  ld.shared.u32 %v, [%a];
  ld.param.u64 %o, [out];
  add.u64 %o, %o, %off;
  st.global.u32 [%o], %v;
END:
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m) << b.finding->message;
  uint64_t out = b.m->alloc("out", 16, Init::unwritten);
  auto r = run1(b, 64, out);
  ASSERT_TRUE(r.ok()) << r.finding->message << " line " << r.finding->pos.line;
  for (uint32_t v : get<uint32_t>(*b.m, out, 4)) EXPECT_EQ(v, 16u);
}

// A shared value never written, loaded and stored to an output: uninit at the store.
TEST(EmuSync, UninitSharedReadReachesAnOutput) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .u32 s[32];
  .reg .b32 %v;
  .reg .b64 %o;
  ld.shared.u32 %v, [s+8];
  ld.param.u64 %o, [out];
  st.global.u32 [%o], %v;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 4, Init::unwritten);
  auto r = run1(b, 1, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::uninit);
  EXPECT_NE(r.finding->message.find("line 10"), std::string::npos) << r.finding->message;  // the ld.shared
}

}  // namespace
}  // namespace ptxforge::emu
