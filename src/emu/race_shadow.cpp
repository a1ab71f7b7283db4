// The per-granule check of the race detector: an access against the stamps its granule holds,
// then the granule's update. Byte masks give byte precision inside a granule: four threads
// storing the four bytes of one word do not conflict, and a byte's history is exactly the
// stamps whose mask covers it.
#include "emu/race_shadow.h"

#include <algorithm>
#include <span>

namespace ptxforge::emu {

bool ShadowBudget::charge(uint64_t bytes) {
  uint64_t cur = used_.load(std::memory_order_relaxed);
  for (;;) {
    if (cur + bytes > limit_ || cur + bytes < cur) return false;
    if (used_.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed)) {
      uint64_t top = peak_.load(std::memory_order_relaxed);
      while (top < cur + bytes && !peak_.compare_exchange_weak(top, cur + bytes, std::memory_order_relaxed)) {
      }
      return true;
    }
  }
}

bool charge(ShadowPage& page, ShadowBudget& budget, uint64_t bytes) {
  if (!budget.charge(bytes)) return false;
  page.charged += bytes;
  return true;
}

std::unique_ptr<ShadowPage> PagePool::take() {
  std::lock_guard guard(lock_);
  if (spare_.empty()) return std::make_unique<ShadowPage>();
  auto page = std::move(spare_.back());
  spare_.pop_back();
  return page;
}

void PagePool::give(std::unique_ptr<ShadowPage> page) {
  {
    std::lock_guard guard(lock_);
    if (spare_.size() >= kMaxSpare) return;  // freed here
  }
  for (uint32_t g = page->touched_lo; g < page->touched_hi; ++g) page->granules[g] = Granule{};
  page->touched_lo = kGranulesPerPage;
  page->touched_hi = 0;
  page->sets.clear();
  page->free_sets.clear();
  page->records.clear();
  page->charged = 0;
  std::lock_guard guard(lock_);
  if (spare_.size() < kMaxSpare) spare_.push_back(std::move(page));
}

void ShadowMap::clear() {
  for (auto& [no, page] : pages_) pool_.give(std::move(page));
  pages_.clear();
}

void ShadowMap::release(ShadowBudget& budget) {
  for (auto& [no, page] : pages_) budget.refund(page->charged);
  clear();
}

uint64_t ShadowMap::charged() const {
  uint64_t n = 0;
  for (auto& [no, page] : pages_) n += page->charged;
  return n;
}

ShadowPage* ShadowMap::find(uint64_t page_no) const {
  auto it = pages_.find(page_no);
  return it == pages_.end() ? nullptr : it->second.get();
}

ShadowPage* ShadowMap::add(uint64_t page_no, ShadowBudget& budget) {
  if (ShadowPage* p = find(page_no)) return p;
  if (!budget.charge(sizeof(ShadowPage))) return nullptr;
  auto& slot = pages_[page_no];
  slot = pool_.take();
  slot->charged = sizeof(ShadowPage);
  return slot.get();
}

