// The engine's checks on the adversarial kernels of tests/adversarial (each fits a level-1
// task's signature and assembles with ptxas): a race on shared and on global memory whose
// answer is right, a read of never-written shared memory, a divergent bar.sync, a shfl.sync
// whose member mask names lanes that left, and a misaligned .v4 load. Each asserts the
// finding's kind, its PTX line (found by a marker in the kernel's own text) and its threads,
// worked out by hand from the kernel and the engine's schedule (warps in order, lanes in
// lockstep until they diverge).
#include <algorithm>

#include <gtest/gtest.h>

#include "emu/engine.h"
#include "emu/machine_testing.h"

namespace ptxforge::emu {
namespace {

std::string adversarial(const std::string& name) {
  return slurp(std::string(PTXFORGE_SOURCE_DIR) + "/tests/adversarial/" + name + "/kernel.ptx");
}

// The 1-based line of the first line of `text` containing `marker` (0 when none does).
uint32_t line_of(const std::string& text, std::string_view marker) {
  size_t at = text.find(marker);
  if (at == std::string::npos) return 0;
  return static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
}

ThreadId tid(uint32_t cta, uint32_t thread) { return ThreadId{{cta, 0, 0}, {thread, 0, 0}}; }

// vector_add's arguments for n elements: a[i] = i, b[i] = 2i; c an output.
struct VectorAdd {
  uint64_t a = 0, b = 0, c = 0;
  std::vector<ParamBytes> params;
};
VectorAdd vector_add_args(Machine& m, uint32_t n) {
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i), y[i] = 2.0f * float(i);
  VectorAdd v;
  v.a = floats(m, "a", x);
  v.b = floats(m, "b", y);
  v.c = m.alloc("c", uint64_t{n} * 4, Init::unwritten, true);
  v.params = {u64p(v.a), u64p(v.b), u64p(v.c), u32p(n)};
  return v;
}

LaunchResult launch(Machine& m, const std::string& entry, uint32_t ctas, uint32_t threads,
                    const std::vector<ParamBytes>& params) {
  LaunchConfig cfg;
  cfg.grid = {ctas, 1, 1};
  cfg.block = {threads, 1, 1};
  return m.launch(entry, cfg, params);
}

// Lane 16's store of s[16] (stride 16 of the unsynchronised warp steps) follows lane 0's load
// of s[16] with nothing between them: a write-after-read race, at the store, on shared memory.
TEST(EmuChecks, SharedRaceRightAnswer) {
  std::string text = adversarial("shared_race_right_answer");
  auto b = build(text);
  ASSERT_TRUE(b.m);
  uint64_t x = floats(*b.m, "x", std::vector<float>(1000, 1.0f));
  uint64_t out = b.m->alloc("out", 4, Init::unwritten, true);
  auto r = launch(*b.m, "reduce_sum", 1, 256, {u64p(x), u64p(out), u32p(1000)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::race) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, line_of(text, "lane 16 writes s[16] here"));
  EXPECT_EQ(r.finding->who, tid(0, 16));
  EXPECT_EQ(r.finding->buffer, "shared memory");
  EXPECT_EQ(r.finding->offset, 64u);
  ASSERT_TRUE(r.finding->other);
  EXPECT_EQ(r.finding->other->pos.line, line_of(text, "lane 0 reads s[16] here"));
  EXPECT_EQ(r.finding->other->who, tid(0, 0));
  EXPECT_FALSE(r.finding->other->write);
}

// The same kernel with the two bar.warp.sync a warp-synchronous step needs (after the loads,
// after the store) has no race, and the sum of 1000 ones is 1000: the answer was right all along.
TEST(EmuChecks, BarWarpSyncOrdersTheWarpSteps) {
  std::string text = adversarial("shared_race_right_answer");
  std::string add = "    add.f32 %v, %v, %w;\n    st.shared.f32 [%sa], %v;   // lane 16";
  size_t at = text.find(add);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + std::string("    add.f32 %v, %v, %w;\n").size(), "    bar.warp.sync -1;\n");
  size_t st = text.find("// lane 16 writes s[16] here");
  text.insert(text.find('\n', st) + 1, "    bar.warp.sync -1;\n");
  auto b = build(text);
  ASSERT_TRUE(b.m);
  uint64_t x = floats(*b.m, "x", std::vector<float>(1000, 1.0f));
  uint64_t out = b.m->alloc("out", 4, Init::unwritten, true);
  auto r = launch(*b.m, "reduce_sum", 1, 256, {u64p(x), u64p(out), u32p(1000)});
  ASSERT_TRUE(r.ok()) << r.finding->message;
  EXPECT_EQ(get<float>(*b.m, out, 1)[0], 1000.0f);
}

// shfl.sync in the place of bar.warp.sync: the manual gives shfl no memory ordering, so the
// race stays (at the same store, by the same lanes).
TEST(EmuChecks, ShflIsNotAMemoryBarrier) {
  std::string text = adversarial("shared_race_right_answer");
  size_t st = text.find("    st.shared.f32 [%sa], %v;   // lane 16");
  ASSERT_NE(st, std::string::npos);
  text.insert(st, "    shfl.sync.idx.b32 %w, %v, 0, 31, -1;\n");
  auto b = build(text);
  ASSERT_TRUE(b.m);
  uint64_t x = floats(*b.m, "x", std::vector<float>(1000, 1.0f));
  uint64_t out = b.m->alloc("out", 4, Init::unwritten, true);
  auto r = launch(*b.m, "reduce_sum", 1, 256, {u64p(x), u64p(out), u32p(1000)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::race) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, line_of(text, "lane 16 writes s[16] here"));
  EXPECT_EQ(r.finding->who, tid(0, 16));
}

