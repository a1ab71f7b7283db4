// CTAs on several host threads (emu/cta_pool.h): the same launches with 1 and 2 or 4 host
// threads give identical results field by field (outputs, last writers, lane-instructions,
// per-instruction counts, findings), an eligible kernel really runs on more than one thread,
// a kernel that could order accesses across CTAs never does, and a parallel run that finds
// anything (a race across CTAs, the budget, an out-of-bounds access, an uninitialised value,
// ld.global.nc after a write) is thrown away and run again on one thread.
#include "emu/cta_pool.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "emu/engine.h"
#include "emu/lower.h"
#include "emu/machine_testing.h"

namespace ptxforge::emu {
namespace {

struct Buffer {
  std::string name;
  uint32_t words = 0;
  Init init = Init::written;
  bool track = false;  // last writers
};

struct Outcome {
  LaunchResult r;
  std::vector<std::vector<uint32_t>> words;                 // each buffer's contents
  std::vector<std::vector<std::optional<Writer>>> writers;  // each tracked buffer's last writers
  std::vector<InstructionCount> counts;
};

// Builds `src`, fills each buffer with i * 7 + 1 (inputs and scratch), launches `k` with the
// buffers' addresses then `scalars` as parameters, and reads everything back.
Outcome run(const std::string& src, const std::vector<Buffer>& buffers, const std::vector<ParamBytes>& scalars,
            uint32_t grid, uint32_t block, uint32_t threads, uint64_t budget = uint64_t{1} << 33) {
  Outcome o;
  auto b = build(src);
  EXPECT_TRUE(b.m) << (b.finding ? b.finding->message : "");
  if (!b.m) return o;
  std::vector<ParamBytes> params;
  std::vector<uint64_t> at;
  for (const Buffer& buf : buffers) {
    uint64_t a = b.m->alloc(buf.name, uint64_t{buf.words} * 4, buf.init, buf.track);
    std::vector<uint32_t> fill(buf.words);
    for (uint32_t i = 0; i < buf.words; ++i) fill[i] = i * 7 + 1;
    if (buf.init == Init::written) b.m->write(a, {reinterpret_cast<const uint8_t*>(fill.data()), fill.size() * 4});
    at.push_back(a);
    params.push_back(u64p(a));
  }
  params.insert(params.end(), scalars.begin(), scalars.end());
  LaunchConfig cfg;
  cfg.grid = {grid, 1, 1};
  cfg.block = {block, 1, 1};
  cfg.budget = budget;
  cfg.host_threads = threads;
  o.r = b.m->launch("k", cfg, params);
  for (size_t i = 0; i < buffers.size(); ++i) {
    o.words.push_back(get<uint32_t>(*b.m, at[i], buffers[i].words));
    std::vector<std::optional<Writer>> w;
    if (buffers[i].track)
      for (uint32_t e = 0; e < buffers[i].words; ++e) w.push_back(b.m->last_writer(at[i] + 4 * e));
    o.writers.push_back(std::move(w));
  }
  o.counts = b.m->counts();
  return o;
}

void expect_same_finding(const std::optional<Finding>& a, const std::optional<Finding>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(a->kind, b->kind);
  EXPECT_EQ(a->message, b->message);
  EXPECT_EQ(a->pos.line, b->pos.line);
  EXPECT_EQ(a->pos.col, b->pos.col);
  EXPECT_EQ(a->who, b->who);
  EXPECT_EQ(a->buffer, b->buffer);
  EXPECT_EQ(a->offset, b->offset);
  ASSERT_EQ(a->other.has_value(), b->other.has_value());
  if (a->other) {
    EXPECT_EQ(a->other->pos.line, b->other->pos.line);
    EXPECT_EQ(a->other->who, b->other->who);
    EXPECT_EQ(a->other->write, b->other->write);
  }
}

// Every field of the two runs' results.
void expect_same(const Outcome& one, const Outcome& many) {
  expect_same_finding(one.r.finding, many.r.finding);
  EXPECT_EQ(one.r.lane_instructions, many.r.lane_instructions);
  EXPECT_EQ(one.words, many.words);
  ASSERT_EQ(one.writers.size(), many.writers.size());
  for (size_t i = 0; i < one.writers.size(); ++i) {
    ASSERT_EQ(one.writers[i].size(), many.writers[i].size());
    for (size_t e = 0; e < one.writers[i].size(); ++e) {
      ASSERT_EQ(one.writers[i][e].has_value(), many.writers[i][e].has_value()) << e;
      if (!one.writers[i][e]) continue;
      EXPECT_EQ(one.writers[i][e]->who, many.writers[i][e]->who) << e;
      EXPECT_EQ(one.writers[i][e]->pos.line, many.writers[i][e]->pos.line) << e;
    }
  }
  ASSERT_EQ(one.counts.size(), many.counts.size());
  for (size_t i = 0; i < one.counts.size(); ++i) {
    EXPECT_EQ(one.counts[i].warp_issues, many.counts[i].warp_issues) << one.counts[i].opcode;
    EXPECT_EQ(one.counts[i].lane_executions, many.counts[i].lane_executions) << one.counts[i].opcode;
  }
}

// A launch that finds `kind` on one thread; on several, its parallel run is thrown away and
// the rerun gives the one-thread result field by field.
void expect_one_thread_finding(const Outcome& one, const Outcome& two, FindingKind kind) {
  ASSERT_FALSE(one.r.ok());
  EXPECT_EQ(one.r.finding->kind, kind) << one.r.finding->message;
  EXPECT_TRUE(two.r.rerun_on_one_thread);
  expect_same(one, two);
}

// out[i] = f(a[i]) + f(a[i ^ 1]) for i < n: a loop per thread, a neighbour through .shared and
// a barrier, ld.global.nc of the input, a guarded store (the last CTA has a tail). `extra` goes
// before the final store (the variants' defects).
std::string work_kernel(std::string_view extra = "", int iters = 40) {
  return std::string(kHeader) + R"(
.visible .entry k(.param .u64 a, .param .u64 out, .param .u64 buf, .param .u32 n)
{
  .reg .pred %p, %q;
  .reg .b32 %i, %t, %c, %nt, %v, %w, %k, %n, %sa, %j;
  .reg .b64 %pa, %po, %pb, %off;
  .shared .align 4 .b32 sh[128];
  ld.param.u64 %pa, [a];
  ld.param.u64 %po, [out];
  ld.param.u64 %pb, [buf];
  ld.param.u32 %n, [n];
  mov.u32 %t, %tid.x;
  mov.u32 %c, %ctaid.x;
  mov.u32 %nt, %ntid.x;
  mad.lo.u32 %i, %c, %nt, %t;
  setp.lt.u32 %p, %i, %n;
  mul.wide.u32 %off, %i, 4;
  add.u64 %pa, %pa, %off;
  add.u64 %po, %po, %off;
  mov.u32 %v, 0;
  @%p ld.global.nc.u32 %v, [%pa];
  mov.u32 %k, 0;
LOOP:
  mad.lo.u32 %v, %v, 3, %k;
  add.u32 %k, %k, 1;
  setp.lt.u32 %q, %k, )" + std::to_string(iters) + R"(;
  @%q bra LOOP;
  mov.u32 %sa, sh;
  shl.b32 %j, %t, 2;
  add.u32 %j, %sa, %j;
  st.shared.u32 [%j], %v;
  bar.sync 0;
  xor.b32 %j, %t, 1;
  shl.b32 %j, %j, 2;
  add.u32 %j, %sa, %j;
  ld.shared.u32 %w, [%j];
  add.u32 %v, %v, %w;
)" + std::string(extra) + R"(
  @%p st.global.u32 [%po], %v;
  ret;
}
)";
}

const std::vector<Buffer> kWorkBuffers = {{"a", 1000}, {"out", 1000, Init::unwritten, true}, {"buf", 64}};

Outcome run_work(const std::string& src, uint32_t threads, uint32_t n = 1000, uint64_t budget = uint64_t{1} << 33) {
  return run(src, kWorkBuffers, {u32p(n)}, 8, 128, threads, budget);
}

TEST(EmuCtaPool, AnEligibleKernelRunsOnSeveralThreadsWithTheSameResult) {
  std::string src = work_kernel();
  Outcome one = run_work(src, 1), two = run_work(src, 2), four = run_work(src, 4);
  ASSERT_TRUE(one.r.ok()) << one.r.finding->message;
  EXPECT_EQ(one.r.host_threads, 1u);
  EXPECT_FALSE(two.r.rerun_on_one_thread);
  EXPECT_FALSE(four.r.rerun_on_one_thread);
  expect_same(one, two);
  expect_same(one, four);
  // The result is the kernel's: element 999 written by CTA 7, thread 103; the tail's lanes
  // (i >= 1000) store nothing.
  ASSERT_TRUE(one.writers[1][999]);
  EXPECT_EQ(one.writers[1][999]->who, (ThreadId{{7, 0, 0}, {103, 0, 0}}));
  EXPECT_GT(one.r.lane_instructions, 8u * 128 * 40 * 3);
}

// Enough work (64 CTAs of about a millisecond each, several under the sanitizers) that the
// thread started for the launch takes CTAs before the calling thread has run them all. Whether
// it does is up to the OS's scheduler (on a loaded machine it may start late), so a launch may
// run on one thread: up to 5 launches, each the same result, and at least one on two threads.
TEST(EmuCtaPool, ALongerLaunchRunsOnMoreThanOneThread) {
  std::string src = work_kernel("", 1000);
  std::vector<Buffer> bufs = {{"a", 8192}, {"out", 8192, Init::unwritten, true}, {"buf", 64}};
  Outcome one = run(src, bufs, {u32p(8170)}, 64, 128, 1);
  ASSERT_TRUE(one.r.ok()) << one.r.finding->message;
  EXPECT_EQ(one.r.host_threads, 1u);
  uint32_t most = 0;
  for (int attempt = 0; attempt < 5 && most < 2; ++attempt) {
    Outcome two = run(src, bufs, {u32p(8170)}, 64, 128, 2);
    EXPECT_FALSE(two.r.rerun_on_one_thread);
    EXPECT_LE(two.r.host_threads, 2u);
    expect_same(one, two);
    most = std::max(most, two.r.host_threads);
  }
  EXPECT_EQ(most, 2u) << "no launch of 64 CTAs used the second host thread";
}

// Two CTAs write buf[0]: the first thread of each CTA. A race across CTAs, found by the
// one-thread run at CTA 1's store; the parallel run sees the conflict and runs again.
TEST(EmuCtaPool, ARaceAcrossCtasIsTheOneThreadRunsFinding) {
  std::string src = work_kernel(R"(
  setp.eq.u32 %q, %t, 0;
  @%q st.global.u32 [%pb], %v;)");
  Outcome one = run_work(src, 1), two = run_work(src, 2);
  ASSERT_FALSE(one.r.ok());
  EXPECT_EQ(one.r.finding->kind, FindingKind::race) << one.r.finding->message;
  EXPECT_EQ(one.r.finding->buffer, "buf");
  EXPECT_TRUE(two.r.rerun_on_one_thread);
  EXPECT_EQ(two.r.host_threads, 1u);
  expect_same(one, two);
}

// The same race at the end of CTAs of about a millisecond: both threads are running CTAs when
// the conflict comes (what ThreadSanitizer must see: no two threads on one word's bytes).
TEST(EmuCtaPool, ARaceAcrossLongerCtasIsTheOneThreadRunsFinding) {
  std::string src = work_kernel(R"(
  setp.eq.u32 %q, %t, 0;
  @%q st.global.u32 [%pb], %v;)", 1000);
  std::vector<Buffer> bufs = {{"a", 8192}, {"out", 8192, Init::unwritten, true}, {"buf", 64}};
  Outcome one = run(src, bufs, {u32p(8170)}, 64, 128, 1), two = run(src, bufs, {u32p(8170)}, 64, 128, 2);
  ASSERT_NO_FATAL_FAILURE(expect_one_thread_finding(one, two, FindingKind::race));
}

// A CTA reads what the next CTA writes (buf[c + 1] after buf[c]): write after read, across
// CTAs, with the one-thread order deciding which access is named.
TEST(EmuCtaPool, AReadOfAnotherCtasWriteIsTheOneThreadRunsFinding) {
  std::string src = work_kernel(R"(
  setp.eq.u32 %q, %t, 0;
  mul.wide.u32 %off, %c, 4;
  add.u64 %pb, %pb, %off;
  @%q st.global.u32 [%pb], %v;
  @%q ld.global.u32 %w, [%pb+4];)");
  Outcome one = run_work(src, 1), two = run_work(src, 2);
  ASSERT_NO_FATAL_FAILURE(expect_one_thread_finding(one, two, FindingKind::race));
}

// One past the end of 'a' (n larger than the buffer): oob in the last CTA.
TEST(EmuCtaPool, OutOfBoundsIsTheOneThreadRunsFinding) {
  std::string src = work_kernel();
  Outcome one = run_work(src, 1, 1001), two = run_work(src, 2, 1001);
  ASSERT_NO_FATAL_FAILURE(expect_one_thread_finding(one, two, FindingKind::oob));
  EXPECT_EQ(one.r.finding->who, (ThreadId{{7, 0, 0}, {104, 0, 0}}));
}

// A budget the launch crosses halfway: the one-thread run stops at the exact lane-instruction,
// with the same counts so far.
TEST(EmuCtaPool, TheBudgetIsTheOneThreadRunsFinding) {
  std::string src = work_kernel();
  uint64_t total = run_work(src, 1).r.lane_instructions;
  Outcome one = run_work(src, 1, 1000, total / 2), two = run_work(src, 2, 1000, total / 2);
  ASSERT_NO_FATAL_FAILURE(expect_one_thread_finding(one, two, FindingKind::budget));
  // Exactly at the budget passes, and the parallel result stands.
  Outcome exact = run_work(src, 2, 1000, total);
  EXPECT_TRUE(exact.r.ok());
  EXPECT_FALSE(exact.r.rerun_on_one_thread);
  EXPECT_EQ(exact.r.lane_instructions, total);
}

// A never-written scratch word stored to the output: uninit.
TEST(EmuCtaPool, AnUninitialisedValueIsTheOneThreadRunsFinding) {
  std::string src = work_kernel(R"(
  ld.global.u32 %w, [%pb];
  add.u32 %v, %v, %w;)");
  std::vector<Buffer> bufs = kWorkBuffers;
  bufs[2].init = Init::unwritten;
  Outcome one = run(src, bufs, {u32p(1000)}, 8, 128, 1), two = run(src, bufs, {u32p(1000)}, 8, 128, 2);
  ASSERT_NO_FATAL_FAILURE(expect_one_thread_finding(one, two, FindingKind::uninit));
}

// ld.global.nc of a word another thread of the same CTA wrote before a barrier: the engine's
// emu-nc-after-write, found inside one CTA.
TEST(EmuCtaPool, NcAfterAWriteIsTheOneThreadRunsFinding) {
  std::string src = work_kernel(R"(
  mul.wide.u32 %off, %c, 4;
  add.u64 %pb, %pb, %off;
  setp.eq.u32 %q, %t, 0;
  @%q st.global.u32 [%pb], %v;
  bar.sync 0;
  ld.global.nc.u32 %w, [%pb];)");
  Outcome one = run_work(src, 1), two = run_work(src, 2);
  ASSERT_FALSE(one.r.ok());
  EXPECT_EQ(one.r.finding->kind, FindingKind::race) << one.r.finding->message;
  EXPECT_NE(one.r.finding->message.find("ld.global.nc"), std::string::npos) << one.r.finding->message;
  EXPECT_TRUE(two.r.rerun_on_one_thread);
  expect_same(one, two);
}

// Threads 0 and 1 of each CTA store to the CTA's own word of buf: a global race inside one
// CTA, which only the CTA's own global shadow can find in the parallel run (the claims see one
// CTA), so the run being thrown away shows that shadow found it.
TEST(EmuCtaPool, AGlobalRaceInsideOneCtaIsTheOneThreadRunsFinding) {
  std::string src = work_kernel(R"(
  setp.lt.u32 %q, %t, 2;
  mul.wide.u32 %off, %c, 4;
  add.u64 %pb, %pb, %off;
  @%q st.global.u32 [%pb], %v;)");
  Outcome one = run_work(src, 1), two = run_work(src, 2);
  ASSERT_FALSE(one.r.ok());
  EXPECT_EQ(one.r.finding->kind, FindingKind::race) << one.r.finding->message;
  EXPECT_EQ(one.r.finding->buffer, "buf");
  ASSERT_TRUE(one.r.finding->other);
  EXPECT_EQ(one.r.finding->other->who.cta, one.r.finding->who->cta);
  EXPECT_TRUE(two.r.rerun_on_one_thread);
  expect_same(one, two);
}

// A race on .shared inside one CTA: a thread overwrites its slot, which its neighbour read
// after the barrier, with no second barrier between.
TEST(EmuCtaPool, ASharedRaceInOneCtaIsTheOneThreadRunsFinding) {
  std::string src = work_kernel(R"(
  shl.b32 %j, %t, 2;
  add.u32 %j, %sa, %j;
  st.shared.u32 [%j], %v;)");
  Outcome one = run_work(src, 1), two = run_work(src, 2);
  ASSERT_FALSE(one.r.ok());
  EXPECT_EQ(one.r.finding->kind, FindingKind::race) << one.r.finding->message;
  EXPECT_EQ(one.r.finding->buffer, "shared memory");
  expect_same(one, two);
}

// Global atomics can order CTAs (and give their counts in the engine's order): the kernel runs
// on one thread only, with the same result.
TEST(EmuCtaPool, GlobalAtomicsRunOnOneThread) {
  std::string src = work_kernel(R"(
  atom.global.add.u32 %w, [%pb], 1;)");
  Outcome one = run_work(src, 1), two = run_work(src, 2);
  ASSERT_TRUE(one.r.ok()) << one.r.finding->message;
  EXPECT_EQ(one.words[2][0], 1u + 8 * 128);
  EXPECT_EQ(two.r.host_threads, 1u);
  EXPECT_FALSE(two.r.rerun_on_one_thread);
  expect_same(one, two);
}

// CTAs 0..6 spin on a plain flag that CTA 7 sets: weak accesses, so the kernel is eligible;
// on one thread the rotation of 8 resident CTAs lets CTA 7 run and the flag races. The
// parallel run must get CTA 7 resident too (a worker admits more CTAs while its residents keep
// running), meet the conflict and give the one-thread run's verdict, not spin to the budget.
TEST(EmuCtaPool, ASpinOnALaterCtasPlainFlagIsTheOneThreadRunsFinding) {
  std::string src = std::string(kHeader) + R"(
.visible .entry k(.param .u64 flag, .param .u64 out)
{
  .reg .pred %p;
  .reg .b32 %c, %f, %v;
  .reg .b64 %fl, %o;
  ld.param.u64 %fl, [flag];
  ld.param.u64 %o, [out];
  mov.u32 %c, %ctaid.x;
  setp.eq.u32 %p, %c, 7;
  @%p bra PRODUCE;
WAIT:
  ld.global.u32 %f, [%fl];
  setp.ne.u32 %p, %f, 12345;
  @%p bra WAIT;
  st.global.u32 [%o], %f;
  ret;
PRODUCE:
  mov.u32 %v, 12345;
  st.global.u32 [%fl], %v;
  ret;
}
)";
  std::vector<Buffer> bufs = {{"flag", 1}, {"out", 1, Init::unwritten, true}};
  const uint64_t budget = uint64_t{1} << 26;
  Outcome one = run(src, bufs, {}, 8, 1, 1, budget), two = run(src, bufs, {}, 8, 1, 2, budget);
  ASSERT_NO_FATAL_FAILURE(expect_one_thread_finding(one, two, FindingKind::race));
}

