// The race detector and the CTA rotation wired into Machine, on small kernels whose verdict
// follows from the PTX memory model: a flag handed between CTAs with release/acquire (no race,
// and it terminates only because resident CTAs rotate) and with volatile accesses (a race on
// the data), a CTA waiting on a later one that cannot become resident (budget), the "last
// block" pattern with and without its fence, bar.arrive as a producer's release, atomics of
// many CTAs, ld.global.nc of bytes the launch wrote, and a read set past 64 readers (the
// oldest forgotten first).
#include <algorithm>

#include <gtest/gtest.h>

#include "emu/engine.h"
#include "emu/machine_testing.h"

namespace ptxforge::emu {
namespace {

uint32_t line_of(const std::string& text, std::string_view marker) {
  size_t at = text.find(marker);
  if (at == std::string::npos) return 0;
  return static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
}

ThreadId tid(uint32_t cta, uint32_t thread) { return ThreadId{{cta, 0, 0}, {thread, 0, 0}}; }

LaunchResult launch(Machine& m, std::string_view entry, uint32_t ctas, uint32_t threads,
                    const std::vector<ParamBytes>& params, uint64_t budget = uint64_t{1} << 33) {
  LaunchConfig cfg;
  cfg.grid = {ctas, 1, 1};
  cfg.block = {threads, 1, 1};
  cfg.budget = budget;
  return m.launch(entry, cfg, params);
}

// Every CTA but the last waits for the last CTA's flag, then copies the data it published.
std::string flag_kernel(std::string_view load_flag, std::string_view store_flag) {
  return std::string(kHeader) + R"(
.visible .entry k(.param .u64 data, .param .u64 flag, .param .u64 out)
{
  .reg .pred %p;
  .reg .b32 %c, %last, %f, %v;
  .reg .b64 %d, %fl, %o, %off;
  ld.param.u64 %d, [data];
  ld.param.u64 %fl, [flag];
  ld.param.u64 %o, [out];
  mov.u32 %c, %ctaid.x;
  mov.u32 %last, %nctaid.x;
  sub.u32 %last, %last, 1;
  setp.eq.u32 %p, %c, %last;
  @%p bra PRODUCE;
WAIT:
  )" + std::string(load_flag) + R"( %f, [%fl];
  setp.eq.u32 %p, %f, 0;
  @%p bra WAIT;
  ld.global.u32 %v, [%d];   // the consumer's read
  mul.wide.u32 %off, %c, 4;
  add.u64 %o, %o, %off;
  st.global.u32 [%o], %v;
  ret;
PRODUCE:
  mov.u32 %v, 42;
  st.global.u32 [%d], %v;   // the producer's write
  )" + std::string(store_flag) + R"( [%fl], 1;
  ret;
}
)";
}

struct FlagRun {
  Built b;
  uint64_t out = 0;
  LaunchResult r;
};
FlagRun run_flag(const std::string& src, uint32_t ctas, uint64_t budget = uint64_t{1} << 24) {
  FlagRun f{build(src), 0, {}};
  if (!f.b.m) return f;
  uint64_t data = f.b.m->alloc("data", 4, Init::written);
  uint64_t flag = f.b.m->alloc("flag", 4, Init::written);
  f.b.m->write(flag, std::vector<uint8_t>(4, 0));
  f.out = f.b.m->alloc("out", uint64_t{ctas} * 4, Init::unwritten);
  f.r = launch(*f.b.m, "k", ctas, 1, {u64p(data), u64p(flag), u64p(f.out)}, budget);
  return f;
}

// 8 CTAs: CTAs 0..6 spin on the flag of CTA 7, which is resident with them (8 at once) and
// gets its turn when they spend their quanta. st.release / ld.acquire at .gpu order the data.
TEST(EmuChecks, ReleaseAcquireFlagOfALaterResidentCta) {
  auto f = run_flag(flag_kernel("ld.acquire.gpu.global.u32", "st.release.gpu.global.u32"), 8);
  ASSERT_TRUE(f.b.m);
  ASSERT_TRUE(f.r.ok()) << f.r.finding->message;
  auto out = get<uint32_t>(*f.b.m, f.out, 7);
  for (uint32_t c = 0; c < 7; ++c) EXPECT_EQ(out[c], 42u) << c;
}

// 9 CTAs: CTAs 0..7 fill every resident slot and spin; CTA 8 is never admitted (as on a GPU
// with too few SMs to hold all nine). The launch ends in budget, never hangs.
TEST(EmuChecks, WaitingOnALaterNonResidentCtaEndsInBudget) {
  auto f = run_flag(flag_kernel("ld.acquire.gpu.global.u32", "st.release.gpu.global.u32"), 9, uint64_t{1} << 20);
  ASSERT_TRUE(f.b.m);
  ASSERT_FALSE(f.r.ok());
  EXPECT_EQ(f.r.finding->kind, FindingKind::budget) << f.r.finding->message;
}

// Volatile flag accesses are strong (relaxed.sys) but neither release nor acquire: a pair of
// them with no atomic and no fence orders nothing, so the flag itself races (the memory model
// would call the pair morally strong; the engine reports it, as racecheck does, because the
// data behind such a flag is unordered): the producer's store meets the consumer's poll.
TEST(EmuChecks, VolatileFlagWithoutAFenceRaces) {
  std::string src = flag_kernel("ld.volatile.global.u32", "st.volatile.global.u32");
  auto f = run_flag(src, 2);
  ASSERT_TRUE(f.b.m);
  ASSERT_FALSE(f.r.ok());
  EXPECT_EQ(f.r.finding->kind, FindingKind::race) << f.r.finding->message;
  EXPECT_EQ(f.r.finding->pos.line, line_of(src, "st.volatile.global.u32"));
  EXPECT_EQ(f.r.finding->who, tid(1, 0));
  EXPECT_EQ(f.r.finding->buffer, "flag");
  ASSERT_TRUE(f.r.finding->other);
  EXPECT_EQ(f.r.finding->other->pos.line, line_of(src, "ld.volatile.global.u32"));
  EXPECT_EQ(f.r.finding->other->who, tid(0, 0));
  EXPECT_FALSE(f.r.finding->other->write);
}

// The same flag with a fence before the producer's store (membar.gl: the release pattern):
// the flag pair synchronises, so the poll is no race; the consumer still reads the data with
// no acquire (no fence after its poll), so the data races.
TEST(EmuChecks, FencedVolatileFlagLeavesTheUnacquiredDataRacing) {
  std::string src = flag_kernel("ld.volatile.global.u32", "membar.gl;\n  st.volatile.global.u32");
  auto f = run_flag(src, 2);
  ASSERT_TRUE(f.b.m);
  ASSERT_FALSE(f.r.ok());
  EXPECT_EQ(f.r.finding->kind, FindingKind::race) << f.r.finding->message;
  EXPECT_EQ(f.r.finding->pos.line, line_of(src, "the consumer's read"));
  EXPECT_EQ(f.r.finding->buffer, "data");
  ASSERT_TRUE(f.r.finding->other);
  EXPECT_EQ(f.r.finding->other->pos.line, line_of(src, "the producer's write"));
}

// The "last block" pattern: each CTA writes its partial, fences, takes a ticket with an
// atomic; the last fences and sums the partials: 1 + 2 + 3 + 4 = 10, no race.
std::string last_block(bool first_fence) {
  return std::string(kHeader) + R"(
.visible .entry k(.param .u64 partial, .param .u64 count, .param .u64 out)
{
  .reg .pred %p;
  .reg .b32 %c, %n, %t, %v, %s, %k;
  .reg .b64 %pp, %pc, %po, %a;
  ld.param.u64 %pp, [partial];
  ld.param.u64 %pc, [count];
  ld.param.u64 %po, [out];
  mov.u32 %c, %ctaid.x;
  mov.u32 %n, %nctaid.x;
  add.u32 %v, %c, 1;
  mul.wide.u32 %a, %c, 4;
  add.u64 %a, %pp, %a;
  st.global.u32 [%a], %v;   // the partial
  )" + (first_fence ? "fence.acq_rel.gpu;" : "") + R"(
  atom.global.add.u32 %t, [%pc], 1;
  sub.u32 %k, %n, 1;
  setp.ne.u32 %p, %t, %k;
  @%p bra DONE;
  fence.acq_rel.gpu;
  mov.u32 %s, 0;
  mov.u32 %k, 0;
SUM:
  mul.wide.u32 %a, %k, 4;
  add.u64 %a, %pp, %a;
  ld.global.u32 %v, [%a];   // the last CTA's read
  add.u32 %s, %s, %v;
  add.u32 %k, %k, 1;
  setp.lt.u32 %p, %k, %n;
  @%p bra SUM;
  st.global.u32 [%po], %s;
DONE:
  ret;
}
)";
}

