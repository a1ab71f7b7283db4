// The interpreter's core: issuing one instruction for a group of lanes (guard, budget, counts),
// operand reads and writes on structure-of-arrays registers with their taint masks, and the
// integer, logic and data-movement ops. Each case loops over the executing lanes.
#include "emu/interp.h"

#include <bit>

#include <fmt/format.h>

#include "emu/alu.h"
#include "emu/limits.h"
#include "emu/race.h"

namespace ptxforge::emu {

namespace {

uint64_t mask_bits(uint64_t v, int bits) { return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1); }
int64_t sext(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t s = uint64_t{1} << (bits - 1);
  v = mask_bits(v, bits);
  return static_cast<int64_t>((v ^ s) - s);
}

template <typename F>
void each(uint32_t mask, F&& f) {
  for (uint32_t m = mask; m; m &= m - 1) f(static_cast<uint32_t>(std::countr_zero(m)));
}

uint64_t special(Exec& x, SReg r, uint32_t lane) {
  const LaunchConfig& c = x.L.config;
  ThreadId t = x.who(lane);
  switch (r) {
    case SReg::tid_x: return t.thread[0];
    case SReg::tid_y: return t.thread[1];
    case SReg::tid_z: return t.thread[2];
    case SReg::ntid_x: return c.block[0];
    case SReg::ntid_y: return c.block[1];
    case SReg::ntid_z: return c.block[2];
    case SReg::ctaid_x: return t.cta[0];
    case SReg::ctaid_y: return t.cta[1];
    case SReg::ctaid_z: return t.cta[2];
    case SReg::nctaid_x: return c.grid[0];
    case SReg::nctaid_y: return c.grid[1];
    case SReg::nctaid_z: return c.grid[2];
    case SReg::laneid: return lane;
    case SReg::warpid: return x.w.index;
    case SReg::nwarpid: return x.cta.warps.size();
    case SReg::lanemask_eq: return uint32_t{1} << lane;
    case SReg::lanemask_le: return lane == 31 ? 0xffffffffu : (uint32_t{2} << lane) - 1;
    case SReg::lanemask_lt: return (uint32_t{1} << lane) - 1;
    case SReg::lanemask_ge: return ~((uint32_t{1} << lane) - 1);
    case SReg::lanemask_gt: return lane == 31 ? 0 : ~((uint32_t{2} << lane) - 1);
    case SReg::smid: return 0;
    case SReg::nsmid: return 1;
    // Synthetic and deterministic (section 3): a warp's issues, 1 ns per issue of the CTA.
    case SReg::clock: return x.w.issued & 0xffffffffu;
    case SReg::clock_hi: return x.w.issued >> 32;
    case SReg::clock64: return x.w.issued;
    case SReg::globaltimer: return x.cta.issues * limits::kGlobaltimerNsPerIssue;
    case SReg::globaltimer_lo: return (x.cta.issues * limits::kGlobaltimerNsPerIssue) & 0xffffffffu;
    case SReg::globaltimer_hi: return (x.cta.issues * limits::kGlobaltimerNsPerIssue) >> 32;
    case SReg::dynamic_smem_size: return c.dynamic_smem;
    case SReg::total_smem_size: return x.L.shared_bytes;
    case SReg::gridid: return x.L.gridid;
    case SReg::warpsz: return 32;
  }
  return 0;
}

}  // namespace

uint64_t read_operand(Exec& x, const Opnd& o, uint32_t lane, int bits) {
  switch (o.kind) {
    case OpndKind::reg: return mask_bits(x.f().regs[size_t{o.idx} * 32 + lane], bits);
    case OpndKind::pred: return ((x.f().preds[o.idx] >> lane) & 1) ^ (o.neg ? 1 : 0);
    case OpndKind::imm: return mask_bits(o.imm, bits);
    case OpndKind::sreg: return mask_bits(special(x, static_cast<SReg>(o.idx), lane), bits);
    case OpndKind::frame_addr: return mask_bits(o.imm + x.f().stack_off, bits);
    default: return 0;
  }
}