// Which functions may run on several threads, from the program alone.
std::vector<bool> eligible(const std::string& body, const std::string& funcs = "") {
  auto checked = ptx::check_source(std::string(kHeader) + funcs + R"(
.visible .entry k(.param .u64 p)
{
  .reg .b32 %v;
  .reg .b64 %a;
  .shared .align 4 .b32 sh[4];
  ld.param.u64 %a, [p];
)" + body + R"(
  ret;
}
)");
  EXPECT_TRUE(checked.ok()) << body;
  auto prog = lower(checked.module);
  if (auto* f = std::get_if<Finding>(&prog)) {
    ADD_FAILURE() << f->message;
    return {};
  }
  return parallel_functions(std::get<Program>(prog));
}

bool entry_eligible(const std::string& body) {
  auto v = eligible(body);
  return !v.empty() && v.back();
}

TEST(EmuCtaPool, EligibilityFollowsTheInstructions) {
  EXPECT_TRUE(entry_eligible("ld.global.u32 %v, [%a];\n st.global.u32 [%a], %v;"));
  EXPECT_TRUE(entry_eligible("ld.global.nc.u32 %v, [%a];"));
  EXPECT_TRUE(entry_eligible("ld.u32 %v, [%a];\n st.u32 [%a], %v;"));  // weak generic
  EXPECT_TRUE(entry_eligible("atom.shared.add.u32 %v, [sh], 1;"));
  EXPECT_TRUE(entry_eligible("membar.cta;\n fence.acq_rel.cta;"));
  EXPECT_TRUE(entry_eligible("ld.volatile.shared.u32 %v, [sh];"));
  EXPECT_FALSE(entry_eligible("atom.global.add.u32 %v, [%a], 1;"));
  EXPECT_FALSE(entry_eligible("red.global.add.u32 [%a], 1;"));
  EXPECT_FALSE(entry_eligible("atom.add.u32 %v, [%a], 1;"));  // generic: may be global
  EXPECT_FALSE(entry_eligible("ld.volatile.global.u32 %v, [%a];"));
  EXPECT_FALSE(entry_eligible("ld.relaxed.gpu.global.u32 %v, [%a];"));
  EXPECT_FALSE(entry_eligible("ld.acquire.gpu.u32 %v, [%a];"));
  EXPECT_FALSE(entry_eligible("st.release.gpu.global.u32 [%a], 1;"));
  EXPECT_FALSE(entry_eligible("membar.gl;"));
  EXPECT_FALSE(entry_eligible("fence.sc.gpu;"));
  EXPECT_FALSE(entry_eligible("fence.acq_rel.sys;"));
  EXPECT_FALSE(entry_eligible("fence.proxy.alias;"));
  // Through a call: the callee's atomic makes its callers ineligible, not an unrelated function.
  std::string funcs = R"(
.func bump(.param .b64 q)
{
  .reg .b32 %x;
  .reg .b64 %b;
  ld.param.b64 %b, [q];
  atom.global.add.u32 %x, [%b], 1;
  ret;
}
.func plain()
{
  ret;
}
)";
  auto v = eligible("{\n .param .b64 q;\n st.param.b64 [q], %a;\n call bump, (q);\n }", funcs);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_FALSE(v[0]);  // bump
  EXPECT_TRUE(v[1]);   // plain
  EXPECT_FALSE(v[2]);  // k calls bump
}

