// The race detector driven directly with access sequences whose verdict follows from the PTX
// memory model (data race = conflicting, not in causality order, not morally strong), worked
// by hand: barriers, bar.arrive's one-way release, release/acquire handshakes across CTAs,
// scopes, byte precision, read sets, launches.
#include "emu/race.h"

#include <gtest/gtest.h>

#include <numeric>
#include <thread>
#include <vector>

namespace ptxforge::emu {
namespace {

constexpr uint64_t kOut = 0x100000000;  // a global buffer 'out' of 4096 bytes

RaceAccess access(bool write, uint32_t line, RaceSpace space = RaceSpace::global, uint8_t bytes = 4) {
  RaceAccess a;
  a.space = space;
  a.write = write;
  a.reads = !write;
  a.bytes = bytes;
  a.pos = PtxPos{line, 5};
  return a;
}
RaceAccess st(uint32_t line, RaceSpace space = RaceSpace::global, uint8_t bytes = 4) {
  return access(true, line, space, bytes);
}
RaceAccess ld(uint32_t line, RaceSpace space = RaceSpace::global, uint8_t bytes = 4) {
  return access(false, line, space, bytes);
}
RaceAccess strong(RaceAccess a, MemOrder order, MemScope scope) {
  a.order = order;
  a.scope = scope;
  return a;
}
RaceAccess atom(uint32_t line, MemScope scope = MemScope::gpu, uint8_t bytes = 4, MemOrder order = MemOrder::relaxed) {
  RaceAccess a = strong(access(true, line, RaceSpace::global, bytes), order, scope);
  a.atomic = true;
  a.reads = true;
  return a;
}
std::vector<uint32_t> range(uint32_t lo, uint32_t hi) {
  std::vector<uint32_t> v(hi - lo);
  std::iota(v.begin(), v.end(), lo);
  return v;
}

class EmuRace : public ::testing::Test {
 protected:
  EmuRace() : det([](RaceSpace space, uint32_t, uint64_t address) -> std::optional<RaceLocation> {
                if (space == RaceSpace::global && address >= kOut && address < kOut + 4096)
                  return RaceLocation{"out", address - kOut};
                return std::nullopt;
              }) {
    det.reset_launch({4, 1, 1}, {64, 1, 1});
  }
  RaceDetector det;
};

TEST_F(EmuRace, TwoThreadsWriteOneSharedWordWithoutBarrierRace) {
  RaceCta* c = det.begin_cta(3);
  EXPECT_FALSE(det.on_access(*c, st(30, RaceSpace::shared), 6, 128));
  auto f = det.on_access(*c, st(31, RaceSpace::shared), 5, 128);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, FindingKind::race);
  EXPECT_EQ(f->pos.line, 31u);
  EXPECT_EQ(f->who, (ThreadId{{3, 0, 0}, {5, 0, 0}}));
  ASSERT_TRUE(f->other);
  EXPECT_EQ(f->other->pos.line, 30u);
  EXPECT_EQ(f->other->who, (ThreadId{{3, 0, 0}, {6, 0, 0}}));
  EXPECT_TRUE(f->other->write);
  EXPECT_EQ(f->message,
            "write of 4 bytes to shared address 0x80 by thread (5,0,0) of CTA (3,0,0) races with the write at "
            "line 30 by thread (6,0,0) of CTA (3,0,0): no barrier, atomic or release/acquire pair orders them");
}

TEST_F(EmuRace, FindingNamesTheBufferThroughTheResolver) {
  RaceCta* c = det.begin_cta(3);
  EXPECT_FALSE(det.on_access(*c, ld(31), 6, kOut + 128));
  auto f = det.on_access(*c, st(40), 5, kOut + 128);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->buffer, "out");
  EXPECT_EQ(f->offset, 128u);
  EXPECT_FALSE(f->other->write);
  EXPECT_EQ(f->message,
            "write of 4 bytes to 'out'+128 by thread (5,0,0) of CTA (3,0,0) races with the read at line 31 by "
            "thread (6,0,0) of CTA (3,0,0): no barrier, atomic or release/acquire pair orders them");
}