void write_compare(Exec& x, const Inst& in, uint32_t lane, bool r) {
  auto combine = [&](bool v) {
    if (in.sub == 0) return v;
    bool c = pred_value(x, in.o[3], lane);
    Combine k = static_cast<Combine>(in.sub);
    return k == Combine::and_ ? v && c : k == Combine::or_ ? v || c : v != c;
  };
  if (in.op == Op::setp) {
    write_reg(x, in.o[0], lane, combine(r), 1);
    if (in.o[4].kind != OpndKind::none) write_reg(x, in.o[4], lane, combine(!r), 1);
  } else {
    write_reg(x, in.o[0], lane, combine(r) ? (in.type == DT::f32 ? 0x3f800000u : 0xffffffffu) : 0, 32);
  }
}

bool pred_value(Exec& x, const Opnd& o, uint32_t lane) { return read_operand(x, o, lane, 1) != 0; }

uint32_t taint_of(Exec& x, const Opnd& o) {
  if (o.kind == OpndKind::reg) return x.f().taint[o.idx];
  if (o.kind == OpndKind::pred) return x.f().pred_taint[o.idx];
  return 0;
}

void write_reg(Exec& x, const Opnd& d, uint32_t lane, uint64_t v, int bits) {
  if (d.kind == OpndKind::reg) x.f().regs[size_t{d.idx} * 32 + lane] = mask_bits(v, bits);
  else if (d.kind == OpndKind::pred) {
    uint32_t& p = x.f().preds[d.idx];
    p = (p & ~(1u << lane)) | (uint32_t{v != 0} << lane);
  }
}

void set_taint(Exec& x, const Opnd& d, uint32_t tainted) {
  uint32_t* t = d.kind == OpndKind::reg ? &x.f().taint[d.idx] : d.kind == OpndKind::pred ? &x.f().pred_taint[d.idx]
                                                                                          : nullptr;
  if (t) *t = (*t & ~x.mask) | (tainted & x.mask);
}

std::string origin(const Warp& w) {
  return w.taint_line ? fmt::format(" (the last load of never-written bytes: line {})", w.taint_line) : "";
}

Flow fail(Exec& x, FindingKind kind, std::string message, uint32_t lane) {
  Finding f;
  f.kind = kind;
  f.message = std::move(message);
  f.pos = {x.in.line, x.in.col};
  f.who = x.who(lane);
  x.L.finding = std::move(f);
  return Flow::stop;
}

