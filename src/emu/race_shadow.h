// Shadow memory of the race detector: per 4-byte granule, the writes and the reads that a
// later access must be checked against, FastTrack style (one inline stamp each; a small set
// only while accesses are concurrent), and per location the release record an acquire reads.
// Pages of 4 KiB of emulated memory are allocated on first touch; a byte budget bounds the
// whole (a hostile kernel must not exhaust the host).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "emu/race_clock.h"

namespace ptxforge::emu {

inline constexpr uint64_t kShadowPageBytes = 4096;
inline constexpr uint32_t kGranulesPerPage = kShadowPageBytes / 4;
// A set holds at most this many concurrent stamps; past it the oldest is forgotten (a race
// with only that access is then missed: documented).
inline constexpr size_t kMaxConcurrentStamps = 64;

// Bytes the detector may hold; shared by every page of a launch (and host threads).
class ShadowBudget {
 public:
  explicit ShadowBudget(uint64_t limit) : limit_(limit) {}
  bool charge(uint64_t bytes);  // false: over the limit (nothing charged)
  void refund(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  void reset() { used_ = 0, peak_ = 0; }
  uint64_t limit() const { return limit_; }
  // The most held at once since the last reset (a parallel launch compares it with the limit).
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
};

struct Granule {
  Stamp writes;  // the last write, or (kSet) a set of concurrent morally strong writes
  Stamp reads;   // the last read, or (kSet) a set of concurrent reads
};

struct ShadowPage {
  std::mutex lock;  // taken for global pages (CTAs on several host threads); unused for .shared
  std::array<Granule, kGranulesPerPage> granules{};
  std::vector<std::vector<Stamp>> sets;
  std::vector<uint32_t> free_sets;
  std::unordered_map<uint32_t, SyncRecord> records;  // granule -> release record
  uint64_t charged = 0;  // bytes of the budget this page holds (itself, its sets and records)
  uint32_t touched_lo = kGranulesPerPage, touched_hi = 0;  // granules to clear for reuse
};

// Pages of finished CTAs and past launches, cleared, for the next ones: zeroing 48 KiB and
// faulting it in is most of a fresh page's cost. Holds at most kMaxSpare pages (outside the
// budget: 12 MiB).
class PagePool {
 public:
  static constexpr size_t kMaxSpare = 256;
  std::unique_ptr<ShadowPage> take();
  void give(std::unique_ptr<ShadowPage> page);

 private:
  std::mutex lock_;
  std::vector<std::unique_ptr<ShadowPage>> spare_;
};
// Charges `bytes` to the budget on behalf of `page` (false: over the limit).
bool charge(ShadowPage& page, ShadowBudget& budget, uint64_t bytes);

// Pages by page number (address / 4096), no locking: .shared of one CTA, or global under the
// detector's map lock.
class ShadowMap {
 public:
  explicit ShadowMap(PagePool& pool) : pool_(pool) {}
  ~ShadowMap() { clear(); }
  ShadowMap(const ShadowMap&) = delete;
  ShadowMap& operator=(const ShadowMap&) = delete;
  ShadowPage* find(uint64_t page_no) const;
  ShadowPage* add(uint64_t page_no, ShadowBudget& budget);  // nullptr: over budget
  void clear();  // pages go back to the pool
  // Drops every page and gives their bytes back to `budget` (a CTA's .shared at its end).
  void release(ShadowBudget& budget);
  // The budget bytes its pages hold.
  uint64_t charged() const;

 private:
  PagePool& pool_;
  std::unordered_map<uint64_t, std::unique_ptr<ShadowPage>> pages_;
};

// The earlier access a new one races with.
struct Conflict {
  Stamp other;
  bool other_write = false;
  bool both_strong = false;  // both strong: the scopes or the sizes are what failed
};

// The access as the granule sees it: its stamp (mask = its bytes of this granule).
struct GranuleAccess {
  Stamp stamp;
  bool write = false;
};

// Checks one access to one granule against its shadow, then records it. `over_budget` is set
// (and nothing recorded) when a set could not grow.
std::optional<Conflict> check_and_record(ShadowPage& page, uint32_t granule, const GranuleAccess& access,
                                         const CtaClocks& cta, ShadowBudget& budget, bool& over_budget);

// Whether two stamps are morally strong relative to each other (PTX ISA, "Morally strong
// operations"): both strong, each one's scope including the other's thread, overlapping
// exactly (equal sizes: accesses are naturally aligned, so overlapping with equal sizes is
// exact overlap). Same-thread pairs are handled by program order before this is asked.
bool morally_strong(const Stamp& a, const Stamp& b);

}  // namespace ptxforge::emu