TEST_F(EmuRace, BarrierBetweenTwoWritesOrdersThem) {
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, st(10, RaceSpace::shared), 0, 0));
  det.on_barrier_complete(*c, 0, range(0, 64));
  EXPECT_FALSE(det.on_access(*c, st(12, RaceSpace::shared), 1, 0));
  EXPECT_FALSE(det.on_access(*c, ld(13, RaceSpace::shared), 1, 0));
}

TEST_F(EmuRace, WriteThenReadAcrossBarrierIsOrderedButNotWithoutIt) {
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, st(10, RaceSpace::shared), 0, 8));
  det.on_barrier_complete(*c, 0, range(0, 64));
  EXPECT_FALSE(det.on_access(*c, ld(12, RaceSpace::shared), 1, 8));
  // The reader writes it again (program order) and a third thread reads with no barrier: race.
  EXPECT_FALSE(det.on_access(*c, st(14, RaceSpace::shared), 1, 8));
  auto f = det.on_access(*c, ld(15, RaceSpace::shared), 2, 8);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->pos.line, 14u);
  // The first writer writing again races with the read after the barrier.
  det.on_barrier_complete(*c, 0, range(0, 64));
  EXPECT_FALSE(det.on_access(*c, ld(16, RaceSpace::shared), 3, 8));
  EXPECT_TRUE(det.on_access(*c, st(17, RaceSpace::shared), 0, 8));
}

TEST_F(EmuRace, WriterArrivesReaderSyncsIsOrdered) {
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, st(10, RaceSpace::shared), 0, 0));  // warp 0 produces
  det.on_barrier_arrive(*c, 1, range(0, 32));                         // bar.arrive 1, 64
  det.on_barrier_complete(*c, 1, range(32, 64));                      // bar.sync 1, 64 by warp 1
  EXPECT_FALSE(det.on_access(*c, ld(12, RaceSpace::shared), 32, 0));
}

TEST_F(EmuRace, ReaderArrivesWriterSyncsRaces) {
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, st(10, RaceSpace::shared), 0, 0));
  det.on_barrier_arrive(*c, 1, range(32, 64));   // the reader's warp only arrives
  det.on_barrier_complete(*c, 1, range(0, 32));  // the writer's warp waits
  auto f = det.on_access(*c, ld(12, RaceSpace::shared), 32, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->pos.line, 10u);
}

TEST_F(EmuRace, AccessesAfterAnArriveAreNotReleased) {
  RaceCta* c = det.begin_cta(0);
  det.on_barrier_arrive(*c, 1, range(0, 32));
  EXPECT_FALSE(det.on_access(*c, st(11, RaceSpace::shared), 0, 0));  // after its arrive
  det.on_barrier_complete(*c, 1, range(32, 64));
  EXPECT_TRUE(det.on_access(*c, ld(12, RaceSpace::shared), 32, 0));
}

TEST_F(EmuRace, PartialBarrierOrdersOnlyItsParticipants) {
  det.reset_launch({1, 1, 1}, {96, 1, 1});
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, st(10, RaceSpace::shared), 0, 0));
  det.on_barrier_complete(*c, 1, range(0, 64));  // bar.sync 1, 64: warps 0 and 1
  EXPECT_FALSE(det.on_access(*c, ld(12, RaceSpace::shared), 40, 0));
  EXPECT_TRUE(det.on_access(*c, ld(13, RaceSpace::shared), 70, 0));
}

TEST_F(EmuRace, WarpSyncOrdersItsLanes) {
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, st(10, RaceSpace::shared), 3, 0));
  det.on_warp_sync(*c, range(0, 32));
  EXPECT_FALSE(det.on_access(*c, ld(12, RaceSpace::shared), 7, 0));
  // Lanes of one warp in lockstep are still distinct threads: no bar.warp.sync, a race.
  EXPECT_FALSE(det.on_access(*c, st(14, RaceSpace::shared), 3, 4));
  EXPECT_TRUE(det.on_access(*c, ld(15, RaceSpace::shared), 7, 4));
}

TEST_F(EmuRace, ExitedThreadIsNotOrderedByALaterBarrier) {
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, st(10, RaceSpace::shared), 63, 0));
  det.on_exit(*c, 63);
  det.on_barrier_complete(*c, 0, range(0, 63));  // all non-exited threads
  auto f = det.on_access(*c, ld(12, RaceSpace::shared), 0, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->who.thread[0], 63u);
  // The barrier was a full one for the others: their accesses are ordered.
  EXPECT_FALSE(det.on_access(*c, st(13, RaceSpace::shared), 1, 16));
  det.on_barrier_complete(*c, 0, range(0, 63));
  EXPECT_FALSE(det.on_access(*c, ld(14, RaceSpace::shared), 2, 16));
}

