// Running one CTA (docs/emu.md section 3): warps round-robin, each until it blocks, exits or
// spends a quantum; a warp whose live lanes all wait at a barrier counts as one arrival of 32
// (the manual counts arrivals per warp); a barrier completes when its count (or every live
// warp) has arrived, and the race detector learns who waited; a round in which nothing moves is
// a deadlock, reported with each warp's blocked lanes and lines.
#include "emu/cta.h"

#include <bit>

#include <fmt/format.h>

#include "emu/interp.h"
#include "emu/limits.h"
#include "emu/race.h"

namespace ptxforge::emu {

ThreadId Cta::who(uint32_t warp, uint32_t lane, const Dim3& block) const {
  uint32_t t = warp * 32 + lane;
  ThreadId id;
  id.cta = this->id;
  id.thread = {t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])};
  return id;
}

namespace {

Finding at(const Launch& L, const Cta& cta, const Warp& w, uint32_t lane, FindingKind kind, std::string msg) {
  Finding f;
  f.kind = kind;
  f.message = std::move(msg);
  const Frame& fr = w.frames[static_cast<size_t>(w.frame[lane])];
  const Inst& in = L.prog->fns[fr.fn].code[w.pc[lane]];
  f.pos = {in.line, in.col};
  f.who = cta.who(w.index, lane, L.config.block);
  return f;
}

const Inst& inst_of(const Launch& L, const Warp& w, uint32_t lane) {
  const Frame& fr = w.frames[static_cast<size_t>(w.frame[lane])];
  return L.prog->fns[fr.fn].code[w.pc[lane]];
}

// A warp whose live lanes all wait at a barrier arrives at it.
bool arrive(Launch& L, Cta& cta, Warp& w) {
  uint32_t at_bar = w.mask_of(LaneState::bar);
  if (w.arrived || !at_bar || at_bar != w.live()) return true;
  // .aligned (bar.sync, barrier.sync.aligned): every live lane at the same instruction.
  uint32_t first = static_cast<uint32_t>(std::countr_zero(at_bar));
  for (uint32_t m = at_bar; m; m &= m - 1) {
    uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
    const Inst& a = inst_of(L, w, first);
    const Inst& b = inst_of(L, w, l);
    if ((a.flag || b.flag) && (&a != &b || w.frame[l] != w.frame[first])) {
      L.finding = at(L, cta, w, l, FindingKind::barrier_divergence,
                     fmt::format("lanes of warp {} wait at different barriers: lane {} at line {}, lane {} at line {}",
                                 w.index, first, a.line, l, b.line));
      return false;
    }
  }
  Barrier& b = cta.bars[w.bar_id];
  b.arrived += 32;
  b.arrivals.push_back(w.index);
  w.arrived = true;
  return true;
}

// Completes barrier `id` when its count has arrived; true when it did.
bool complete(Launch& L, Cta& cta, uint32_t id) {
  Barrier& b = cta.bars[id];
  if (b.arrived == 0) return false;
  uint32_t live_warps = 0;
  for (auto& w : cta.warps) live_warps += w.live() != 0;
  uint32_t expected = b.count ? *b.count : live_warps * 32;
  if (b.arrived < expected) return false;
  // bar.red: the reduction over every waiting thread.
  uint32_t popc = 0;
  bool all = true, any = false;
  for (auto& w : cta.warps)
    if (w.arrived && w.bar_id == id)
      for (uint32_t m = w.mask_of(LaneState::bar); m; m &= m - 1) {
        bool p = w.bar_pred[static_cast<size_t>(std::countr_zero(m))];
        popc += p;
        all = all && p;
        any = any || p;
      }
  if (cta.race && L.race) {
    // The waiters gain every participant's accesses before its arrival (bar.arrive included).
    std::vector<uint32_t>& waiters = L.scratch_tids;
    waiters.clear();
    for (auto& w : cta.warps)
      if (w.arrived && w.bar_id == id)
        for (uint32_t m = w.mask_of(LaneState::bar); m; m &= m - 1)
          waiters.push_back(w.index * 32 + static_cast<uint32_t>(std::countr_zero(m)));
    L.race->on_barrier_complete(*cta.race, id, waiters);
  }
  for (auto& w : cta.warps) {
    if (!w.arrived || w.bar_id != id) continue;
    for (uint32_t m = w.mask_of(LaneState::bar); m; m &= m - 1) {
      uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
      const Inst& in = inst_of(L, w, l);
      if (in.op == Op::bar_red) {
        Frame& fr = w.frames[static_cast<size_t>(w.frame[l])];
        BarRed k = static_cast<BarRed>(in.sub);
        const Opnd& d = in.o[0];
        if (d.kind == OpndKind::reg) {
          fr.regs[size_t{d.idx} * 32 + l] = popc;
          fr.taint[d.idx] &= ~(1u << l);
        } else if (d.kind == OpndKind::pred) {
          bool v = k == BarRed::and_ ? all : any;
          fr.preds[d.idx] = (fr.preds[d.idx] & ~(1u << l)) | (uint32_t{v} << l);
          fr.pred_taint[d.idx] &= ~(1u << l);
        }
      }
      w.state[l] = LaneState::run;
      w.pc[l]++;
    }
    w.arrived = false;
  }
  b = Barrier{};
  return true;
}

Finding deadlock(const Launch& L, const Cta& cta) {
  std::string msg = "every thread of the CTA is blocked:";
  const Warp* first = nullptr;
  uint32_t first_lane = 0;
  for (auto& w : cta.warps) {
    uint32_t blocked = w.mask_of(LaneState::bar) | w.mask_of(LaneState::coll);
    if (!blocked) continue;
    uint32_t l = static_cast<uint32_t>(std::countr_zero(blocked));
    if (!first) first = &w, first_lane = l;
    const Inst& in = inst_of(L, w, l);
    const Function& fn = L.prog->fns[w.frames[static_cast<size_t>(w.frame[l])].fn];
    msg += fmt::format(" warp {} lanes 0x{:08x} at {} (line {})", w.index, blocked, fn.opcodes[w.pc[l]], in.line);
    if (w.state[l] == LaneState::bar) {
      const Barrier& b = cta.bars[w.bar_id];
      uint32_t live = 0;
      for (auto& v : cta.warps) live += v.live() != 0;
      msg += fmt::format(", barrier {} with {} of {} thread arrivals", w.bar_id, b.arrived, b.count ? *b.count : live * 32);
    }
    msg += ";";
  }
  msg.pop_back();
  Finding f;
  if (first) f = at(L, cta, *first, first_lane, FindingKind::deadlock, msg);
  else f.kind = FindingKind::deadlock, f.message = msg;
  return f;
}

}  // namespace