// The granule owners: readers share, a writer owns, and any mix of CTAs with a write conflicts,
// whichever comes first; a tracked element is claimed whole.
TEST(EmuCtaPool, ClaimsFindEveryCrossCtaConflict) {
  AllocMap map;
  Alloc& a = map.add("x", 64);
  arm_owners(map, 1, false);
  EXPECT_TRUE(a.claim(0, 4, false, 0));
  EXPECT_TRUE(a.claim(0, 4, false, 1));  // two readers
  EXPECT_FALSE(a.claim(0, 4, true, 0));  // a write to what CTA 1 read too
  EXPECT_FALSE(a.claim(2, 1, true, 2));  // any byte of the granule
  EXPECT_TRUE(a.claim(4, 8, false, 3));
  EXPECT_TRUE(a.claim(4, 8, true, 3));  // CTA 3 alone: its own read, then its write
  EXPECT_TRUE(a.claim(8, 4, false, 3));
  EXPECT_FALSE(a.claim(8, 4, false, 4));  // a read of CTA 3's write
  EXPECT_FALSE(a.claim(4, 4, true, 5));   // a write over it
  EXPECT_TRUE(a.claim(16, 4, true, 6));
  EXPECT_FALSE(a.claim(16, 4, true, 7));  // two writers
  EXPECT_TRUE(a.claim(60, 4, true, 8));   // the last granule
  // Last writers per 8-byte element: halves written by two CTAs share one record.
  Alloc& b = map.add("y", 16);
  b.element_bytes = 8;
  b.writers.resize(2);
  arm_owners(map, 2, false);
  EXPECT_TRUE(b.claim(0, 4, true, 0));
  EXPECT_FALSE(b.claim(4, 4, true, 1));
  EXPECT_TRUE(b.claim(12, 4, true, 1));
  disarm_owners(map);
  EXPECT_FALSE(a.owners);
}

TEST(EmuCtaPool, HostThreadsComeFromTheConfigFirst) {
  EXPECT_EQ(host_threads(3), 3u);
  EXPECT_GE(host_threads(0), 1u);
  EXPECT_LE(host_threads(0), 256u);
}

}  // namespace
}  // namespace ptxforge::emu