LaunchResult run_last_block(Built& b, uint64_t& out) {
  uint64_t partial = b.m->alloc("partial", 16, Init::written);
  uint64_t count = b.m->alloc("count", 4, Init::written);
  b.m->write(count, std::vector<uint8_t>(4, 0));
  out = b.m->alloc("out", 4, Init::unwritten);
  return launch(*b.m, "k", 4, 1, {u64p(partial), u64p(count), u64p(out)});
}

TEST(EmuChecks, LastBlockPatternWithItsFencesHasNoRace) {
  auto b = build(last_block(true));
  ASSERT_TRUE(b.m);
  uint64_t out = 0;
  auto r = run_last_block(b, out);
  ASSERT_TRUE(r.ok()) << r.finding->message;
  EXPECT_EQ(get<uint32_t>(*b.m, out, 1)[0], 10u);
}

// Without the writers' fence the relaxed atomic releases nothing: CTA 3 (the last ticket:
// CTAs take their turns in order) reads CTA 0's partial unordered.
TEST(EmuChecks, LastBlockPatternWithoutTheWritersFenceRaces) {
  std::string src = last_block(false);
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = 0;
  auto r = run_last_block(b, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::race) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, line_of(src, "the last CTA's read"));
  EXPECT_EQ(r.finding->who, tid(3, 0));
  EXPECT_EQ(r.finding->buffer, "partial");
  EXPECT_EQ(r.finding->offset, 0u);
  ASSERT_TRUE(r.finding->other);
  EXPECT_EQ(r.finding->other->pos.line, line_of(src, "the partial"));
  EXPECT_EQ(r.finding->other->who, tid(0, 0));
}

