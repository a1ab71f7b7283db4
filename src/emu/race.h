// The race detector (docs/emu.md section 4, "Races"): the engine tells it every shared and
// global access and every synchronisation event of a launch, and it answers with the first
// pair of conflicting accesses that the PTX memory model leaves unordered, naming both. It is
// a happens-before checker in the FastTrack style over the model's rules (PTX ISA, "Memory
// Consistency Model"): accesses race unless related in causality order or morally strong.
// It knows nothing about the interpreter: threads are (CTA linear id, thread linear id), the
// caller reports events in the order it executes them.
//
// Threading: calls about one CTA come from one host thread at a time; different CTAs may run
// on different host threads (global shadow pages have their own locks; with private_global,
// each CTA has its own global shadow and takes no lock).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "emu/engine.h"
#include "emu/race_clock.h"
#include "emu/race_shadow.h"

namespace ptxforge::emu {

enum class RaceSpace : uint8_t { shared, global };

// One warp-instruction's memory access, common to its lanes. `order` and `scope` are the
// instruction's .sem and .scope as the model defines them: plain ld/st are `weak` with scope
// `none`; ld/st.volatile are relaxed.sys; atom/red without .sem are relaxed, scope gpu unless
// given. An atom is `write` and `atomic` (it reads too); a red is the same without the read.
struct RaceAccess {
  RaceSpace space = RaceSpace::global;
  uint8_t bytes = 4;  // per lane: 1, 2, 4, 8 or 16, naturally aligned (the engine checked)
  bool write = false;
  bool atomic = false;
  bool reads = true;  // false for st and red: no acquire, no read record
  MemOrder order = MemOrder::weak;
  MemScope scope = MemScope::none;
  PtxPos pos;
};

// One lane of it: the thread (linear id in its CTA) and the address. Global addresses are the
// engine's generic .global addresses; shared addresses are offsets in the CTA's .shared window.
struct RaceLane {
  uint32_t tid = 0;
  uint64_t address = 0;
};

// Names an address for a finding: the allocation it falls in and the byte offset. Called only
// when a race is reported, never on the hot path.
struct RaceLocation {
  std::string buffer;
  uint64_t offset = 0;
};
using RaceResolver = std::function<std::optional<RaceLocation>(RaceSpace, uint32_t cta, uint64_t address)>;

// One running CTA: its clocks and its .shared shadow (which dies with it), and in a launch whose
// CTAs run on several host threads (emu/cta_pool.h) its own global shadow, which dies with it too.
struct RaceCta {
  RaceCta(uint32_t id, uint32_t threads, PagePool& pool) : clocks(id, threads), shared(pool), global(pool) {}
  CtaClocks clocks;
  ShadowMap shared;
  ShadowMap global;
};

class RaceDetector {
 public:
  // `shadow_limit_bytes` bounds the detector's memory (shadow pages and reader/writer sets);
  // past it every access answers a `limit` finding.
  explicit RaceDetector(RaceResolver resolver = {}, uint64_t shadow_limit_bytes = uint64_t{512} << 20);
  ~RaceDetector();
  RaceDetector(const RaceDetector&) = delete;
  RaceDetector& operator=(const RaceDetector&) = delete;

  // A new launch of this shape: everything recorded before is ordered before it (the kernel
  // boundary), so the shadow, the sync records and every CTA's clocks are dropped.
  void reset_launch(Dim3 grid, Dim3 block);

  // A CTA starts (all its threads live) / has finished (its .shared shadow goes with it). The
  // handle stays valid until end_cta or reset_launch.
  RaceCta* begin_cta(uint32_t cta_linear);
  void end_cta(RaceCta* cta);

  // A warp-instruction's access by `lanes` of `cta`, in lane order. Returns the first race (or
  // a `limit` finding); the state is then unspecified and the launch should stop.
  std::optional<Finding> on_access(RaceCta& cta, const RaceAccess& access, std::span<const RaceLane> lanes);
  std::optional<Finding> on_access(RaceCta& cta, const RaceAccess& access, uint32_t tid, uint64_t address) {
    RaceLane lane{tid, address};
    return on_access(cta, access, std::span<const RaceLane>(&lane, 1));
  }

  // bar.arrive (or barrier.arrive) by these threads on barrier `id`: what they did so far is
  // released to whoever waits at that barrier's completion; they gain nothing.
  void on_barrier_arrive(RaceCta& cta, uint32_t id, std::span<const uint32_t> tids) { cta.clocks.arrive(id, tids); }
  // Completion of bar.sync / barrier.sync / bar.red on barrier `id`: `waiters` (the threads
  // that blocked there) gain the join of every participant's clock, earlier arrivals included.
  void on_barrier_complete(RaceCta& cta, uint32_t id, std::span<const uint32_t> waiters) {
    cta.clocks.complete(id, waiters);
  }
  // bar.warp.sync completion: its lanes are ordered with each other (PTX ISA, bar.warp.sync:
  // "also guarantee memory ordering among threads participating in barrier").
  void on_warp_sync(RaceCta& cta, std::span<const uint32_t> tids) { cta.clocks.join(tids); }
  // fence.{sc,acq_rel,acquire,release} and membar (= fence.sc).
  void on_fence(RaceCta& cta, uint32_t tid, MemOrder sem, MemScope scope) { cta.clocks.fence(tid, sem, scope); }
  // A thread exited: it takes part in no later barrier.
  void on_exit(RaceCta& cta, uint32_t tid) { cta.clocks.exit(tid); }

  // The detector's memory: its limit, and the most it held at once in this launch.
  uint64_t shadow_limit() const { return budget_.limit(); }
  uint64_t shadow_peak() const { return budget_.peak(); }

  // For this launch (until reset_launch), each CTA checks global accesses against its own
  // shadow, without locks: only for a launch whose CTAs cannot order each other's accesses and
  // whose cross-CTA conflicts are found apart (emu/cta_pool.h), so that only races among one
  // CTA's threads are left to find. Called before any CTA begins.
  void private_global() { private_global_ = true; }
  // The bytes the ended CTAs' own global shadows held, summed (what one shared global shadow
  // of the same launch would hold, about).
  uint64_t private_global_bytes() const { return private_bytes_.load(std::memory_order_relaxed); }

 private:
  struct GlobalPages;
  Finding describe(const RaceCta& cta, const RaceAccess& access, uint32_t tid, uint64_t address,
                   const Conflict& conflict) const;
  Finding stop(FindingKind kind, std::string message, const RaceCta& cta, const RaceAccess& access,
               uint32_t tid) const;
  ThreadId thread_id(uint32_t cta, uint32_t tid) const;
  // One lane's access on its page (locked by the caller where it needs a lock): the shadow
  // check, then the release/acquire effects on the location's record.
  std::optional<Conflict> access_page(RaceCta& cta, ShadowPage& page, const RaceAccess& access, uint32_t tid,
                                      uint64_t address, bool& over_budget);

  RaceResolver resolver_;
  ShadowBudget budget_;
  PagePool pool_;  // before the maps that give their pages back to it
  Dim3 grid_{1, 1, 1}, block_{1, 1, 1};
  std::mutex ctas_mutex_;
  std::unordered_map<uint32_t, std::unique_ptr<RaceCta>> ctas_;
  std::unique_ptr<GlobalPages> global_;
  bool private_global_ = false;
  std::atomic<uint64_t> private_bytes_{0};
};

}  // namespace ptxforge::emu