TEST_F(EmuRace, TwoCtasWritingOneGlobalWordRace) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(20), 0, kOut));
  det.on_barrier_complete(*a, 0, range(0, 64));
  det.on_barrier_complete(*b, 0, range(0, 64));  // barriers order nothing across CTAs
  auto f = det.on_access(*b, st(20), 0, kOut);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->who.cta[0], 0u);
  EXPECT_EQ(f->who->cta[0], 1u);
}

TEST_F(EmuRace, AtomicsOfTwoCtasOnOneWordDoNotRace) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, atom(20), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, atom(20), 5, kOut));
  EXPECT_FALSE(det.on_access(*a, atom(20), 9, kOut));
  // ld.relaxed.gpu is morally strong with them too.
  EXPECT_FALSE(det.on_access(*b, strong(ld(21), MemOrder::relaxed, MemScope::gpu), 1, kOut));
}

TEST_F(EmuRace, PlainReadOfAnAtomicCounterRacesUnlessItsThreadObservedTheChain) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, atom(20), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, atom(21), 0, kOut));
  // A thread that did no atomic: unordered with the last atomic.
  auto f = det.on_access(*b, ld(22), 5, kOut);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->pos.line, 21u);
  // The last atomic's own thread: CTA 0's atomic precedes it in observation order, so the
  // plain read after it in program order follows both in causality order.
  det.reset_launch({4, 1, 1}, {64, 1, 1});
  a = det.begin_cta(0);
  b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, atom(20), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, atom(21), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, ld(22), 0, kOut));
}

TEST_F(EmuRace, CtaScopeAtomicsOfTwoCtasRace) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, atom(20, MemScope::cta), 0, kOut));
  EXPECT_FALSE(det.on_access(*a, atom(20, MemScope::cta), 1, kOut));  // same CTA: fine
  auto f = det.on_access(*b, atom(20, MemScope::cta), 0, kOut);
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("both are strong but the scope of one does not include the other thread"),
            std::string::npos);
}

TEST_F(EmuRace, AtomicsOfDifferentSizesDoNotOverlapExactly) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, atom(20, MemScope::gpu, 8), 0, kOut));
  auto f = det.on_access(*b, atom(21, MemScope::gpu, 4), 0, kOut + 4);
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("do not overlap exactly"), std::string::npos);
}

TEST_F(EmuRace, ReleaseAcquireFlagOrdersThePayload) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut + 64));  // payload
  EXPECT_FALSE(det.on_access(*a, strong(st(11), MemOrder::release, MemScope::gpu), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, strong(ld(20), MemOrder::acquire, MemScope::gpu), 7, kOut));
  EXPECT_FALSE(det.on_access(*b, ld(21), 7, kOut + 64));
  // Another thread of CTA 1 did not acquire: it races with the payload write.
  EXPECT_TRUE(det.on_access(*b, ld(22), 8, kOut + 64));
}

// Two relaxed accesses with no atomic and no fence among them order nothing: morally strong
// in the model's words, but the engine reports the pair (a volatile warp-synchronous tail).
TEST_F(EmuRace, RelaxedFlagWithoutAFenceRaces) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut + 64));
  EXPECT_FALSE(det.on_access(*a, strong(st(11), MemOrder::relaxed, MemScope::gpu), 0, kOut));
  auto f = det.on_access(*b, strong(ld(20), MemOrder::relaxed, MemScope::gpu), 7, kOut);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->pos.line, 11u);
}

// A relaxed flag published after a release fence synchronises with relaxed polls (no race on
// the flag), but a reader that never fences after its poll acquires nothing: the payload races.
TEST_F(EmuRace, FencedRelaxedFlagLeavesTheUnacquiredPayloadRacing) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut + 64));
  det.on_fence(*a, 0, MemOrder::release, MemScope::gpu);
  EXPECT_FALSE(det.on_access(*a, strong(st(11), MemOrder::relaxed, MemScope::gpu), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, strong(ld(20), MemOrder::relaxed, MemScope::gpu), 7, kOut));  // the flag: no race
  auto f = det.on_access(*b, ld(21), 7, kOut + 64);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->pos.line, 10u);
}