// Warp 1 fills shared memory and arrives at barrier 1; warp 0 waits there for 64 threads and
// reads: the arrival releases warp 1's stores to warp 0. With warp 0 waiting for 32 threads
// only (itself) and no arrival, nothing orders them: a race at warp 0's read.
std::string producer_consumer(bool arrive) {
  return std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .u32 s[32];
  .reg .pred %p;
  .reg .b32 %t, %l, %a, %v, %sb;
  .reg .b64 %o, %off;
  mov.u32 %t, %tid.x;
  mov.u32 %l, %laneid;
  shl.b32 %a, %l, 2;
  mov.u32 %sb, s;
  add.u32 %a, %a, %sb;
  setp.lt.u32 %p, %t, 32;
  @%p bra CONSUME;
  mul.lo.u32 %v, %l, 3;
  st.shared.u32 [%a], %v;   // the producer's store
  )" + (arrive ? "bar.arrive 1, 64;" : "") + R"(
  ret;
CONSUME:
  )" + (arrive ? "bar.sync 1, 64;" : "bar.sync 1, 32;") + R"(
  ld.shared.u32 %v, [%a];   // the consumer's read
  ld.param.u64 %o, [out];
  mul.wide.u32 %off, %l, 4;
  add.u64 %o, %o, %off;
  st.global.u32 [%o], %v;
  ret;
}
)";
}

TEST(EmuChecks, BarArriveReleasesTheProducersStores) {
  std::string src = producer_consumer(true);
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 32 * 4, Init::unwritten);
  auto r = launch(*b.m, "k", 1, 64, {u64p(out)});
  ASSERT_TRUE(r.ok()) << r.finding->message;
  auto v = get<uint32_t>(*b.m, out, 32);
  for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(v[l], 3 * l) << l;

  std::string bad = producer_consumer(false);
  auto b2 = build(bad);
  ASSERT_TRUE(b2.m);
  uint64_t out2 = b2.m->alloc("out", 32 * 4, Init::unwritten);
  auto r2 = launch(*b2.m, "k", 1, 64, {u64p(out2)});
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.finding->kind, FindingKind::race) << r2.finding->message;
  EXPECT_EQ(r2.finding->pos.line, line_of(bad, "the consumer's read"));
  EXPECT_EQ(r2.finding->who, tid(0, 0));
  ASSERT_TRUE(r2.finding->other);
  EXPECT_EQ(r2.finding->other->pos.line, line_of(bad, "the producer's store"));
  EXPECT_EQ(r2.finding->other->who, tid(0, 32));
}

