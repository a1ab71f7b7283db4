// The race detector's entry points: lanes to granules and pages, the release/acquire effects of
// an access on its location's record, and findings that name both accesses. The clock rules
// are in race_clock.cpp, the per-granule check in race_shadow.cpp.
#include "emu/race.h"

#include <algorithm>
#include <cstdio>
#include <shared_mutex>

namespace ptxforge::emu {

struct RaceDetector::GlobalPages {
  explicit GlobalPages(PagePool& pool) : map(pool) {}
  std::shared_mutex lock;
  ShadowMap map;

  ShadowPage* get(uint64_t page_no, ShadowBudget& budget) {
    {
      std::shared_lock read(lock);
      if (ShadowPage* p = map.find(page_no)) return p;
    }
    std::unique_lock write(lock);
    return map.add(page_no, budget);
  }
};

RaceDetector::RaceDetector(RaceResolver resolver, uint64_t shadow_limit_bytes)
    : resolver_(std::move(resolver)), budget_(shadow_limit_bytes), global_(std::make_unique<GlobalPages>(pool_)) {}

RaceDetector::~RaceDetector() = default;

void RaceDetector::reset_launch(Dim3 grid, Dim3 block) {
  std::lock_guard guard(ctas_mutex_);
  ctas_.clear();
  global_->map.clear();
  budget_.reset();
  private_global_ = false;
  private_bytes_ = 0;
  grid_ = grid;
  block_ = block;
}

RaceCta* RaceDetector::begin_cta(uint32_t cta_linear) {
  uint64_t threads = uint64_t{block_[0]} * block_[1] * block_[2];
  // Threads past kMaxRaceThreads cannot be named in a stamp; their accesses answer `limit`.
  auto tracked = static_cast<uint32_t>(std::min<uint64_t>(threads, kMaxRaceThreads));
  auto cta = std::make_unique<RaceCta>(cta_linear, tracked, pool_);
  RaceCta* out = cta.get();
  std::lock_guard guard(ctas_mutex_);
  ctas_[cta_linear] = std::move(cta);
  return out;
}

void RaceDetector::end_cta(RaceCta* cta) {
  std::lock_guard guard(ctas_mutex_);
  auto it = ctas_.find(cta->clocks.id());
  if (it != ctas_.end() && it->second.get() == cta) {
    cta->shared.release(budget_);  // .shared dies with its CTA: its shadow leaves the budget
    private_bytes_.fetch_add(cta->global.charged(), std::memory_order_relaxed);
    cta->global.release(budget_);  // no other CTA touches what it recorded (emu/cta_pool.h)
    ctas_.erase(it);
  }
}

std::optional<Finding> RaceDetector::on_access(RaceCta& cta, const RaceAccess& access,
                                               std::span<const RaceLane> lanes) {
  if (access.bytes == 0 || access.bytes > 16)
    return stop(FindingKind::limit, "an access of " + std::to_string(access.bytes) + " bytes per thread",
                cta, access, lanes.empty() ? 0 : lanes[0].tid);
  // The page being worked on: one lookup (and for global memory one lock) per run of lanes.
  std::unique_lock<std::mutex> held;
  ShadowPage* held_page = nullptr;
  uint64_t held_no = 0;
  for (const RaceLane& lane : lanes) {
    if (cta.clocks.overflowed())
      return stop(FindingKind::limit, "a thread's synchronisation clock overflowed", cta, access, lane.tid);
    if (lane.tid >= cta.clocks.threads())
      return stop(FindingKind::limit, "thread " + std::to_string(lane.tid) + " is beyond the " +
                                          std::to_string(cta.clocks.threads()) + " threads the race detector tracks",
                  cta, access, lane.tid);
    uint64_t page_no = lane.address / kShadowPageBytes;
    if ((lane.address + access.bytes - 1) / kShadowPageBytes != page_no)
      return stop(FindingKind::misaligned, "an access of " + std::to_string(access.bytes) +
                                               " bytes that is not naturally aligned",
                  cta, access, lane.tid);
    ShadowPage* page = held_page && held_no == page_no ? held_page : nullptr;
    if (!page && (access.space == RaceSpace::shared || private_global_)) {
      ShadowMap& own = access.space == RaceSpace::shared ? cta.shared : cta.global;
      page = own.find(page_no);
      if (!page) page = own.add(page_no, budget_);
      held_page = page, held_no = page_no;
    } else if (!page) {
      if (held.owns_lock()) held.unlock();  // never wait for one page while holding another
      page = global_->get(page_no, budget_);
      if (page) {
        held = std::unique_lock<std::mutex>(page->lock);
        held_page = page, held_no = page_no;
      }
    }
    bool over_budget = !page;
    std::optional<Conflict> conflict;
    if (page) conflict = access_page(cta, *page, access, lane.tid, lane.address, over_budget);
    if (over_budget)
      return stop(FindingKind::limit, "the race detector's shadow memory reached its limit of " +
                                          std::to_string(budget_.limit() >> 20) + " MiB",
                  cta, access, lane.tid);
    if (conflict) return describe(cta, access, lane.tid, lane.address, *conflict);
  }
  return std::nullopt;
}

std::optional<Conflict> RaceDetector::access_page(RaceCta& cta, ShadowPage& page, const RaceAccess& access,
                                                  uint32_t tid, uint64_t address, bool& over_budget) {
  // Strong: .relaxed/.acquire/.release/.acq_rel/.volatile or an atomic (PTX ISA, "Operation
  // types"); a weak access has no scope.
  bool strong = access.atomic || access.order != MemOrder::weak;
  // A strong access given no scope: atom/red default to .gpu, ld/st.volatile are .sys.
  MemScope scope = access.scope;
  if (!strong) scope = MemScope::none;
  else if (scope == MemScope::none) scope = access.atomic ? MemScope::gpu : MemScope::sys;
  Stamp a;
  a.clock = cta.clocks.now(tid);
  a.cta = cta.clocks.id();
  a.tid = static_cast<uint16_t>(tid);
  a.line = access.pos.line;
  a.col = static_cast<uint16_t>(std::min<uint32_t>(access.pos.col, 0xFFFF));
  a.size = access.bytes;
  bool sync = strong && (access.order == MemOrder::acquire || access.order == MemOrder::release ||
                         access.order == MemOrder::acq_rel || (access.write && cta.clocks.fenced(tid)));
  a.flags = static_cast<uint8_t>((strong ? Stamp::kStrong : 0) | (access.atomic ? Stamp::kAtomic : 0) |
                                 (sync ? Stamp::kSync : 0) | (static_cast<uint8_t>(scope) << Stamp::kScopeShift));
  uint64_t end = address + access.bytes;
  uint64_t page_base = address / kShadowPageBytes * kShadowPageBytes;
  for (uint64_t g = address / 4; g * 4 < end; ++g) {
    uint64_t lo = std::max(address, g * 4), hi = std::min(end, g * 4 + 4);
    a.mask = static_cast<uint8_t>(((1u << (hi - lo)) - 1) << (lo - g * 4));
    auto granule = static_cast<uint32_t>(g - page_base / 4);
    if (auto c = check_and_record(page, granule, {a, access.write}, cta.clocks, budget_, over_budget)) return c;
    if (over_budget) return std::nullopt;
  }

  // The location's release record: the sync location is the access's first granule.
  auto loc = static_cast<uint32_t>((address - page_base) / 4);
  if (strong && access.reads && !page.records.empty()) {
    auto it = page.records.find(loc);
    if (it != page.records.end()) cta.clocks.acquire(tid, it->second, access.order, scope);
  }
  if (access.write) {
    // What a record holds of the budget; given back when it is replaced or erased.
    auto cost = [](const SyncRecord& r) { return 64 + (r.vc ? r.vc->entries.size() : 0) * sizeof(Vc::Entry); };
    auto drop = [&](std::unordered_map<uint32_t, SyncRecord>::iterator it) {
      page.charged -= cost(it->second);
      budget_.refund(cost(it->second));
      page.records.erase(it);
    };
    if (!strong && page.records.empty()) return std::nullopt;  // the common case: nothing to update
    for (uint64_t g = address / 4 + 1; g * 4 < end; ++g)
      if (auto it = page.records.find(static_cast<uint32_t>(g - page_base / 4)); it != page.records.end()) drop(it);
    std::optional<SyncRecord> rel = strong ? cta.clocks.release(tid, access.order, scope) : std::nullopt;
    auto it = page.records.find(loc);
    if (rel) {
      // An RMW continues the release sequence it reads from and adds its own release.
      SyncRecord next = access.atomic && it != page.records.end() ? merge_records(it->second, *rel) : *rel;
      if (it != page.records.end()) drop(it);
      if (!charge(page, budget_, cost(next))) {
        over_budget = true;
        return std::nullopt;
      }
      page.records[loc] = std::move(next);
    } else if (!access.atomic && it != page.records.end()) {
      drop(it);  // a plain or relaxed store ends the release sequence
    }
  }
  return std::nullopt;
}

ThreadId RaceDetector::thread_id(uint32_t cta, uint32_t tid) const {
  auto split = [](uint32_t linear, const Dim3& d) {
    uint32_t x = d[0] ? d[0] : 1, y = d[1] ? d[1] : 1;
    return Dim3{linear % x, linear / x % y, linear / x / y};
  };
  return ThreadId{split(cta, grid_), split(tid, block_)};
}

namespace {

std::string dim_text(const Dim3& d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", d[0], d[1], d[2]);
  return buf;
}

std::string who_text(const ThreadId& t) { return "thread " + dim_text(t.thread) + " of CTA " + dim_text(t.cta); }

}  // namespace

Finding RaceDetector::describe(const RaceCta& cta, const RaceAccess& access, uint32_t tid, uint64_t address,
                               const Conflict& conflict) const {
  Finding f;
  f.kind = FindingKind::race;
  f.pos = access.pos;
  f.who = thread_id(cta.clocks.id(), tid);
  std::optional<RaceLocation> where;
  if (resolver_) where = resolver_(access.space, cta.clocks.id(), address);
  std::string place;
  if (where) {
    f.buffer = where->buffer;
    f.offset = where->offset;
    place = "'" + where->buffer + "'+" + std::to_string(where->offset);
  } else {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s address 0x%llx", access.space == RaceSpace::shared ? "shared" : "global",
                  static_cast<unsigned long long>(address));
    f.offset = address;
    place = buf;
  }
  const Stamp& o = conflict.other;
  OtherAccess other;
  other.pos = PtxPos{o.line, o.col};
  other.who = thread_id(o.cta, o.tid);
  other.write = conflict.other_write;
  f.other = other;

  std::string what = access.atomic ? "atomic" : access.write ? "write" : "read";
  std::string other_what = !conflict.other_write ? "read" : (o.flags & Stamp::kAtomic) ? "atomic" : "write";
  std::string reason = "no barrier, atomic or release/acquire pair orders them";
  if (conflict.both_strong)
    reason = o.size != access.bytes ? "both are strong but they do not overlap exactly"
                                    : "both are strong but the scope of one does not include the other thread";
  f.message = what + " of " + std::to_string(access.bytes) + " bytes " + (access.write ? "to " : "from ") + place +
              " by " + who_text(*f.who) + " races with the " + other_what + " at line " + std::to_string(o.line) +
              " by " + who_text(other.who) + ": " + reason;
  return f;
}

Finding RaceDetector::stop(FindingKind kind, std::string message, const RaceCta& cta, const RaceAccess& access,
                           uint32_t tid) const {
  Finding f;
  f.kind = kind;
  f.message = std::move(message);
  f.pos = access.pos;
  f.who = thread_id(cta.clocks.id(), std::min<uint32_t>(tid, cta.clocks.threads()));
  return f;
}

}  // namespace ptxforge::emu