TEST_F(EmuRace, FencesMakeRelaxedFlagsAReleaseAcquirePair) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut + 64));
  det.on_fence(*a, 0, MemOrder::acq_rel, MemScope::gpu);
  EXPECT_FALSE(det.on_access(*a, st(12), 0, kOut + 128));  // after the fence: not released
  EXPECT_FALSE(det.on_access(*a, strong(st(13), MemOrder::relaxed, MemScope::gpu), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, strong(ld(20), MemOrder::relaxed, MemScope::gpu), 7, kOut));
  EXPECT_TRUE(det.on_access(*b, ld(21), 7, kOut + 64));  // no acquire fence yet
  // A fresh launch, and this time the reader fences before reading.
  det.reset_launch({4, 1, 1}, {64, 1, 1});
  a = det.begin_cta(0);
  b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut + 64));
  det.on_fence(*a, 0, MemOrder::sc, MemScope::gpu);  // membar.gl
  EXPECT_FALSE(det.on_access(*a, st(12), 0, kOut + 128));
  EXPECT_FALSE(det.on_access(*a, strong(st(13), MemOrder::relaxed, MemScope::gpu), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, strong(ld(20), MemOrder::relaxed, MemScope::gpu), 7, kOut));
  det.on_fence(*b, 7, MemOrder::acquire, MemScope::gpu);
  EXPECT_FALSE(det.on_access(*b, ld(21), 7, kOut + 64));
  auto f = det.on_access(*b, ld(22), 7, kOut + 128);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->pos.line, 12u);
}

TEST_F(EmuRace, CtaScopeReleaseDoesNotSynchronizeWithAnotherCta) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut + 64));
  EXPECT_FALSE(det.on_access(*a, strong(st(11), MemOrder::release, MemScope::gpu), 0, kOut));
  // ld.acquire.cta does not include CTA 0's thread: the flag accesses themselves race.
  auto f = det.on_access(*b, strong(ld(20), MemOrder::acquire, MemScope::cta), 7, kOut);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->pos.line, 11u);
  EXPECT_NE(f->message.find("scope of one does not include the other thread"), std::string::npos);
  // Nor does a release.cta of CTA 0 release anything to CTA 1's acquire.
  det.reset_launch({4, 1, 1}, {64, 1, 1});
  a = det.begin_cta(0);
  b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut + 64));
  EXPECT_FALSE(det.on_access(*a, strong(st(11), MemOrder::release, MemScope::cta), 0, kOut));
  EXPECT_TRUE(det.on_access(*b, strong(ld(20), MemOrder::acquire, MemScope::gpu), 7, kOut));
}

TEST_F(EmuRace, AcquireCarriesTheReleasingCtasBarrier) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  for (uint32_t t = 0; t < 64; ++t) EXPECT_FALSE(det.on_access(*a, st(10), t, kOut + 256 + 4 * t));
  det.on_barrier_complete(*a, 0, range(0, 64));
  EXPECT_FALSE(det.on_access(*a, strong(st(12), MemOrder::release, MemScope::gpu), 0, kOut));
  EXPECT_FALSE(det.on_access(*b, strong(ld(20), MemOrder::acquire, MemScope::gpu), 3, kOut));
  EXPECT_FALSE(det.on_access(*b, ld(21), 3, kOut + 256 + 4 * 41));  // written by thread 41 of CTA 0
}