namespace {

// Integer, logic and data movement.
Flow exec_int(Exec& x) {
  const Inst& in = x.in;
  int bits = dt_bits(in.type);
  bool sg = dt_signed(in.type);
  auto rd = [&](int i, uint32_t l) { return read_operand(x, in.o[i], l, bits); };
  auto wr = [&](uint32_t l, uint64_t v) { write_reg(x, in.o[0], l, v, bits); };
  uint32_t t = 0;
  if (in.op == Op::mov_unpack) t = taint_of(x, in.o[in.vec]);  // o[0..vec) are all destinations
  else
    for (int i = 1; i < in.n; ++i) t |= taint_of(x, in.o[i]);
  if (in.guard >= 0) t |= x.f().pred_taint[static_cast<size_t>(in.guard)];
  set_taint(x, in.o[0], t);
  uint32_t& cc = x.w.cc;
  switch (in.op) {
    case Op::mov: each(x.mask, [&](uint32_t l) { wr(l, rd(1, l)); }); break;
    case Op::mov_pack: {
      int part = bits / in.vec;
      each(x.mask, [&](uint32_t l) {
        uint64_t v = 0;
        for (int i = 0; i < in.vec; ++i) v |= read_operand(x, in.o[1 + i], l, part) << (i * part);
        wr(l, v);
      });
      break;
    }
    case Op::mov_unpack: {
      int part = bits / in.vec;
      each(x.mask, [&](uint32_t l) {
        uint64_t v = read_operand(x, in.o[in.vec], l, bits);
        for (int i = 0; i < in.vec; ++i) write_reg(x, in.o[i], l, v >> (i * part), part);
      });
      for (int i = 1; i < in.vec; ++i) set_taint(x, in.o[i], t);
      break;
    }
    case Op::add: each(x.mask, [&](uint32_t l) {
        if (in.fm.sat) wr(l, static_cast<uint32_t>(alu::add_sat_s32(static_cast<int32_t>(rd(1, l)), static_cast<int32_t>(rd(2, l)))));
        else wr(l, rd(1, l) + rd(2, l));
      }); break;
    case Op::sub: each(x.mask, [&](uint32_t l) {
        if (in.fm.sat) wr(l, static_cast<uint32_t>(alu::sub_sat_s32(static_cast<int32_t>(rd(1, l)), static_cast<int32_t>(rd(2, l)))));
        else wr(l, rd(1, l) - rd(2, l));
      }); break;
    case Op::add_cc: case Op::addc: case Op::sub_cc: case Op::subc:
      each(x.mask, [&](uint32_t l) {
        bool in_c = (in.op == Op::addc || in.op == Op::subc) && ((cc >> l) & 1);
        uint64_t a = rd(1, l), b = rd(2, l);
        bool sub = in.op == Op::sub_cc || in.op == Op::subc;
        uint64_t r;
        bool out_c;
        if (!sub) {
          r = mask_bits(a + b + in_c, bits);
          out_c = bits == 64 ? (r < a || (in_c && r == a)) : ((a + b + in_c) >> bits) != 0;
        } else {  // CC.CF holds the borrow
          r = mask_bits(a - b - in_c, bits);
          out_c = a < b || (a == b && in_c);
        }
        wr(l, r);
        if (in.op == Op::add_cc || in.op == Op::sub_cc || in.flag) cc = (cc & ~(1u << l)) | (uint32_t{out_c} << l);
      });
      break;
    case Op::mul_lo: each(x.mask, [&](uint32_t l) { wr(l, rd(1, l) * rd(2, l)); }); break;
    case Op::mad_lo: each(x.mask, [&](uint32_t l) { wr(l, rd(1, l) * rd(2, l) + rd(3, l)); }); break;
    case Op::mul_hi: case Op::mad_hi: case Op::mad_cc: case Op::madc:
      each(x.mask, [&](uint32_t l) {
        uint64_t a = rd(1, l), b = rd(2, l), hi, lo;
        if (bits == 64) {
          hi = sg ? static_cast<uint64_t>(alu::mul_hi_s64(static_cast<int64_t>(a), static_cast<int64_t>(b)))
                  : alu::mul_hi_u64(a, b);
          lo = a * b;
        } else {
          uint64_t p = sg ? static_cast<uint64_t>(sext(a, bits) * sext(b, bits)) : a * b;
          hi = mask_bits(p >> bits, bits);
          lo = mask_bits(p, bits);
        }
        if (in.op == Op::mul_hi) return wr(l, hi);
        uint64_t c = rd(3, l);
        if (in.op == Op::mad_hi) {
          if (in.fm.sat)  // mad.hi.sat.s32: the sum saturates
            return wr(l, static_cast<uint32_t>(alu::add_sat_s32(static_cast<int32_t>(hi), static_cast<int32_t>(c))));
          return wr(l, hi + c);
        }
        uint64_t p = in.sub ? hi : lo;
        bool in_c = in.op == Op::madc && ((cc >> l) & 1);
        uint64_t r = mask_bits(p + c + in_c, bits);
        bool out_c = bits == 64 ? (r < p || (in_c && r == p)) : ((p + c + in_c) >> bits) != 0;
        wr(l, r);
        if (in.op == Op::mad_cc || in.flag) cc = (cc & ~(1u << l)) | (uint32_t{out_c} << l);
      });
      break;
    case Op::mul_wide: case Op::mad_wide:
      each(x.mask, [&](uint32_t l) {
        uint64_t a = rd(1, l), b = rd(2, l);
        uint64_t p = sg ? static_cast<uint64_t>(sext(a, bits) * sext(b, bits)) : a * b;
        if (in.op == Op::mad_wide) p += read_operand(x, in.o[3], l, bits * 2);
        write_reg(x, in.o[0], l, p, bits * 2);
      });
      break;
    case Op::mul24_lo: case Op::mul24_hi: case Op::mad24_lo: case Op::mad24_hi:
      each(x.mask, [&](uint32_t l) {
        int64_t a = sg ? sext(rd(1, l), 24) : static_cast<int64_t>(rd(1, l) & 0xffffff);
        int64_t b = sg ? sext(rd(2, l), 24) : static_cast<int64_t>(rd(2, l) & 0xffffff);
        uint64_t p = static_cast<uint64_t>(a * b);
        uint64_t r = (in.op == Op::mul24_hi || in.op == Op::mad24_hi) ? (p >> 16) : p;
        if (in.op == Op::mad24_lo || in.op == Op::mad24_hi) r += rd(3, l);
        wr(l, r);
      });
      break;
    case Op::div: case Op::rem:
      each(x.mask, [&](uint32_t l) {
        uint64_t a = rd(1, l), b = rd(2, l);
        // Division by zero is unspecified in the manual: all ones (div) and the dividend (rem).
        if (b == 0) return wr(l, in.op == Op::div ? ~uint64_t{0} : a);
        if (sg) {
          int64_t sa = sext(a, bits), sb = sext(b, bits);
          if (sb == -1) return wr(l, in.op == Op::div ? static_cast<uint64_t>(0 - static_cast<uint64_t>(sa)) : 0);
          return wr(l, static_cast<uint64_t>(in.op == Op::div ? sa / sb : sa % sb));
        }
        wr(l, in.op == Op::div ? a / b : a % b);
      });
      break;
    case Op::abs: each(x.mask, [&](uint32_t l) { int64_t a = sext(rd(1, l), bits); wr(l, a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a)); }); break;
    case Op::neg: each(x.mask, [&](uint32_t l) { wr(l, 0 - rd(1, l)); }); break;
    case Op::min: case Op::max:
      each(x.mask, [&](uint32_t l) {
        uint64_t a = rd(1, l), b = rd(2, l);
        bool less = sg ? sext(a, bits) < sext(b, bits) : a < b;
        uint64_t r = (in.op == Op::min) == less ? a : b;
        if (in.fm.sat && sext(r, bits) < 0) r = 0;  // .relu
        wr(l, r);
      });
      break;
    case Op::and_: each(x.mask, [&](uint32_t l) { wr(l, rd(1, l) & rd(2, l)); }); break;
    case Op::or_: each(x.mask, [&](uint32_t l) { wr(l, rd(1, l) | rd(2, l)); }); break;
    case Op::xor_: each(x.mask, [&](uint32_t l) { wr(l, rd(1, l) ^ rd(2, l)); }); break;
    case Op::not_: each(x.mask, [&](uint32_t l) { wr(l, in.type == DT::pred ? !rd(1, l) : ~rd(1, l)); }); break;
    case Op::cnot: each(x.mask, [&](uint32_t l) { wr(l, rd(1, l) == 0); }); break;
    case Op::shl: each(x.mask, [&](uint32_t l) { wr(l, alu::shl(rd(1, l), static_cast<uint32_t>(read_operand(x, in.o[2], l, 32)), bits)); }); break;
    case Op::shr: each(x.mask, [&](uint32_t l) {
        uint32_t n = static_cast<uint32_t>(read_operand(x, in.o[2], l, 32));
        wr(l, sg ? alu::shr_s(rd(1, l), n, bits) : alu::shr_u(rd(1, l), n, bits));
      }); break;
    case Op::selp: each(x.mask, [&](uint32_t l) { wr(l, pred_value(x, in.o[3], l) ? rd(1, l) : rd(2, l)); }); break;
    case Op::slct: each(x.mask, [&](uint32_t l) {
        uint64_t c = read_operand(x, in.o[3], l, 32);
        bool ge = in.type2 == DT::f32 ? alu::cmp_f32(static_cast<uint32_t>(c), 0, alu::Cmp::ge, in.fm.ftz)
                                      : static_cast<int32_t>(c) >= 0;
        wr(l, ge ? rd(1, l) : rd(2, l));
      }); break;
    case Op::popc: each(x.mask, [&](uint32_t l) { write_reg(x, in.o[0], l, alu::popc(rd(1, l), bits), 32); }); break;
    case Op::clz: each(x.mask, [&](uint32_t l) { write_reg(x, in.o[0], l, alu::clz(rd(1, l), bits), 32); }); break;
    case Op::bfind: each(x.mask, [&](uint32_t l) { write_reg(x, in.o[0], l, alu::bfind(rd(1, l), bits, sg, in.flag), 32); }); break;
    case Op::brev: each(x.mask, [&](uint32_t l) { wr(l, alu::brev(rd(1, l), bits)); }); break;
    case Op::bfe: each(x.mask, [&](uint32_t l) {
        uint32_t pos = static_cast<uint32_t>(read_operand(x, in.o[2], l, 32)), len = static_cast<uint32_t>(read_operand(x, in.o[3], l, 32));
        wr(l, sg ? alu::bfe_s(rd(1, l), pos, len, bits) : alu::bfe_u(rd(1, l), pos, len, bits));
      }); break;
    case Op::bfi: each(x.mask, [&](uint32_t l) {
        uint32_t pos = static_cast<uint32_t>(read_operand(x, in.o[3], l, 32)), len = static_cast<uint32_t>(read_operand(x, in.o[4], l, 32));
        wr(l, alu::bfi(rd(1, l), rd(2, l), pos, len, bits));
      }); break;
    case Op::prmt: each(x.mask, [&](uint32_t l) {
        wr(l, alu::prmt(static_cast<uint32_t>(rd(1, l)), static_cast<uint32_t>(rd(2, l)), static_cast<uint32_t>(rd(3, l)), in.sub));
      }); break;
    case Op::lop3: each(x.mask, [&](uint32_t l) {
        wr(l, alu::lop3(static_cast<uint32_t>(rd(1, l)), static_cast<uint32_t>(rd(2, l)), static_cast<uint32_t>(rd(3, l)),
                        static_cast<uint8_t>(rd(4, l))));
      }); break;
    case Op::shf: each(x.mask, [&](uint32_t l) {
        uint32_t a = static_cast<uint32_t>(rd(1, l)), b = static_cast<uint32_t>(rd(2, l)), c = static_cast<uint32_t>(rd(3, l));
        wr(l, in.sub ? alu::shf_l(a, b, c, in.flag) : alu::shf_r(a, b, c, in.flag));
      }); break;
    case Op::dp4a: case Op::dp2a: each(x.mask, [&](uint32_t l) {
        uint32_t a = static_cast<uint32_t>(rd(1, l)), b = static_cast<uint32_t>(rd(2, l));
        int32_t c = static_cast<int32_t>(rd(3, l));
        bool as = dt_signed(in.type), bs = dt_signed(in.type2);
        wr(l, static_cast<uint32_t>(in.op == Op::dp4a ? alu::dp4a(a, b, c, as, bs) : alu::dp2a(a, b, c, as, bs, in.sub)));
      }); break;
    case Op::setp: case Op::set:
      each(x.mask, [&](uint32_t l) {
        int cb = dt_bits(in.type2);
        bool r = alu::cmp_int(read_operand(x, in.o[1], l, cb), read_operand(x, in.o[2], l, cb), in.cmp, cb,
                              dt_signed(in.type2));
        write_compare(x, in, l, r);
      });
      if (in.o[4].kind != OpndKind::none) set_taint(x, in.o[4], t);
      break;
    default:
      return fail(x, FindingKind::unsupported, "not supported by the CPU engine: " + x.fn.opcodes[x.pc],
                  static_cast<uint32_t>(std::countr_zero(x.mask | 1u)));
  }
  return Flow::next;
}

