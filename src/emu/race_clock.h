// Happens-before for the race detector (emu/race.h): per-thread clocks of one CTA, what each
// thread knows of other threads' clocks, and the release records that carry that knowledge
// through memory. Split from race.cpp because the clock algebra is the subtle part and is
// tested on its own terms.
//
// A thread's clock is (phase << 32 | local): `phase` counts the full-CTA barriers its CTA has
// completed, `local` its own release events since. A full barrier (every live thread syncs)
// orders every earlier access of its participants before every later one, so it costs one
// increment of the phase instead of an N x N vector-clock join; what else a thread knows (a
// partial barrier, bar.arrive, bar.warp.sync, an acquire from another CTA) is a sparse sorted
// vector of (CTA, thread) -> clock entries, shared between threads by pointer.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ptxforge::emu {

// The .sem of a memory operation or fence (PTX ISA, "Memory Consistency Model", operation
// types): plain ld/st are `weak`; `sc` is for fences (fence.sc, membar) only.
enum class MemOrder : uint8_t { weak, relaxed, acquire, release, acq_rel, sc };
// The .scope; `none` for weak operations. `cluster` is treated as `cta`: the engine launches
// no clusters, so a CTA is its own cluster.
enum class MemScope : uint8_t { none, cta, cluster, gpu, sys };

inline constexpr uint32_t kAllThreads = 0xFFFF;  // thread of a CTA-wide (phase) knowledge entry
inline constexpr uint32_t kMaxRaceThreads = 0xFFFF;  // threads per CTA the detector can name

inline uint64_t clock_key(uint32_t cta, uint32_t tid) { return (uint64_t{cta} << 16) | tid; }
inline uint32_t phase_of(uint64_t clock) { return static_cast<uint32_t>(clock >> 32); }

// One recorded access: who, when, where in the PTX, and what kind (for the morally-strong rule).
struct Stamp {
  uint64_t clock = 0;  // the thread's clock at the access; a set's index when kSet
  uint32_t cta = 0;
  uint32_t line = 0;
  uint16_t tid = 0;
  uint16_t col = 0;
  uint8_t size = 0;   // bytes of the whole access (exact-overlap test of morally strong pairs)
  uint8_t mask = 0;   // bytes of the 4-byte granule it covers; 0: an empty slot
  uint8_t flags = 0;  // kStrong | kAtomic | kSet | kSync | scope << kScopeShift
  // kSync: the access synchronises (an acquire or release, or a strong write after a release
  // fence of its thread): see synchronizing_pair in race_shadow.cpp.
  static constexpr uint8_t kStrong = 1, kAtomic = 2, kSet = 4, kSync = 8, kScopeShift = 4;
  MemScope scope() const { return static_cast<MemScope>(flags >> kScopeShift); }
  bool strong() const { return flags & kStrong; }
  bool atomic() const { return flags & kAtomic; }
  bool sync() const { return flags & kSync; }
};
static_assert(sizeof(Stamp) == 24);

// Knowledge of other threads' clocks: entries sorted by key, unique. An entry for
// (cta, kAllThreads) holds a phase << 32: every access of that CTA in an earlier phase.
struct Vc {
  struct Entry {
    uint64_t key = 0, clock = 0;
  };
  std::vector<Entry> entries;
  uint64_t find(uint64_t key) const;  // 0: nothing known
};
using VcPtr = std::shared_ptr<const Vc>;
// The pointwise maximum of several, plus loose entries (any order, duplicates allowed).
VcPtr join_vcs(std::span<const Vc* const> parts, std::vector<Vc::Entry> extra);

// What a release (st.release, atom.release, a strong write after fence.release) left on a
// location, for an acquire that reads it.
struct SyncRecord {
  VcPtr vc;
  uint32_t cta = 0;    // the releasing CTA
  bool mixed = false;  // releases of several CTAs were merged (a release sequence of RMWs)
  MemScope scope = MemScope::none;
};
// Whether a release record and an acquire by a thread of `cta` at `scope` are morally strong:
// each scope includes the other thread (PTX ISA, "Morally strong operations").
bool synchronizes(const SyncRecord& rec, uint32_t cta, MemScope scope);
SyncRecord merge_records(const SyncRecord& a, const SyncRecord& b);