// 4 CTAs x 64 threads each add 1 with red.global.add: atomics are morally strong with each
// other, no race, and the count is 256.
TEST(EmuChecks, AtomicsOfManyCtasDoNotRace) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 count)
{
  .reg .b64 %c;
  ld.param.u64 %c, [count];
  red.global.add.u32 [%c], 1;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t count = b.m->alloc("count", 4, Init::written);
  b.m->write(count, std::vector<uint8_t>(4, 0));
  auto r = launch(*b.m, "k", 4, 64, {u64p(count)});
  ASSERT_TRUE(r.ok()) << r.finding->message;
  EXPECT_EQ(get<uint32_t>(*b.m, count, 1)[0], 256u);
}

// ld.global.nc of a word the same launch stored: outside the memory model. Written by an
// earlier launch, the same load is fine (the kernel boundary orders it).
TEST(EmuChecks, NonCoherentLoadOfBytesWrittenInTheLaunch) {
  std::string src = std::string(kHeader) + R"(
.visible .entry both(.param .u64 buf, .param .u64 out)
{
  .reg .b32 %v;
  .reg .b64 %b, %o;
  ld.param.u64 %b, [buf];
  ld.param.u64 %o, [out];
  mov.u32 %v, 7;
  st.global.u32 [%b+4], %v;
  ld.global.nc.u32 %v, [%b+4];   // the non-coherent read
  st.global.u32 [%o], %v;
  ret;
}
.visible .entry write(.param .u64 buf, .param .u64 out)
{
  .reg .b32 %v;
  .reg .b64 %b;
  ld.param.u64 %b, [buf];
  mov.u32 %v, 7;
  st.global.u32 [%b+4], %v;
  ret;
}
.visible .entry read(.param .u64 buf, .param .u64 out)
{
  .reg .b32 %v;
  .reg .b64 %b, %o;
  ld.param.u64 %b, [buf];
  ld.param.u64 %o, [out];
  ld.global.nc.u32 %v, [%b+4];
  st.global.u32 [%o], %v;
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t buf = b.m->alloc("buf", 8, Init::written);
  uint64_t out = b.m->alloc("out", 4, Init::unwritten);
  std::vector<ParamBytes> p{u64p(buf), u64p(out)};
  auto r = launch(*b.m, "both", 1, 1, p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.finding->kind, FindingKind::race);
  EXPECT_NE(r.finding->message.find("emu-nc-after-write"), std::string::npos) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, line_of(src, "the non-coherent read"));
  EXPECT_EQ(r.finding->buffer, "buf");
  EXPECT_EQ(r.finding->offset, 4u);

  ASSERT_TRUE(launch(*b.m, "write", 1, 1, p).ok());
  auto r2 = launch(*b.m, "read", 1, 1, p);
  ASSERT_TRUE(r2.ok()) << r2.finding->message;
  EXPECT_EQ(get<uint32_t>(*b.m, out, 1)[0], 7u);
}

// A granule read by 100 threads of one phase keeps the last 64 reads (docs/emu.md section 5:
// past 64 concurrent accessors the oldest is forgotten, and the set is kept in arrival order).
// Thread 99 then writes it: the race named is with the oldest read still held, thread 36's.
TEST(EmuChecks, AReadSetKeepsTheNewest64InOrder) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b32 s[1];
  .reg .pred %p;
  .reg .b32 %t, %v;
  mov.u32 %t, %tid.x;
  ld.shared.u32 %v, [s];   // the read
  setp.ne.u32 %p, %t, 99;
  @%p bra DONE;
  st.shared.u32 [s], %t;   // the write
DONE:
  ret;
}
)";
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t out = b.m->alloc("out", 4, Init::written);
  auto r = launch(*b.m, "k", 1, 100, {u64p(out)});
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.finding->kind, FindingKind::race) << r.finding->message;
  EXPECT_EQ(r.finding->pos.line, line_of(src, "// the write"));
  EXPECT_EQ(r.finding->who, tid(0, 99));
  ASSERT_TRUE(r.finding->other);
  EXPECT_EQ(r.finding->other->pos.line, line_of(src, "// the read"));
  EXPECT_EQ(r.finding->other->who, tid(0, 36));
  EXPECT_FALSE(r.finding->other->write);
}

}  // namespace
}  // namespace ptxforge::emu