TEST_F(EmuRace, LastBlockPatternThroughAReleaseSequenceOfAtomics) {
  // Each CTA: thread 0 writes its partial, fence.acq_rel.gpu, atom.add.gpu on a counter; the
  // last CTA (its atomic read the sum of all others) fences and reads every partial.
  RaceCta* ctas[4];
  for (uint32_t k = 0; k < 4; ++k) ctas[k] = det.begin_cta(k);
  for (uint32_t k = 0; k < 4; ++k) {
    EXPECT_FALSE(det.on_access(*ctas[k], st(10), 0, kOut + 64 + 4 * k));
    det.on_fence(*ctas[k], 0, MemOrder::acq_rel, MemScope::gpu);
    EXPECT_FALSE(det.on_access(*ctas[k], atom(12), 0, kOut));
  }
  det.on_fence(*ctas[3], 0, MemOrder::acq_rel, MemScope::gpu);
  for (uint32_t k = 0; k < 3; ++k) EXPECT_FALSE(det.on_access(*ctas[3], ld(14), 0, kOut + 64 + 4 * k));
  // A relaxed store by a thread that never fenced ends the sequence: a later acquirer learns
  // nothing. (Thread 0 of CTA 3 storing would release again: fence.acq_rel + strong write.)
  EXPECT_FALSE(det.on_access(*ctas[1], strong(st(16), MemOrder::relaxed, MemScope::gpu), 9, kOut));
  EXPECT_FALSE(det.on_access(*ctas[2], strong(ld(17), MemOrder::acquire, MemScope::gpu), 5, kOut));
  EXPECT_TRUE(det.on_access(*ctas[2], ld(18), 5, kOut + 64));
}

TEST_F(EmuRace, SameThreadNeverRaces) {
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, st(10), 4, kOut));
  EXPECT_FALSE(det.on_access(*c, ld(11), 4, kOut));
  EXPECT_FALSE(det.on_access(*c, atom(12), 4, kOut));
  EXPECT_FALSE(det.on_access(*c, st(13, RaceSpace::global, 1), 4, kOut + 2));
  EXPECT_FALSE(det.on_access(*c, ld(14, RaceSpace::global, 8), 4, kOut));
}

TEST_F(EmuRace, ConcurrentReadsNeverRace) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  std::vector<RaceLane> lanes;
  for (uint32_t t = 0; t < 32; ++t) lanes.push_back({t, kOut});  // a broadcast load
  EXPECT_FALSE(det.on_access(*a, ld(10), lanes));
  EXPECT_FALSE(det.on_access(*b, ld(10), lanes));
}

TEST_F(EmuRace, OneWarpInstructionWritingOneWordFromTwoLanesRaces) {
  RaceCta* c = det.begin_cta(0);
  std::vector<RaceLane> lanes = {{0, kOut}, {1, kOut + 4}, {2, kOut}};
  auto f = det.on_access(*c, st(10), lanes);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->who->thread[0], 2u);
  EXPECT_EQ(f->other->who.thread[0], 0u);
}

TEST_F(EmuRace, WriterOrderedAfterOnlyOneOfTwoReadersRacesWithTheOther) {
  RaceCta* c = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*c, ld(10, RaceSpace::shared), 1, 0));
  EXPECT_FALSE(det.on_access(*c, ld(11, RaceSpace::shared), 2, 0));  // concurrent: a read set
  uint32_t pair[] = {1, 3};
  det.on_warp_sync(*c, pair);  // thread 3 now follows thread 1's read, not thread 2's
  auto f = det.on_access(*c, st(12, RaceSpace::shared), 3, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->who.thread[0], 2u);
  EXPECT_EQ(f->other->pos.line, 11u);
  EXPECT_FALSE(f->other->write);
}

TEST_F(EmuRace, DisjointBytesOfOneGranuleDoNotRace) {
  RaceCta* c = det.begin_cta(0);
  for (uint32_t t = 0; t < 4; ++t) EXPECT_FALSE(det.on_access(*c, st(10, RaceSpace::shared, 1), t, 16 + t));
  EXPECT_FALSE(det.on_access(*c, st(11, RaceSpace::shared, 2), 8, 20));  // the next granule
  // Byte 2 was written by thread 2 and nobody else: a write of it by thread 5 races with that one.
  auto f = det.on_access(*c, st(12, RaceSpace::shared, 1), 5, 18);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->who.thread[0], 2u);
  // After a barrier, a word read covers all four bytes without a race.
  det.on_barrier_complete(*c, 0, range(0, 64));
  EXPECT_FALSE(det.on_access(*c, ld(13, RaceSpace::shared), 9, 16));
}

TEST_F(EmuRace, StrongWriteDoesNotHideAnEarlierPlainWrite) {
  // A plain store, a barrier, an atomic of the same CTA, then an atomic of another CTA: the
  // two atomics are morally strong, the plain store and the second atomic are not ordered.
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut));
  det.on_barrier_complete(*a, 0, range(0, 64));
  EXPECT_FALSE(det.on_access(*a, atom(12), 1, kOut));
  auto f = det.on_access(*b, atom(14), 0, kOut);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->other->pos.line, 10u);
}