namespace {

bool scope_includes(MemScope s, uint32_t from_cta, uint32_t to_cta) {
  if (s == MemScope::gpu || s == MemScope::sys) return true;
  return (s == MemScope::cta || s == MemScope::cluster) && from_cta == to_cta;
}

std::span<Stamp> view(ShadowPage& page, Stamp& slot) {
  if (!slot.mask) return {};
  if (slot.flags & Stamp::kSet) return page.sets[slot.clock];
  return {&slot, 1};
}

// Whether an earlier stamp `e`, ordered before the new access `a` on the bytes `a` covers,
// can be forgotten there. FastTrack forgets it always; with morally strong pairs exempt from
// racing that is wrong when `a` is strong: a later access morally strong with `a` but not with
// `e` (say a plain store, then a barrier, then an atomic, then an atomic of another CTA) must
// still meet `e`. So `e` goes only when everything that escapes a race with `a` would escape
// one with `e` too.
// Across CTAs that needs both scopes at least .gpu; a .cta-scope access of the new writer's
// CTA racing with a .gpu one of another CTA is then missed (docs: a known gap).
bool forgettable(const Stamp& e, const Stamp& a) {
  if (!a.strong()) return true;
  // And what escapes through `a` being atomic or synchronising (synchronizing_pair) must
  // escape through `e` as well.
  return e.strong() && e.size == a.size && e.scope() >= a.scope() &&
         (e.cta == a.cta || a.scope() >= MemScope::gpu) && (!(a.atomic() || a.sync()) || e.atomic() || e.sync());
}

void free_set(ShadowPage& page, uint32_t idx) {
  page.sets[idx].clear();
  page.free_sets.push_back(idx);
}

// Stores `list` into `slot`: empty, one inline stamp, or a set.
bool store(ShadowPage& page, Stamp& slot, const std::vector<Stamp>& list, ShadowBudget& budget) {
  bool had_set = slot.flags & Stamp::kSet;
  uint32_t idx = had_set ? static_cast<uint32_t>(slot.clock) : 0;
  if (list.size() <= 1) {
    if (had_set) free_set(page, idx);
    slot = list.empty() ? Stamp{} : list[0];
    return true;
  }
  if (!had_set) {
    if (!page.free_sets.empty()) {
      idx = page.free_sets.back();
      page.free_sets.pop_back();
    } else {
      if (!charge(page, budget, sizeof(std::vector<Stamp>) + sizeof(uint32_t))) return false;
      idx = static_cast<uint32_t>(page.sets.size());
      page.sets.emplace_back();
    }
  }
  std::vector<Stamp>& set = page.sets[idx];
  if (set.capacity() < list.size()) {
    size_t cap = std::max(list.size(), 2 * set.capacity());
    if (!charge(page, budget, (cap - set.capacity()) * sizeof(Stamp))) {
      if (!had_set) free_set(page, idx);
      return false;
    }
    set.reserve(cap);
  }
  set.assign(list.begin(), list.end());
  uint8_t mask = 0;
  for (const Stamp& s : list) mask |= s.mask;
  slot = Stamp{};
  slot.flags = Stamp::kSet;
  slot.clock = idx;
  slot.mask = mask;
  return true;
}

// The slot's stamps with `a`'s bytes forgotten where `a` supersedes them, then `a` if `add`.
bool update(ShadowPage& page, Stamp& slot, const Stamp& a, bool add, const CtaClocks& cta,
            ShadowBudget& budget) {
  // The common cases without the list: an empty slot, or one stamp that `a` supersedes.
  if (!(slot.flags & Stamp::kSet) &&
      (!slot.mask || (!(slot.mask & ~a.mask) && forgettable(slot, a) && cta.ordered_before(slot, a.tid)))) {
    slot = add ? a : Stamp{};
    return true;
  }
  // Whether `a` makes the earlier stamp `k` forget its bytes.
  auto forgets = [&](const Stamp& k) {
    // An atomic reads the latest value of an RMW chain: the earlier atomics precede it in
    // observation order, so what follows it in program order follows them in causality order.
    bool observed = (a.flags & Stamp::kAtomic) && (k.flags & Stamp::kAtomic) && morally_strong(k, a);
    return (k.mask & a.mask) && forgettable(k, a) && (observed || cta.ordered_before(k, a.tid));
  };
  // A set that stays a set: compacted in place (the same stamps in the same order as the copy
  // below would give, without copying the set twice per access).
  if (slot.flags & Stamp::kSet) {
    std::vector<Stamp>& set = page.sets[static_cast<size_t>(slot.clock)];
    size_t kept = 0;
    for (size_t i = 0; i < set.size(); ++i) {
      Stamp& k = set[i];
      uint8_t mask = forgets(k) ? static_cast<uint8_t>(k.mask & ~a.mask) : k.mask;
      if (!mask) continue;
      // Unchanged stamps before the first removal stay where they are (no write).
      if (kept != i || mask != k.mask) {
        Stamp moved = k;
        moved.mask = mask;
        set[kept] = moved;
      }
      ++kept;
    }
    size_t total = kept + (add ? 1 : 0);
    if (total >= 2) {
      set.resize(kept);
      if (add) {
        // At most kMaxConcurrentStamps: the oldest goes first (before any growth, as the copy
        // below trims before it stores).
        if (set.size() == kMaxConcurrentStamps) set.erase(set.begin());
        if (set.size() == set.capacity()) {
          size_t cap = std::max(set.size() + 1, 2 * set.capacity());
          if (!charge(page, budget, (cap - set.capacity()) * sizeof(Stamp))) return false;
          set.reserve(cap);
        }
        set.push_back(a);
      }
      uint8_t mask = 0;
      for (const Stamp& k : set) mask |= k.mask;
      slot.mask = mask;
      return true;
    }
    // One stamp or none left: back to an inline slot (store frees the set).
    std::vector<Stamp> small(set.begin(), set.begin() + static_cast<std::ptrdiff_t>(kept));
    if (add) small.push_back(a);
    return store(page, slot, small, budget);
  }
  thread_local std::vector<Stamp> next;
  next.clear();
  for (const Stamp& e : view(page, slot)) {  // one inline stamp here
    Stamp k = e;
    if (forgets(k)) k.mask &= ~a.mask;
    if (k.mask) next.push_back(k);
  }
  if (add) next.push_back(a);
  if (next.size() > kMaxConcurrentStamps) next.erase(next.begin(), next.end() - kMaxConcurrentStamps);
  return store(page, slot, next, budget);
}

}  // namespace

