// Floating-point ops and cvt: each a loop over the executing lanes calling the pure functions
// of emu/alu.h on bit patterns (every rounding, flush and NaN rule lives there). The packed
// f16x2/bf16x2 forms apply the half function to each 16-bit half.
#include <bit>

#include <fmt/format.h>

#include "emu/alu.h"
#include "emu/interp.h"

namespace ptxforge::emu {

namespace {

template <typename F>
void each(uint32_t mask, F&& f) {
  for (uint32_t m = mask; m; m &= m - 1) f(static_cast<uint32_t>(std::countr_zero(m)));
}

bool cvt_ty(DT t, alu::Ty& out) {
  switch (t) {
    case DT::u8: case DT::b8: out = alu::Ty::u8; return true;
    case DT::u16: case DT::b16: out = alu::Ty::u16; return true;
    case DT::u32: case DT::b32: out = alu::Ty::u32; return true;
    case DT::u64: case DT::b64: out = alu::Ty::u64; return true;
    case DT::s8: out = alu::Ty::s8; return true;
    case DT::s16: out = alu::Ty::s16; return true;
    case DT::s32: out = alu::Ty::s32; return true;
    case DT::s64: out = alu::Ty::s64; return true;
    case DT::f16: out = alu::Ty::f16; return true;
    case DT::bf16: out = alu::Ty::bf16; return true;
    case DT::tf32: out = alu::Ty::tf32; return true;
    case DT::f32: out = alu::Ty::f32; return true;
    case DT::f64: out = alu::Ty::f64; return true;
    default: return false;
  }
}

// The packed fp8 cvt forms (PTX ISA cvt), element by element through alu::cvt: e4m3x2/e5m2x2
// from two f32 (a to the upper byte, b to the lower) or from one f16x2 (half to byte), and
// f16x2 from e4m3x2/e5m2x2 (byte to half).
bool is_cvt_fp8x2(const Inst& in) {
  return in.type == DT::e4m3x2 || in.type == DT::e5m2x2 || in.type2 == DT::e4m3x2 || in.type2 == DT::e5m2x2;
}
uint64_t cvt_fp8x2(const Inst& in, uint64_t a, uint64_t b) {
  const bool to8 = in.type == DT::e4m3x2 || in.type == DT::e5m2x2;
  const alu::Ty fp8 = (to8 ? in.type : in.type2) == DT::e4m3x2 ? alu::Ty::e4m3 : alu::Ty::e5m2;
  if (to8 && in.type2 == DT::f32)
    return (alu::cvt(a, alu::Ty::f32, fp8, in.cvt) << 8) | alu::cvt(b, alu::Ty::f32, fp8, in.cvt);
  if (to8)  // from f16x2
    return (alu::cvt((a >> 16) & 0xffffu, alu::Ty::f16, fp8, in.cvt) << 8) | alu::cvt(a & 0xffffu, alu::Ty::f16, fp8, in.cvt);
  // to f16x2
  return (alu::cvt((a >> 8) & 0xffu, fp8, alu::Ty::f16, in.cvt) << 16) | alu::cvt(a & 0xffu, fp8, alu::Ty::f16, in.cvt);
}

uint16_t relu_h(uint16_t v, alu::Half t) {
  bool nan = t == alu::Half::f16 ? (v & 0x7c00) == 0x7c00 && (v & 0x3ff) : (v & 0x7f80) == 0x7f80 && (v & 0x7f);
  if (nan) return t == alu::Half::f16 ? alu::kNanF16 : alu::kNanBF16;
  return (v & 0x8000) ? 0 : v;
}

}  // namespace

Flow exec_float(Exec& x) {
  const Inst& in = x.in;
  DT ty = in.type;
  int bits = dt_bits(ty);
  uint32_t t = 0;
  for (int i = 1; i < in.n; ++i) t |= taint_of(x, in.o[i]);
  if (in.guard >= 0) t |= x.f().pred_taint[static_cast<size_t>(in.guard)];
  set_taint(x, in.o[0], t);
  auto rd = [&](int i, uint32_t l) { return read_operand(x, in.o[i], l, bits); };
  auto wr = [&](uint32_t l, uint64_t v) { write_reg(x, in.o[0], l, v, bits); };
  const alu::FMode fm = in.fm;
  bool half = ty == DT::f16 || ty == DT::bf16 || ty == DT::f16x2 || ty == DT::bf16x2;
  alu::Half ht = (ty == DT::bf16 || ty == DT::bf16x2) ? alu::Half::bf16 : alu::Half::f16;
  int halves = (ty == DT::f16x2 || ty == DT::bf16x2) ? 2 : 1;
  auto unsupported = [&] {
    return fail(x, FindingKind::unsupported, "not supported by the CPU engine: " + x.fn.opcodes[x.pc],
                static_cast<uint32_t>(std::countr_zero(x.mask)));
  };
  // Half forms: apply f to each 16-bit lane of the value.
  auto per_half = [&](auto f) {
    each(x.mask, [&](uint32_t l) {
      uint64_t a = rd(1, l), b = in.n > 2 ? rd(2, l) : 0, c = in.n > 3 ? rd(3, l) : 0, r = 0;
      for (int h = 0; h < halves; ++h) {
        auto part = [&](uint64_t v) { return static_cast<uint16_t>(v >> (16 * h)); };
        r |= uint64_t{f(part(a), part(b), part(c))} << (16 * h);
      }
      wr(l, r);
    });
  };
  switch (in.op) {
    case Op::add: case Op::sub: case Op::mul_lo: case Op::fma: {
      if (half) {
        per_half([&](uint16_t a, uint16_t b, uint16_t c) -> uint16_t {
          switch (in.op) {
            case Op::add: return alu::add_h(a, b, ht, fm);
            case Op::sub: return alu::sub_h(a, b, ht, fm);
            case Op::mul_lo: return alu::mul_h(a, b, ht, fm);
            default: return alu::fma_h(a, b, c, ht, fm, in.flag);
          }
        });
      } else if (ty == DT::f32) {
        each(x.mask, [&](uint32_t l) {
          uint32_t a = static_cast<uint32_t>(rd(1, l)), b = static_cast<uint32_t>(rd(2, l));
          switch (in.op) {
            case Op::add: return wr(l, alu::add_f32(a, b, fm));
            case Op::sub: return wr(l, alu::sub_f32(a, b, fm));
            case Op::mul_lo: return wr(l, alu::mul_f32(a, b, fm));
            default: return wr(l, alu::fma_f32(a, b, static_cast<uint32_t>(rd(3, l)), fm));
          }
        });
      } else if (ty == DT::f64) {
        each(x.mask, [&](uint32_t l) {
          uint64_t a = rd(1, l), b = rd(2, l);
          switch (in.op) {
            case Op::add: return wr(l, alu::add_f64(a, b, fm.rnd));
            case Op::sub: return wr(l, alu::sub_f64(a, b, fm.rnd));
            case Op::mul_lo: return wr(l, alu::mul_f64(a, b, fm.rnd));
            default: return wr(l, alu::fma_f64(a, b, rd(3, l), fm.rnd));
          }
        });
      } else {
        return unsupported();
      }
      break;
    }
    case Op::div:
      if (ty == DT::f32)
        each(x.mask, [&](uint32_t l) {
          uint32_t a = static_cast<uint32_t>(rd(1, l)), b = static_cast<uint32_t>(rd(2, l));
          wr(l, in.sub == 1 ? alu::div_approx_f32(a, b, fm.ftz) : in.sub == 2 ? alu::div_full_f32(a, b, fm.ftz)
                                                                          : alu::div_f32(a, b, fm));
        });
      else if (ty == DT::f64 && in.sub == 0) each(x.mask, [&](uint32_t l) { wr(l, alu::div_f64(rd(1, l), rd(2, l), fm.rnd)); });
      else return unsupported();
      break;
    case Op::rcp: case Op::sqrt: case Op::rsqrt: case Op::ex2: case Op::lg2: case Op::sin: case Op::cos: case Op::tanh:
      if (ty == DT::f32) {
        each(x.mask, [&](uint32_t l) {
          uint32_t a = static_cast<uint32_t>(rd(1, l));
          bool z = fm.ftz;
          switch (in.op) {
            case Op::rcp: return wr(l, in.sub ? alu::rcp_approx_f32(a, z) : alu::rcp_f32(a, fm));
            case Op::sqrt: return wr(l, in.sub ? alu::sqrt_approx_f32(a, z) : alu::sqrt_f32(a, fm));
            case Op::rsqrt: return wr(l, alu::rsqrt_approx_f32(a, z));
            case Op::ex2: return wr(l, alu::ex2_approx_f32(a, z));
            case Op::lg2: return wr(l, alu::lg2_approx_f32(a, z));
            case Op::sin: return wr(l, alu::sin_approx_f32(a, z));
            case Op::cos: return wr(l, alu::cos_approx_f32(a, z));
            default: return wr(l, alu::tanh_approx_f32(a));
          }
        });
      } else if (ty == DT::f64 && (in.op == Op::rcp || in.op == Op::sqrt || in.op == Op::rsqrt)) {
        each(x.mask, [&](uint32_t l) {
          uint64_t a = rd(1, l);
          if (in.op == Op::rsqrt) return wr(l, alu::rsqrt_approx_f64(a));
          if (in.op == Op::sqrt) return in.sub ? unsupported(), void() : wr(l, alu::sqrt_f64(a, fm.rnd));
          wr(l, in.sub ? alu::rcp_approx_ftz_f64(a) : alu::rcp_f64(a, fm.rnd));
        });
        if (x.L.finding) return Flow::stop;
      } else if (half && (in.op == Op::ex2 || in.op == Op::tanh)) {
        per_half([&](uint16_t a, uint16_t, uint16_t) {
          return in.op == Op::ex2 ? alu::ex2_approx_h(a, ht) : alu::tanh_approx_h(a, ht);
        });
      } else {
        return unsupported();
      }
      break;
    case Op::abs: case Op::neg:
      if (ty == DT::f32)
        each(x.mask, [&](uint32_t l) {
          uint32_t a = static_cast<uint32_t>(rd(1, l));
          wr(l, in.op == Op::abs ? alu::abs_f32(a, fm.ftz) : alu::neg_f32(a, fm.ftz));
        });
      else if (ty == DT::f64)
        each(x.mask, [&](uint32_t l) {
          uint64_t s = uint64_t{1} << 63, a = rd(1, l);
          wr(l, in.op == Op::abs ? a & ~s : a ^ s);
        });
      else if (half)
        per_half([&](uint16_t a, uint16_t, uint16_t) -> uint16_t {
          return in.op == Op::abs ? static_cast<uint16_t>(a & 0x7fff) : static_cast<uint16_t>(a ^ 0x8000);
        });
      else return unsupported();
      break;
    case Op::min: case Op::max: {
      bool mn = in.op == Op::min;
      if (ty == DT::f32)
        each(x.mask, [&](uint32_t l) {
          uint32_t a = static_cast<uint32_t>(rd(1, l)), b = static_cast<uint32_t>(rd(2, l));
          wr(l, mn ? alu::min_f32(a, b, fm.ftz, in.flag) : alu::max_f32(a, b, fm.ftz, in.flag));
        });
      else if (ty == DT::f64)
        each(x.mask, [&](uint32_t l) { wr(l, mn ? alu::min_f64(rd(1, l), rd(2, l), in.flag) : alu::max_f64(rd(1, l), rd(2, l), in.flag)); });
      else if (half)
        per_half([&](uint16_t a, uint16_t b, uint16_t) {
          uint16_t r = mn ? alu::min_h(a, b, ht, in.flag) : alu::max_h(a, b, ht, in.flag);
          return fm.sat ? relu_h(r, ht) : r;
        });
      else return unsupported();
      if (fm.sat && !half) return unsupported();
      break;
    }
    case Op::copysign:
      each(x.mask, [&](uint32_t l) {
        uint64_t s = uint64_t{1} << (bits - 1);
        wr(l, (rd(2, l) & ~s) | (rd(1, l) & s));
      });
      break;
    case Op::setp: case Op::set:
      each(x.mask, [&](uint32_t l) {
        int cb = dt_bits(in.type2);
        uint64_t a = read_operand(x, in.o[1], l, cb), b = read_operand(x, in.o[2], l, cb);
        bool r = in.type2 == DT::f32   ? alu::cmp_f32(static_cast<uint32_t>(a), static_cast<uint32_t>(b), in.cmp, in.fm.ftz)
                 : in.type2 == DT::f64 ? alu::cmp_f64(a, b, in.cmp)
                                       : alu::cmp_h(static_cast<uint16_t>(a), static_cast<uint16_t>(b),
                                                    in.type2 == DT::bf16 ? alu::Half::bf16 : alu::Half::f16, in.cmp, in.fm.ftz);
        write_compare(x, in, l, r);
      });
      if (in.type2 == DT::f16x2 || in.type2 == DT::bf16x2) return unsupported();
      if (in.o[4].kind != OpndKind::none) set_taint(x, in.o[4], t);
      break;
    case Op::cvt: {
      if (is_cvt_fp8x2(in)) {
        const int sb = dt_bits(in.type2);
        each(x.mask, [&](uint32_t l) {
          wr(l, cvt_fp8x2(in, read_operand(x, in.o[1], l, sb), in.n > 2 ? read_operand(x, in.o[2], l, sb) : 0));
        });
        break;
      }
      alu::Ty to, from;
      if (!cvt_ty(ty, to) || !cvt_ty(in.type2, from)) return unsupported();
      int sb = dt_bits(in.type2);
      each(x.mask, [&](uint32_t l) {
        uint64_t v = alu::cvt(read_operand(x, in.o[1], l, sb), from, to, in.cvt);
        // A signed integer result fills a wider register with its sign.
        if (dt_signed(ty) && bits < 64) {
          uint64_t s = uint64_t{1} << (bits - 1);
          v = ((v & ((s << 1) - 1)) ^ s) - s;
          write_reg(x, in.o[0], l, v, 64);
        } else {
          wr(l, v);
        }
      });
      break;
    }
    default: return unsupported();
  }
  return Flow::next;
}

}  // namespace ptxforge::emu
