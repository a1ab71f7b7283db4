// Control flow and synchronisation at one issue: branches move the lanes' PCs, calls push a
// frame shared by the calling lanes (arguments copied into it, returns copied back), exit and
// ret from the entry retire lanes, barriers block lanes for the CTA loop (emu/cta.cpp) to
// count, and the warp collectives wait until every live lane of their member mask is there
// (PTX ISA, "shfl.sync", "vote.sync", "match.sync", "redux.sync", "elect.sync").
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "emu/interp.h"
#include "emu/limits.h"
#include "emu/lower.h"
#include "emu/race.h"

namespace ptxforge::emu {

namespace {

template <typename F>
void each(uint32_t mask, F&& f) {
  for (uint32_t m = mask; m; m &= m - 1) f(static_cast<uint32_t>(std::countr_zero(m)));
}

void advance(Exec& x, uint32_t lanes) { each(lanes, [&](uint32_t l) { x.w.pc[l] = x.pc + 1; }); }

// The stack bytes of a frame variable operand (frame_addr) for one lane.
uint64_t stack_offset(const Opnd& o, const Frame& fr) {
  uint64_t a = o.imm + fr.stack_off;
  return o.space == Space::param ? a - kFrameParamBit : a;
}

Flow do_call(Exec& x) {
  const Inst& in = x.in;
  const Program& P = *x.L.prog;
  advance(x, x.issued & ~x.mask);
  uint32_t todo = x.mask;
  while (todo) {
    // Lanes calling one callee go together (a call through a register may differ per lane).
    uint32_t first = static_cast<uint32_t>(std::countr_zero(todo));
    uint32_t callee = in.target;
    auto callee_of = [&](uint32_t l, uint32_t* out) {
      if (!in.flag) return *out = in.target, true;
      uint64_t a = read_operand(x, in.addr_base, l, 64);
      if (a < kFuncBase || (a - kFuncBase) % 16 || (a - kFuncBase) / 16 >= P.fns.size()) return false;
      *out = static_cast<uint32_t>((a - kFuncBase) / 16);
      return true;
    };
    if (!callee_of(first, &callee))
      return fail(x, FindingKind::trap, "a call through a register that holds no function address", first);
    uint32_t group = 0;
    each(todo, [&](uint32_t l) {
      uint32_t c;
      if (callee_of(l, &c) && c == callee) group |= 1u << l;
    });
    todo &= ~group;
    const Function& fn = P.fns[callee];
    if (fn.declared_only || fn.is_entry)
      return fail(x, FindingKind::unsupported, fmt::format("not supported by the CPU engine: a call of '{}'", fn.name), first);
    if (in.nargs != fn.params.size() || in.nrets != fn.rets.size())
      return fail(x, FindingKind::trap, fmt::format("a call of '{}' with {} arguments and {} returns; it takes {} and {}",
                                                    fn.name, in.nargs, in.nrets, fn.params.size(), fn.rets.size()), first);
    const Frame& parent = x.w.frames[static_cast<size_t>(x.frame_id)];
    if (parent.depth + 1 >= limits::kMaxCallDepth)
      return fail(x, FindingKind::limit, fmt::format("call depth beyond the CPU engine's limit of {}", limits::kMaxCallDepth), first);
    uint64_t regs = (uint64_t{fn.slots} * 32 * 8) + uint64_t{fn.preds} * 8;
    uint64_t live = 0;
    for (auto& w : x.cta.warps) live += w.reg_bytes;
    if (live + regs > limits::kMaxFrameBytesPerCta)
      return fail(x, FindingKind::limit, "the CTA's call frames exceed the CPU engine's register memory limit", first);
    // Setting up the frame zeroes the callee's registers (32 lanes of each) and marks its .local
    // bytes never written in every calling lane: work in proportion to the frame, charged to the
    // budget so that a loop of calls into a huge frame ends as `budget` in time, as any loop does.
    uint64_t setup = regs + uint64_t{fn.frame_bytes} * static_cast<uint32_t>(std::popcount(group));
    x.L.lane_instructions += setup / limits::kFrameBytesPerLaneInstruction;
    uint64_t align = fn.frame_align ? fn.frame_align : 16;
    uint64_t base = (parent.stack_off + P.fns[parent.fn].frame_bytes + align - 1) / align * align;
    uint64_t end = base + fn.frame_bytes;
    int32_t id = x.w.new_frame(fn, callee, x.frame_id);
    Frame& child = x.w.frames[static_cast<size_t>(id)];
    Frame& par = x.w.frames[static_cast<size_t>(x.frame_id)];  // new_frame may have moved frames
    child.stack_off = base;
    child.ret_pc = x.pc + 1;
    child.call = &in;
    bool ok = true;
    each(group, [&](uint32_t l) {
      if (!ok) return;
      ThreadStack& st = x.cta.stacks[x.tid(l)];
      if (!st.reserve(end)) {
        ok = false;
        fail(x, FindingKind::limit, "a thread's .local memory and call frames exceed the CPU engine's limit", l);
        return;
      }
      std::memset(st.init.data() + base, 0, fn.frame_bytes);
      for (uint32_t i = 0; i < in.nargs; ++i) {
        const Opnd& a = in.o[in.nrets + i];
        const ParamSlot& p = fn.params[i];
        uint8_t* dst = st.bytes.data() + base + p.offset;
        uint8_t* dinit = st.init.data() + base + p.offset;
        if (a.kind == OpndKind::frame_addr) {
          uint64_t src = stack_offset(a, par);
          if (src + p.size > st.bytes.size()) {
            ok = false;
            fail(x, FindingKind::oob, "a call argument outside the caller's frame", l);
            return;
          }
          std::memmove(dst, st.bytes.data() + src, p.size);
          std::memmove(dinit, st.init.data() + src, p.size);
        } else {
          uint64_t v = read_operand(x, a, l, 64);
          std::memcpy(dst, &v, std::min<uint32_t>(p.size, 8));
          std::memset(dinit, (taint_of(x, a) >> l) & 1 ? 0 : 1, p.size);
        }
      }
      x.w.frame[l] = id;
      x.w.pc[l] = 0;
    });
    if (!ok) return Flow::stop;
    uint32_t n = static_cast<uint32_t>(std::popcount(group));
    child.refs += n;
    par.refs -= n;  // cannot reach 0: the child holds a reference
  }
  return Flow::done;
}

Flow do_ret(Exec& x) {
  advance(x, x.issued & ~x.mask);
  Frame& fr = x.f();
  if (fr.parent < 0) {  // ret from the entry: the thread is done
    each(x.mask, [&](uint32_t l) {
      x.w.state[l] = LaneState::exited;
      if (x.cta.race) x.L.race->on_exit(*x.cta.race, x.tid(l));
    });
    for (uint32_t i = 0, n = static_cast<uint32_t>(std::popcount(x.mask)); i < n; ++i) x.w.release_frame(x.frame_id);
    return Flow::done;
  }
  const Function& fn = x.L.prog->fns[fr.fn];
  const Inst& call = *fr.call;
  int32_t pid = fr.parent;
  uint64_t off = fr.stack_off;
  uint32_t ret_pc = fr.ret_pc;
  each(x.mask, [&](uint32_t l) {
    ThreadStack& st = x.cta.stacks[x.tid(l)];
    Frame& par = x.w.frames[static_cast<size_t>(pid)];
    for (uint32_t i = 0; i < call.nrets; ++i) {
      const Opnd& r = call.o[i];
      const ParamSlot& p = fn.rets[i];
      const uint8_t* src = st.bytes.data() + off + p.offset;
      bool tainted = std::memchr(st.init.data() + off + p.offset, 0, p.size) != nullptr;
      if (r.kind == OpndKind::frame_addr) {
        uint64_t dst = stack_offset(r, par);
        if (dst + p.size <= st.bytes.size()) {
          std::memmove(st.bytes.data() + dst, src, p.size);
          std::memmove(st.init.data() + dst, st.init.data() + off + p.offset, p.size);
        }
      } else if (r.kind == OpndKind::reg) {
        uint64_t v = 0;
        std::memcpy(&v, src, std::min<uint32_t>(p.size, 8));
        par.regs[size_t{r.idx} * 32 + l] = v;
        par.taint[r.idx] = (par.taint[r.idx] & ~(1u << l)) | (uint32_t{tainted} << l);
      }
    }
    x.w.frame[l] = pid;
    x.w.pc[l] = ret_pc;
    par.refs++;
  });
  for (uint32_t i = 0, n = static_cast<uint32_t>(std::popcount(x.mask)); i < n; ++i) x.w.release_frame(x.frame_id);
  return Flow::done;
}

// The member mask operand of each collective.
int mask_operand(Op op) {
  switch (op) {
    case Op::shfl: return 4;
    case Op::vote: case Op::redux: case Op::match: return 2;
    case Op::elect: return 1;
    case Op::bar_warp_sync: return 0;
    default: return -1;
  }
}

Flow collective(Exec& x) {
  const Inst& in = x.in;
  advance(x, x.issued & ~x.mask);
  if (!x.mask) return Flow::done;
  int mi = mask_operand(in.op);
  uint32_t first = static_cast<uint32_t>(std::countr_zero(x.mask));
  uint32_t member = static_cast<uint32_t>(read_operand(x, in.o[mi], first, 32));
  uint32_t bad = 0;
  each(x.mask, [&](uint32_t l) {
    if (static_cast<uint32_t>(read_operand(x, in.o[mi], l, 32)) != member) bad |= 1u << l;
  });
  if (bad)
    return fail(x, FindingKind::warp_mask,
                fmt::format("lanes of one {} disagree on the member mask", x.fn.opcodes[x.pc]),
                static_cast<uint32_t>(std::countr_zero(bad)));
  if (x.mask & ~member)
    return fail(x, FindingKind::warp_mask,
                fmt::format("lane {} executes {} outside its member mask 0x{:08x}",
                            std::countr_zero(x.mask & ~member), x.fn.opcodes[x.pc], member),
                static_cast<uint32_t>(std::countr_zero(x.mask & ~member)));
  // Lanes already waiting here join; the collective runs once every live member is here.
  uint32_t waiting = 0;
  for (uint32_t l = 0; l < 32; ++l)
    if (x.w.state[l] == LaneState::coll && x.w.frame[l] == x.frame_id && x.w.pc[l] == x.pc) waiting |= 1u << l;
  uint32_t group = x.mask | waiting;
  uint32_t required = member & x.w.live();
  if (required & ~group) {
    each(x.mask, [&](uint32_t l) { x.w.state[l] = LaneState::coll; });
    return Flow::done;
  }
  each(waiting, [&](uint32_t l) { x.w.state[l] = LaneState::run; });
  Exec g{x.L, x.cta, x.w, x.frame_id, x.fn, in, x.pc, group, group};
  uint32_t taint = 0;
  for (int i = 1; i < in.n; ++i) taint |= taint_of(x, in.o[i]) & group;
  switch (in.op) {
    case Op::bar_warp_sync:
      // Only bar.warp.sync orders memory among its lanes (PTX ISA, bar.warp.sync: "also
      // guarantee memory ordering among threads participating in barrier"); the manual gives
      // no such ordering to shfl/vote/match/redux.sync, so lanes that exchange data through
      // memory after only those still race.
      if (x.cta.race) {
        std::vector<uint32_t>& tids = x.L.scratch_tids;
        tids.clear();
        each(group, [&](uint32_t l) { tids.push_back(x.tid(l)); });
        x.L.race->on_warp_sync(*x.cta.race, tids);
      }
      break;
    case Op::shfl: {
      uint64_t val[32];
      each(group, [&](uint32_t l) { val[l] = read_operand(g, in.o[1], l, 32); });
      uint32_t src_taint = taint_of(g, in.o[1]);
      uint32_t out_taint = 0;
      for (uint32_t m = group; m; m &= m - 1) {
        uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
        uint32_t b = static_cast<uint32_t>(read_operand(g, in.o[2], l, 32)) & 31;
        uint32_t c = static_cast<uint32_t>(read_operand(g, in.o[3], l, 32));
        uint32_t seg = (c >> 8) & 31;
        int32_t max_lane = static_cast<int32_t>((l & seg) | (c & 31 & ~seg));
        int32_t min_lane = static_cast<int32_t>(l & seg);
        int32_t j = 0;
        bool p = false;
        switch (static_cast<ShflMode>(in.sub)) {
          case ShflMode::up: j = static_cast<int32_t>(l) - static_cast<int32_t>(b); p = j >= max_lane; break;
          case ShflMode::down: j = static_cast<int32_t>(l + b); p = j <= max_lane; break;
          case ShflMode::bfly: j = static_cast<int32_t>(l ^ b); p = j <= max_lane; break;
          case ShflMode::idx: j = min_lane | static_cast<int32_t>(b & ~seg); p = j <= max_lane; break;
        }
        if (!p) j = static_cast<int32_t>(l);
        // Reading a lane that is not taking part is undefined in the manual: a finding, not a guess.
        if (!((group >> j) & 1))
          return fail(g, FindingKind::warp_mask,
                      fmt::format("lane {} reads lane {}, which is not in the shfl's member mask or has exited", l, j), l);
        write_reg(g, in.o[0], l, val[j], 32);
        if (in.o[5].kind != OpndKind::none) write_reg(g, in.o[5], l, p, 1);
        out_taint |= ((src_taint >> j) & 1) << l;
      }
      set_taint(g, in.o[0], out_taint | (taint & ~src_taint));
      return Flow::next;
    }
    case Op::vote: {
      uint32_t ballot = 0;
      each(group, [&](uint32_t l) { ballot |= uint32_t{pred_value(g, in.o[1], l)} << l; });
      VoteMode m = static_cast<VoteMode>(in.sub);
      each(group, [&](uint32_t l) {
        if (m == VoteMode::ballot) write_reg(g, in.o[0], l, ballot, 32);
        else write_reg(g, in.o[0], l, m == VoteMode::all ? ballot == group : m == VoteMode::any ? ballot != 0
                                                                         : (ballot == 0 || ballot == group), 1);
      });
      break;
    }
    case Op::redux: {
      bool sg = dt_signed(in.type);
      uint32_t acc = 0;
      bool firstv = true;
      each(group, [&](uint32_t l) {
        uint32_t v = static_cast<uint32_t>(read_operand(g, in.o[1], l, 32));
        if (firstv) { acc = v; firstv = false; return; }
        switch (static_cast<ReduxOp>(in.sub)) {
          case ReduxOp::add: acc += v; break;
          case ReduxOp::min: acc = sg ? static_cast<uint32_t>(std::min(static_cast<int32_t>(acc), static_cast<int32_t>(v))) : std::min(acc, v); break;
          case ReduxOp::max: acc = sg ? static_cast<uint32_t>(std::max(static_cast<int32_t>(acc), static_cast<int32_t>(v))) : std::max(acc, v); break;
          case ReduxOp::and_: acc &= v; break;
          case ReduxOp::or_: acc |= v; break;
          case ReduxOp::xor_: acc ^= v; break;
        }
      });
      each(group, [&](uint32_t l) { write_reg(g, in.o[0], l, acc, 32); });
      break;
    }
    case Op::match: {
      int bits = dt_bits(in.type);
      each(group, [&](uint32_t l) {
        uint64_t v = read_operand(g, in.o[1], l, bits);
        uint32_t same = 0;
        each(group, [&](uint32_t k) { same |= uint32_t{read_operand(g, in.o[1], k, bits) == v} << k; });
        if (in.sub == 0) write_reg(g, in.o[0], l, same, 32);
        else {
          write_reg(g, in.o[0], l, same == group ? group : 0, 32);
          if (in.o[5].kind != OpndKind::none) write_reg(g, in.o[5], l, same == group, 1);
        }
      });
      break;
    }
    case Op::elect: {
      uint32_t leader = static_cast<uint32_t>(std::countr_zero(group));
      each(group, [&](uint32_t l) {
        write_reg(g, in.o[0], l, leader, 32);
        write_reg(g, in.o[5], l, l == leader, 1);
      });
      break;
    }
    default: break;
  }
  if (in.o[0].kind != OpndKind::none) set_taint(g, in.o[0], taint);
  if (in.o[5].kind != OpndKind::none) set_taint(g, in.o[5], taint);
  each(group, [&](uint32_t l) { x.w.pc[l] = x.pc + 1; });
  return Flow::done;
}

Flow barrier(Exec& x) {
  const Inst& in = x.in;
  advance(x, x.issued & ~x.mask);
  if (!x.mask) return Flow::done;
  if (taint_of(x, in.o[0]) & x.mask)
    return fail(x, FindingKind::uninit, "a barrier id read from never-written memory", std::countr_zero(x.mask));
  uint32_t first = static_cast<uint32_t>(std::countr_zero(x.mask));
  uint32_t id = static_cast<uint32_t>(read_operand(x, in.o[0], first, 32));
  if (id >= 16) return fail(x, FindingKind::barrier_count, fmt::format("barrier id {} is not in 0..15", id), first);
  std::optional<uint32_t> count;
  if (in.op != Op::bar_red ? in.n == 2 : in.o[2].kind != OpndKind::none) {
    count = static_cast<uint32_t>(read_operand(x, in.o[in.op == Op::bar_red ? 2 : 1], first, 32));
    if (*count % 32 != 0 || *count == 0)
      return fail(x, FindingKind::barrier_count,
                  fmt::format("barrier thread count {} is not a positive multiple of the warp size", *count), first);
  }
  Barrier& b = x.cta.bars[id];
  if (count && b.count && *b.count != *count)
    return fail(x, FindingKind::barrier_count,
                fmt::format("barrier {} reached with thread counts {} and {}", id, *b.count, *count), first);
  if (in.op == Op::bar_arrive) {
    // Counts the warp without blocking it (arrivals are per warp: the manual counts warp size).
    if (in.flag && (x.mask != x.w.live()))
      return fail(x, FindingKind::barrier_divergence,
                  fmt::format("bar.arrive {} reached by lanes 0x{:08x} of warp {}, not by all its live lanes 0x{:08x}",
                              id, x.mask, x.w.index, x.w.live()), first);
    if (count) b.count = count;
    b.arrived += 32;
    if (x.cta.race) {  // what the arrivers did so far is released to the barrier's waiters
      std::vector<uint32_t>& tids = x.L.scratch_tids;
      tids.clear();
      each(x.mask, [&](uint32_t l) { tids.push_back(x.tid(l)); });
      x.L.race->on_barrier_arrive(*x.cta.race, id, tids);
    }
    advance(x, x.mask);
    return Flow::done;
  }
  if (count) b.count = count;
  x.w.bar_id = id;
  each(x.mask, [&](uint32_t l) {
    x.w.state[l] = LaneState::bar;
    if (in.op == Op::bar_red) x.w.bar_pred[l] = pred_value(x, in.o[3], l);
  });
  return Flow::done;
}

}  // namespace

Flow exec_control(Exec& x) {
  const Inst& in = x.in;
  switch (in.op) {
    case Op::bra:
      each(x.issued, [&](uint32_t l) { x.w.pc[l] = (x.mask >> l) & 1 ? in.target : x.pc + 1; });
      return Flow::done;
    case Op::exit:
      advance(x, x.issued & ~x.mask);
      each(x.mask, [&](uint32_t l) {
        x.w.state[l] = LaneState::exited;
        x.w.release_frame(x.w.frame[l]);
        if (x.cta.race) x.L.race->on_exit(*x.cta.race, x.tid(l));
      });
      return Flow::done;
    case Op::trap:
      if (!x.mask) return Flow::next;
      return fail(x, FindingKind::trap, x.fn.opcodes[x.pc] + " executed", std::countr_zero(x.mask));
    case Op::ret: return do_ret(x);
    case Op::call: return do_call(x);
    case Op::bar_sync: case Op::bar_arrive: case Op::bar_red: return barrier(x);
    case Op::activemask:
      set_taint(x, in.o[0], 0);
      each(x.mask, [&](uint32_t l) { write_reg(x, in.o[0], l, x.mask, 32); });
      return Flow::next;
    default: return collective(x);
  }
}

}  // namespace ptxforge::emu