bool morally_strong(const Stamp& a, const Stamp& b) {
  return a.strong() && b.strong() && a.size == b.size && scope_includes(a.scope(), a.cta, b.cta) &&
         scope_includes(b.scope(), b.cta, a.cta);
}

// The memory model calls a morally strong pair no data race, but two relaxed accesses (ld/st
// .volatile or .relaxed) with no atomic, acquire, release or release fence among them order
// nothing: the warp-synchronous idiom (a volatile shared-memory tail with no bar.warp.sync)
// is right in lockstep and wrong under independent thread scheduling, and racecheck reports
// it. So a conflicting pair is exempt only when it is morally strong AND one side is an
// atomic or synchronises (a flag published by a release and polled by relaxed loads stays
// legal). ptxforge's race (docs/emu.md): no barrier, atomic or release/acquire pair between them.
bool synchronizing_pair(const Stamp& a, const Stamp& b) {
  return morally_strong(a, b) && (a.atomic() || b.atomic() || a.sync() || b.sync());
}

std::optional<Conflict> check_and_record(ShadowPage& page, uint32_t granule, const GranuleAccess& access,
                                         const CtaClocks& cta, ShadowBudget& budget, bool& over_budget) {
  Granule& g = page.granules[granule];
  const Stamp& a = access.stamp;
  page.touched_lo = std::min(page.touched_lo, granule);
  page.touched_hi = std::max(page.touched_hi, granule + 1);
  // Conflicting: overlapping, one a write (PTX ISA, "Conflict and Data-races"); a data race
  // unless ordered (causality order) or morally strong.
  auto check = [&](Stamp& slot, bool slot_write) -> std::optional<Conflict> {
    for (const Stamp& e : view(page, slot)) {
      if (!(e.mask & a.mask) || cta.ordered_before(e, a.tid) || synchronizing_pair(e, a)) continue;
      return Conflict{e, slot_write, e.strong() && a.strong()};
    }
    return std::nullopt;
  };
  if (auto c = check(g.writes, true)) return c;
  if (access.write)
    if (auto c = check(g.reads, false)) return c;
  bool ok = access.write ? update(page, g.reads, a, false, cta, budget) && update(page, g.writes, a, true, cta, budget)
                         : update(page, g.reads, a, true, cta, budget);
  if (!ok) over_budget = true;
  return std::nullopt;
}

}  // namespace ptxforge::emu