CtaStep step_cta(Launch& L, Cta& cta) {
  const auto& fns = L.prog->fns;
  bool progress = false;
  for (auto& w : cta.warps) {
    for (uint32_t n = 0; n < limits::kQuantum; ++n) {
      Group g = pick_group(w, fns);
      if (!g.mask) break;
      if (!issue(L, cta, w, g.mask, g.frame, g.pc)) return CtaStep::stopped;
      progress = true;
    }
    if (!arrive(L, cta, w)) return CtaStep::stopped;
  }
  for (uint32_t id = 0; id < 16; ++id) progress = complete(L, cta, id) || progress;
  bool live = false;
  for (auto& w : cta.warps) live = live || w.live() != 0;
  if (!live) return CtaStep::done;
  if (progress) return CtaStep::running;
  // Collectives whose missing members exited while they waited run now.
  for (auto& w : cta.warps) {
    uint32_t coll = w.mask_of(LaneState::coll);
    if (coll && w.mask_of(LaneState::run) == 0) {
      for (uint32_t m = coll; m; m &= m - 1) w.state[static_cast<size_t>(std::countr_zero(m))] = LaneState::run;
      progress = true;
    }
  }
  // Woken lanes that still miss members block again at once; a second still round is a deadlock.
  // (Only this CTA's own barriers and collectives can release its lanes: other resident CTAs
  // cannot, so the verdict does not depend on them.)
  if (progress) {
    bool moved = false;
    for (auto& w : cta.warps) {
      uint32_t before = w.mask_of(LaneState::coll) | w.mask_of(LaneState::run);
      Group g = pick_group(w, fns);
      if (!g.mask) continue;
      if (!issue(L, cta, w, g.mask, g.frame, g.pc)) return CtaStep::stopped;
      moved = moved || (w.mask_of(LaneState::coll) | w.mask_of(LaneState::run)) != before ||
              w.mask_of(LaneState::coll) == 0;
    }
    bool any_run = false;
    for (auto& w : cta.warps) any_run = any_run || w.mask_of(LaneState::run);
    if (moved || any_run) return CtaStep::running;
  }
  L.finding = deadlock(L, cta);
  return CtaStep::stopped;
}

}  // namespace ptxforge::emu
