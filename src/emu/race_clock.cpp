// Clock algebra of the race detector: joins at barriers, release records, acquires. See
// race_clock.h for the representation; the rules are the PTX ISA's "Memory Consistency
// Model" (sections "Morally strong operations", "Release and Acquire Patterns", "Causality
// Order") and the barrier instructions' memory-ordering paragraphs.
#include "emu/race_clock.h"

#include <algorithm>

namespace ptxforge::emu {

uint64_t Vc::find(uint64_t key) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), key,
                             [](const Entry& e, uint64_t k) { return e.key < k; });
  return it != entries.end() && it->key == key ? it->clock : 0;
}

VcPtr join_vcs(std::span<const Vc* const> parts, std::vector<Vc::Entry> extra) {
  for (const Vc* p : parts)
    if (p) extra.insert(extra.end(), p->entries.begin(), p->entries.end());
  if (extra.empty()) return nullptr;
  std::sort(extra.begin(), extra.end(), [](const Vc::Entry& a, const Vc::Entry& b) {
    return a.key != b.key ? a.key < b.key : a.clock > b.clock;
  });
  auto vc = std::make_shared<Vc>();
  vc->entries.reserve(extra.size());
  for (const Vc::Entry& e : extra)  // the first of each key is its largest clock
    if (vc->entries.empty() || vc->entries.back().key != e.key) vc->entries.push_back(e);
  return vc;
}