// One CTA's clocks. Not thread-safe: one host thread drives a CTA.
class CtaClocks {
 public:
  CtaClocks(uint32_t id, uint32_t threads);
  uint32_t id() const { return id_; }
  uint32_t threads() const { return static_cast<uint32_t>(th_.size()); }
  uint64_t now(uint32_t tid) const { return (uint64_t{phase_} << 32) | th_[tid].local; }
  // Whether the recorded access happens before what thread `tid` does now. Inline: the race
  // detector asks it for every stamp an access meets; the CTA's own program order and
  // barrier phases answer most of them without the knowledge vectors.
  bool ordered_before(const Stamp& s, uint32_t tid) const {
    if (s.cta == id_) {
      if (s.tid == tid) return true;  // program order
      // Every full barrier since s's phase had s's thread among its participants unless it
      // exited in that phase: an exited thread takes part in no barrier.
      uint32_t p = phase_of(s.clock);
      if (p < phase_ && s.tid < exit_phase_.size() && p < exit_phase_[s.tid]) return true;
    }
    if (!th_[tid].know) return false;  // nothing learnt beyond the CTA's own order
    return ordered_before_slow(s, tid);
  }
  // Clock overflow (2^32 release events of one thread in one phase): the detector gives up.
  bool overflowed() const { return overflow_; }

  void arrive(uint32_t barrier, std::span<const uint32_t> tids);
  void complete(uint32_t barrier, std::span<const uint32_t> waiters);
  void join(std::span<const uint32_t> tids);
  void fence(uint32_t tid, MemOrder sem, MemScope scope);
  void exit(uint32_t tid);
  // Whether `tid` has executed a release fence in this launch (a strong write of its then
  // releases: the model's release pattern).
  bool fenced(uint32_t tid) const { return tid < th_.size() && th_[tid].fenced; }

  // The record a strong write by `tid` publishes, if it is a release or follows a release
  // fence (nullopt: it releases nothing). A release by the write itself advances the clock.
  std::optional<SyncRecord> release(uint32_t tid, MemOrder order, MemScope scope);
  // A strong read of a location holding `rec`: an acquire joins now, a relaxed read joins at
  // the thread's next acquire fence (the model's acquire pattern).
  void acquire(uint32_t tid, const SyncRecord& rec, MemOrder order, MemScope scope);

 private:
  struct Thread {
    uint32_t local = 1;
    VcPtr know;
    VcPtr last_acquired;  // skips re-joining the record a spin loop keeps reading
    // The release half of the last release fence: a later strong write publishes this.
    bool fenced = false;
    uint64_t fence_clock = 0;
    uint32_t fence_phase = 0;
    MemScope fence_scope = MemScope::none;
    VcPtr fence_know;
    // Records read by relaxed strong loads since the last acquire fence (with the load's scope).
    std::vector<std::pair<SyncRecord, MemScope>> pending;
  };
  void tick(uint32_t tid);
  VcPtr snapshot(uint32_t tid, uint64_t clock, uint32_t phase, const VcPtr& know) const;
  void learn(uint32_t tid, const VcPtr& vc);

  uint32_t id_;
  uint32_t phase_ = 0;
  uint32_t live_;
  bool overflow_ = false;
  std::vector<Thread> th_;
  std::vector<uint32_t> exit_phase_;  // per thread: the phase it exited in; UINT32_MAX: live
  bool ordered_before_slow(const Stamp& s, uint32_t tid) const;
  std::array<std::vector<Vc::Entry>, 16> arrivals_;  // per barrier: released, not yet joined
  std::array<bool, 16> arrived_{};
  std::vector<uint8_t> seen_;  // scratch of complete(): waiters counted once
};

}  // namespace ptxforge::emu