TEST_F(EmuRace, SharedMemoryOfDifferentCtasIsDistinct) {
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*a, st(10, RaceSpace::shared), 0, 0));
  EXPECT_FALSE(det.on_access(*b, st(10, RaceSpace::shared), 0, 0));
}

TEST_F(EmuRace, ResetLaunchOrdersLaunches) {
  RaceCta* a = det.begin_cta(0);
  EXPECT_FALSE(det.on_access(*a, st(10), 0, kOut));
  det.reset_launch({4, 1, 1}, {64, 1, 1});
  RaceCta* b = det.begin_cta(1);
  EXPECT_FALSE(det.on_access(*b, st(10), 5, kOut));
  EXPECT_FALSE(det.on_access(*b, ld(11), 5, kOut));
  // Within the new launch the usual rules hold.
  RaceCta* c = det.begin_cta(2);
  EXPECT_TRUE(det.on_access(*c, ld(12), 0, kOut));
}

TEST_F(EmuRace, ShadowBudgetGivesALimitFindingNotACrash) {
  RaceDetector small({}, 2 * sizeof(ShadowPage));
  small.reset_launch({1, 1, 1}, {32, 1, 1});
  RaceCta* c = small.begin_cta(0);
  EXPECT_FALSE(small.on_access(*c, st(10), 0, kOut));
  EXPECT_FALSE(small.on_access(*c, st(10), 0, kOut + 4096));
  auto f = small.on_access(*c, st(10), 0, kOut + 8192);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, FindingKind::limit);
}

TEST_F(EmuRace, FinishedCtasAndReplacedRecordsGiveTheirShadowBack) {
  // Room for a handful of pages: each CTA's .shared page is returned at its end, and a flag
  // released over and over holds one record, so neither runs out.
  RaceDetector small({}, 4 * sizeof(ShadowPage));
  small.reset_launch({1000, 1, 1}, {32, 1, 1});
  for (uint32_t k = 0; k < 1000; ++k) {
    RaceCta* c = small.begin_cta(k);
    ASSERT_FALSE(small.on_access(*c, st(10, RaceSpace::shared), 0, 0));
    ASSERT_FALSE(small.on_access(*c, atom(11, MemScope::gpu, 4, MemOrder::release), 0, kOut));
    small.end_cta(c);
  }
}

TEST_F(EmuRace, CtasOnTwoHostThreadsShareGlobalShadow) {
  det.reset_launch({2, 1, 1}, {64, 1, 1});
  RaceCta* a = det.begin_cta(0);
  RaceCta* b = det.begin_cta(1);
  auto run = [&](RaceCta* c, uint64_t base, int* races) {
    for (uint32_t i = 0; i < 2000; ++i) {
      std::vector<RaceLane> lanes;
      for (uint32_t t = 0; t < 32; ++t) lanes.push_back({t, base + 4096 * (i % 8) + 4 * t});
      if (det.on_access(*c, st(10), lanes)) ++*races;              // its own words
      if (det.on_access(*c, atom(11), lanes[0].tid, kOut)) ++*races;  // one shared counter
    }
  };
  int races_a = 0, races_b = 0;
  std::thread ta(run, a, kOut + 4096, &races_a), tb(run, b, kOut + 65536, &races_b);
  ta.join();
  tb.join();
  EXPECT_EQ(races_a, 0);
  EXPECT_EQ(races_b, 0);
  // The counter's last atomic is one of the two CTAs': a plain read by a third thread races.
  EXPECT_TRUE(det.on_access(*a, ld(12), 40, kOut));
}

TEST_F(EmuRace, BadLanesAreFindingsNotCrashes) {
  RaceCta* c = det.begin_cta(0);
  auto f = det.on_access(*c, st(10), 64, kOut);  // the CTA has 64 threads
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, FindingKind::limit);
  f = det.on_access(*c, st(10, RaceSpace::global, 8), 0, kOut + 4092);  // crosses a page
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, FindingKind::misaligned);
}

}  // namespace
}  // namespace ptxforge::emu