namespace {

MemScope narrower(MemScope a, MemScope b) { return std::min(a, b); }

// A scope "includes" a thread: .cta (and .cluster, a CTA being its own cluster) the threads of
// the same CTA, .gpu and .sys every thread of the launch (PTX ISA, "Scope").
bool includes(MemScope s, uint32_t from_cta, uint32_t to_cta, bool mixed) {
  if (s == MemScope::gpu || s == MemScope::sys) return true;
  if (s == MemScope::cta || s == MemScope::cluster) return !mixed && from_cta == to_cta;
  return false;
}

// Distinct non-null knowledge pointers of a set of threads (most share one after a barrier).
template <typename Get>
std::vector<const Vc*> distinct(std::span<const uint32_t> tids, Get get) {
  std::vector<const Vc*> out;
  for (uint32_t t : tids)
    if (const Vc* v = get(t)) out.push_back(v);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

bool synchronizes(const SyncRecord& rec, uint32_t cta, MemScope scope) {
  return includes(rec.scope, rec.cta, cta, rec.mixed) && includes(scope, cta, rec.cta, rec.mixed);
}

SyncRecord merge_records(const SyncRecord& a, const SyncRecord& b) {
  SyncRecord out;
  const Vc* parts[] = {a.vc.get(), b.vc.get()};
  out.vc = join_vcs(parts, {});
  out.cta = a.cta;
  out.mixed = a.mixed || b.mixed || a.cta != b.cta;
  out.scope = narrower(a.scope, b.scope);
  return out;
}

CtaClocks::CtaClocks(uint32_t id, uint32_t threads)
    : id_(id), live_(threads), th_(threads), exit_phase_(threads, UINT32_MAX) {}

bool CtaClocks::ordered_before_slow(const Stamp& s, uint32_t tid) const {
  const Vc* know = th_[tid].know.get();
  if (s.cta != id_ && know) {
    // Knowledge of another CTA's phase came through a release/acquire pair. Threads of that
    // CTA that exited before its barrier are not excluded here (docs: a known gap).
    if (phase_of(s.clock) < phase_of(know->find(clock_key(s.cta, kAllThreads)))) return true;
  }
  if (!know) return false;
  uint64_t c = know->find(clock_key(s.cta, s.tid));
  return c != 0 && s.clock <= c;
}

void CtaClocks::tick(uint32_t tid) {
  if (th_[tid].local == UINT32_MAX)
    overflow_ = true;
  else
    ++th_[tid].local;
}

VcPtr CtaClocks::snapshot(uint32_t tid, uint64_t clock, uint32_t phase, const VcPtr& know) const {
  const Vc* parts[] = {know.get()};
  return join_vcs(parts, {{clock_key(id_, tid), clock}, {clock_key(id_, kAllThreads), uint64_t{phase} << 32}});
}

void CtaClocks::learn(uint32_t tid, const VcPtr& vc) {
  Thread& t = th_[tid];
  if (!vc || vc == t.last_acquired) return;  // knowledge only grows: joining again adds nothing
  const Vc* parts[] = {t.know.get(), vc.get()};
  t.know = join_vcs(parts, {});
  t.last_acquired = vc;
}

void CtaClocks::arrive(uint32_t barrier, std::span<const uint32_t> tids) {
  if (barrier >= arrivals_.size()) return;  // the engine rejects the id; nothing is released
  std::vector<Vc::Entry>& acc = arrivals_[barrier];
  for (uint32_t t : tids) {
    if (t >= th_.size()) continue;
    acc.push_back({clock_key(id_, t), now(t)});
    if (th_[t].know) acc.insert(acc.end(), th_[t].know->entries.begin(), th_[t].know->entries.end());
    tick(t);  // what it does after arriving is not released
  }
  arrived_[barrier] = true;
  if (acc.size() > 4 * (th_.size() + 64)) {  // repeated arrivals: keep it bounded
    VcPtr compact = join_vcs({}, std::move(acc));
    acc = compact ? compact->entries : std::vector<Vc::Entry>{};
  }
}

void CtaClocks::complete(uint32_t barrier, std::span<const uint32_t> waiters) {
  bool arrivals = barrier < arrivals_.size() && arrived_[barrier];
  // A full barrier: every live thread waits and nobody merely arrived. bar.sync's memory
  // ordering (PTX ISA, "bar, barrier": prior memory accesses of the participants are
  // performed relative to all of them) then covers every earlier access: one phase step.
  uint32_t distinct_live = 0;
  seen_.assign(th_.size(), 0);
  for (uint32_t t : waiters)
    if (t < th_.size() && !seen_[t] && exit_phase_[t] == UINT32_MAX) seen_[t] = 1, ++distinct_live;
  if (!arrivals && distinct_live == live_ && live_ > 0) {
    auto parts = distinct(waiters, [&](uint32_t t) { return t < th_.size() ? th_[t].know.get() : nullptr; });
    VcPtr all = join_vcs(parts, {});
    VcPtr kept;
    if (all) {  // entries of this CTA's live threads are now covered by the phase
      auto vc = std::make_shared<Vc>();
      for (const Vc::Entry& e : all->entries) {
        uint32_t cta = static_cast<uint32_t>(e.key >> 16), t = static_cast<uint32_t>(e.key & 0xFFFF);
        bool covered = cta == id_ && (t == kAllThreads || (t < th_.size() && exit_phase_[t] == UINT32_MAX));
        if (!covered) vc->entries.push_back(e);
      }
      if (!vc->entries.empty()) kept = std::move(vc);
    }
    if (phase_ == UINT32_MAX) overflow_ = true;
    else ++phase_;
    for (uint32_t t : waiters)
      if (t < th_.size()) th_[t].local = 1, th_[t].know = kept;
  } else {
    std::vector<Vc::Entry> extra;
    if (arrivals) extra = std::move(arrivals_[barrier]);
    for (uint32_t t : waiters)
      if (t < th_.size()) extra.push_back({clock_key(id_, t), now(t)});
    auto parts = distinct(waiters, [&](uint32_t t) { return t < th_.size() ? th_[t].know.get() : nullptr; });
    VcPtr joined = join_vcs(parts, std::move(extra));
    for (uint32_t t : waiters)
      if (t < th_.size()) th_[t].know = joined, tick(t);
  }
  if (barrier < arrivals_.size()) arrivals_[barrier].clear(), arrived_[barrier] = false;
}

void CtaClocks::join(std::span<const uint32_t> tids) {
  std::vector<Vc::Entry> extra;
  for (uint32_t t : tids)
    if (t < th_.size()) extra.push_back({clock_key(id_, t), now(t)});
  auto parts = distinct(tids, [&](uint32_t t) { return t < th_.size() ? th_[t].know.get() : nullptr; });
  VcPtr joined = join_vcs(parts, std::move(extra));
  for (uint32_t t : tids)
    if (t < th_.size()) th_[t].know = joined, tick(t);
}

void CtaClocks::fence(uint32_t tid, MemOrder sem, MemScope scope) {
  if (tid >= th_.size()) return;
  Thread& t = th_[tid];
  bool acq = sem == MemOrder::acquire || sem == MemOrder::acq_rel || sem == MemOrder::sc;
  bool rel = sem == MemOrder::release || sem == MemOrder::acq_rel || sem == MemOrder::sc;
  if (acq) {  // acquire pattern: strong reads before this fence (PTX ISA, "Release and Acquire Patterns")
    auto pending = std::move(t.pending);
    t.pending.clear();
    for (const auto& [rec, load_scope] : pending)
      if (synchronizes(rec, id_, narrower(load_scope, scope))) learn(tid, rec.vc);
  }
  if (rel) {  // release pattern: this fence, then any strong write
    t.fenced = true;
    t.fence_clock = now(tid);
    t.fence_phase = phase_;
    t.fence_scope = scope;
    t.fence_know = t.know;
    tick(tid);
  }
}

void CtaClocks::exit(uint32_t tid) {
  if (tid >= th_.size() || exit_phase_[tid] != UINT32_MAX) return;
  exit_phase_[tid] = phase_;
  --live_;
}

std::optional<SyncRecord> CtaClocks::release(uint32_t tid, MemOrder order, MemScope scope) {
  Thread& t = th_[tid];
  SyncRecord rec;
  rec.cta = id_;
  if (order == MemOrder::release || order == MemOrder::acq_rel) {
    rec.vc = snapshot(tid, now(tid), phase_, t.know);
    rec.scope = scope;
    tick(tid);
    return rec;
  }
  if (!t.fenced) return std::nullopt;
  rec.vc = snapshot(tid, t.fence_clock, t.fence_phase, t.fence_know);
  rec.scope = narrower(scope, t.fence_scope);
  return rec;
}

void CtaClocks::acquire(uint32_t tid, const SyncRecord& rec, MemOrder order, MemScope scope) {
  Thread& t = th_[tid];
  if (order == MemOrder::acquire || order == MemOrder::acq_rel) {
    if (synchronizes(rec, id_, scope)) learn(tid, rec.vc);
    return;
  }
  constexpr size_t kMaxPending = 64;  // dropping one only loses an ordering: more races, never fewer
  if (t.pending.size() == kMaxPending) t.pending.erase(t.pending.begin());
  t.pending.emplace_back(rec, scope);
}

}  // namespace ptxforge::emu