// n = 1000: 4 CTAs. CTA 0's thread 0 stores c[0] at the marked line; CTA 1's thread 0 stores
// the same word next, with no atomic or release/acquire between them.
TEST(EmuChecks, GlobalRaceRightAnswer) {
  std::string text = adversarial("global_race_right_answer");
  auto b = build(text);
  ASSERT_TRUE(b.m);
  auto v = vector_add_args(*b.m, 1000);
  auto r = launch(*b.m, "vector_add", 4, 256, v.params);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::race) << r.finding->message;
  uint32_t line = line_of(text, "every CTA's thread 0 writes c[0]");
  EXPECT_EQ(r.finding->pos.line, line);
  EXPECT_EQ(r.finding->who, tid(1, 0));
  EXPECT_EQ(r.finding->buffer, "c");
  EXPECT_EQ(r.finding->offset, 0u);
  ASSERT_TRUE(r.finding->other);
  EXPECT_EQ(r.finding->other->pos.line, line);
  EXPECT_EQ(r.finding->other->who, tid(0, 0));
  EXPECT_TRUE(r.finding->other->write);
}

// Warps 0..6 fill their slots; warp 7 (threads 224..255) loads never-written slots and stores
// the sum to c: the first such thread is 224 of CTA 0, the message names the load's line.
TEST(EmuChecks, UninitSharedRead) {
  std::string text = adversarial("uninit_shared_read");
  auto b = build(text);
  ASSERT_TRUE(b.m);
  auto v = vector_add_args(*b.m, 1024);
  auto r = launch(*b.m, "vector_add", 4, 256, v.params);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::uninit) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, line_of(text, "... and store it to c"));
  EXPECT_EQ(r.finding->who, tid(0, 224));
  EXPECT_NE(r.finding->message.find("line " + std::to_string(line_of(text, "threads 224..255 read a slot"))),
            std::string::npos)
      << r.finding->message;
}

// Lanes 0..15 of warp 0 block at the bar.sync in the branch, lanes 16..31 at the next one:
// the finding names lane 16 at its barrier, and the message both lines.
TEST(EmuChecks, BarrierDivergence) {
  std::string text = adversarial("barrier_divergence");
  auto b = build(text);
  ASSERT_TRUE(b.m);
  auto v = vector_add_args(*b.m, 1024);
  auto r = launch(*b.m, "vector_add", 4, 256, v.params);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::barrier_divergence) << r.finding->message;
  uint32_t half = line_of(text, "lanes 0..15 wait here"), common = line_of(text, "lanes 16..31 wait here");
  EXPECT_EQ(r.finding->pos.line, common);
  EXPECT_EQ(r.finding->who, tid(0, 16));
  EXPECT_NE(r.finding->message.find("line " + std::to_string(half)), std::string::npos) << r.finding->message;
}

// Lanes 16..31 have exited when lanes 0..15 run the shfl; lane 0 reads lane 16 first.
TEST(EmuChecks, ShflMaskMissingLane) {
  std::string text = adversarial("shfl_mask_missing_lane");
  auto b = build(text);
  ASSERT_TRUE(b.m);
  auto v = vector_add_args(*b.m, 1024);
  auto r = launch(*b.m, "vector_add", 4, 256, v.params);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::warp_mask) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, line_of(text, "full mask, executed by 16 lanes"));
  EXPECT_EQ(r.finding->who, tid(0, 0));
  EXPECT_NE(r.finding->message.find("lane 16"), std::string::npos) << r.finding->message;
}

// Thread 0 of CTA 0 loads 16 bytes at a + 4: a multiple of 4, not of 16.
TEST(EmuChecks, MisalignedV4) {
  std::string text = adversarial("misaligned_v4");
  auto b = build(text);
  ASSERT_TRUE(b.m);
  auto v = vector_add_args(*b.m, 1024);
  auto r = launch(*b.m, "vector_add", 1, 256, v.params);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::misaligned) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, line_of(text, "4-byte aligned, not 16"));
  EXPECT_EQ(r.finding->who, tid(0, 0));
  EXPECT_NE(r.finding->message.find("not a multiple of 16"), std::string::npos) << r.finding->message;
}

// An out-of-bounds store names the nearest buffer: 4 bytes before 'c' is before the start of
// 'c' (not past the end of 'b', whose end lies a 4 KiB gap away), and 'b'[1024] is past b.
TEST(EmuChecks, OutOfBoundsNamesTheNearestBuffer) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 p)
{
  .reg .b64 %a;
  .reg .f32 %z;
  ld.param.u64 %a, [p];
  mov.f32 %z, 0f00000000;
  st.global.f32 [%a], %z;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t bb = b.m->alloc("b", 4096, Init::written);
  uint64_t c = b.m->alloc("c", 4096, Init::unwritten);
  auto r = launch(*b.m, "k", 1, 1, {u64p(c - 4)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::oob);
  EXPECT_EQ(r.finding->buffer, "c");
  EXPECT_NE(r.finding->message.find("write before the start of 'c'"), std::string::npos) << r.finding->message;
  auto r2 = launch(*b.m, "k", 1, 1, {u64p(bb + 4096)});
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.finding->buffer, "b");
  EXPECT_EQ(r2.finding->offset, 4096u);
}

}  // namespace
}  // namespace ptxforge::emu