bool float_op(const Inst& in) {
  switch (in.op) {
    case Op::setp: case Op::set: return dt_float(in.type2);
    case Op::mov: case Op::mov_pack: case Op::mov_unpack: case Op::selp: case Op::slct:
    case Op::and_: case Op::or_: case Op::xor_: case Op::not_: case Op::shl: case Op::shr: return false;
    case Op::cvt: case Op::fma: case Op::rcp: case Op::sqrt: case Op::rsqrt: case Op::ex2: case Op::lg2:
    case Op::sin: case Op::cos: case Op::tanh: case Op::copysign: case Op::testp: return true;
    default: return dt_float(in.type);
  }
}

}  // namespace

bool issue(Launch& L, Cta& cta, Warp& w, uint32_t mask, int32_t frame, uint32_t pc) {
  const Frame& fr = w.frames[static_cast<size_t>(frame)];
  const Function& fn = L.prog->fns[fr.fn];
  const Inst& in = fn.code[pc];
  uint32_t exec = mask;
  Exec x{L, cta, w, frame, fn, in, pc, mask, mask};
  L.last_line = in.line;
  if (in.guard >= 0) {
    uint32_t p = fr.preds[static_cast<size_t>(in.guard)];
    exec = mask & (in.guard_neg ? ~p : p);
    uint32_t tainted = fr.pred_taint[static_cast<size_t>(in.guard)] & mask;
    if (tainted && (in.op == Op::bra || in.op == Op::ret || in.op == Op::exit || in.op == Op::call)) {
      x.mask = mask;
      fail(x, FindingKind::uninit,
           "a value read from never-written memory or a never-written register" + origin(w) + " decides a branch",
           static_cast<uint32_t>(std::countr_zero(tainted)));
      return false;
    }
  }
  x.mask = exec;
  uint32_t n = static_cast<uint32_t>(std::popcount(mask));
  L.lane_instructions += n;
  if (L.lane_instructions > L.config.budget) {
    fail(x, FindingKind::budget,
         fmt::format("exceeded the CPU engine's budget of {} lane-instructions", L.config.budget),
         static_cast<uint32_t>(std::countr_zero(mask)));
    return false;
  }
  Counts& c = (*L.counts)[fr.fn][pc];
  c.warp_issues += exec != 0;  // with some lane's guard true: what prove counts (eval/prove_engine.cpp)
  c.lane_executions += static_cast<uint64_t>(std::popcount(exec));
  w.issued++;
  cta.issues++;
  Flow flow;
  switch (in.op) {
    case Op::nop: flow = Flow::next; break;
    case Op::fence:  // no effect on values (one sequentially consistent memory); an event for races
      if (cta.race)
        for (uint32_t m = exec; m; m &= m - 1)
          L.race->on_fence(*cta.race, w.index * 32 + static_cast<uint32_t>(std::countr_zero(m)), in.sem, in.scope);
      flow = Flow::next;
      break;
    case Op::ld: case Op::st: case Op::cvta_to: case Op::cvta_from: case Op::atom: case Op::red:
      flow = exec ? exec_memory(x) : Flow::next;
      break;
    case Op::bra: case Op::ret: case Op::exit: case Op::call: case Op::trap: case Op::bar_sync: case Op::bar_arrive:
    case Op::bar_red: case Op::bar_warp_sync: case Op::shfl: case Op::vote: case Op::activemask: case Op::match:
    case Op::redux: case Op::elect:
      flow = exec_control(x);
      break;
    default:
      if (!exec) flow = Flow::next;
      else if (in.fast) in.fast(x), flow = Flow::next;
      else flow = float_op(in) ? exec_float(x) : exec_int(x);
  }
  if (flow == Flow::stop) return false;
  if (flow == Flow::next)
    for (uint32_t m = mask; m; m &= m - 1) w.pc[static_cast<size_t>(std::countr_zero(m))] = pc + 1;
  return true;
}

}  // namespace ptxforge::emu
