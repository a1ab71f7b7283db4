// The .approx functions (alu.h): each is the correctly rounded (or double-accurate, then
// rounded once) value of the exact function, which lies inside every error bound the PTX ISA
// states (docs/emu.md section 5 lists them), except rcp.approx.ftz.f64, which models the GPU's
// high-word reciprocal bit for bit. The special values follow the manual's tables for each
// instruction (ex2, lg2, sin, cos, rsqrt, sqrt, rcp, tanh, div): +-0, +-inf, NaN, negative
// arguments; the NaN written is the canonical one (the f64 forms: see each). .ftz flushes
// subnormal inputs and results of the f32 forms; without it subnormals are kept (sm_90
// supports them).
#include <cmath>

#include "emu/alu.h"
#include "emu/float_bits.h"
#include "emu/softfloat.h"

namespace ptxforge::emu::alu {
namespace {

constexpr uint32_t kPosInf = 0x7f800000u, kNegInf = 0xff800000u;

// Rounds a double to f32 (host conversion is round-to-nearest, the mode the host never
// leaves), canonicalising NaN and flushing a subnormal result under .ftz.
uint32_t out32(double d, bool ftz) {
  uint32_t r = bits_of(static_cast<float>(d));
  if (is_nan32(r)) return kNanF32;
  return ftz ? ftz32(r) : r;
}

double in32(uint32_t a, bool ftz) { return f32_of(ftz ? ftz32(a) : a); }

const sf::Format& hfmt(Half t) { return t == Half::f16 ? sf::kF16 : sf::kBF16; }

double in_h(uint16_t a, Half t) { return sf::to_double(sf::decode(a, hfmt(t))); }

// A double rounded to nearest into f16/bf16 through the exact path (no double rounding).
uint16_t out_h(double d, Half t) {
  const sf::Format& f = hfmt(t);
  if (std::isnan(d)) return static_cast<uint16_t>(f.nan);
  if (std::isinf(d)) return static_cast<uint16_t>(sf::pack_inf(d < 0, f));
  if (d == 0) return static_cast<uint16_t>(sf::pack_zero(std::signbit(d), f));
  int e = 0;
  const double m = std::frexp(std::fabs(d), &e);  // m in [0.5, 1)
  const auto sig = static_cast<uint64_t>(std::ldexp(m, 53));
  return static_cast<uint16_t>(sf::round_pack(d < 0, sig, e - 53, false, f, sf::Mode::rn, false));
}

}  // namespace

// ex2.approx: ex2(-inf) = +0, ex2(+inf) = +inf, ex2(+-0) = 1, NaN -> NaN.
uint32_t ex2_approx_f32(uint32_t a, bool ftz) { return out32(std::exp2(in32(a, ftz)), ftz); }

// lg2.approx: lg2(+-0) = -inf (a subnormal under .ftz is a zero), negative -> NaN, +inf -> +inf.
uint32_t lg2_approx_f32(uint32_t a, bool ftz) {
  const double x = in32(a, ftz);
  if (x == 0) return kNegInf;
  if (std::signbit(x) && !std::isnan(x)) return kNanF32;
  return out32(std::log2(x), ftz);
}

// sin/cos.approx: +-inf -> NaN; sin(-0) = -0; cos(+-0) = 1. The argument is first reduced
// as the hardware does it, t = x * (1/2pi) in f32 rounded toward zero, and the result is
// sin(2 pi t): outside [-2pi, 2pi] this follows the GPU's (large) error instead of being more
// accurate than it, so a kernel that leans on sin.approx of a huge argument fails here as it
// does there. Inside [-2pi, 2pi] the model's error, checked exhaustively over every f32, is at
// most 2^-20.6, within the manual's 2^-20.5.
namespace {
double reduced_turns(uint32_t a, bool ftz) {
  constexpr uint32_t kInvTwoPi = 0x3e22f983u;  // 1/(2 pi) in f32
  const uint32_t t = static_cast<uint32_t>(sf::op_mul(ftz ? ftz32(a) : a, kInvTwoPi, sf::kF32, sf::Mode::rz, false));
  return 2.0 * M_PI * static_cast<double>(f32_of(t));
}
}  // namespace

uint32_t sin_approx_f32(uint32_t a, bool ftz) { return out32(std::sin(reduced_turns(a, ftz)), ftz); }
uint32_t cos_approx_f32(uint32_t a, bool ftz) { return out32(std::cos(reduced_turns(a, ftz)), ftz); }

// rsqrt.approx: -0 -> -inf, +0 -> +inf, +inf -> +0, negative -> NaN.
uint32_t rsqrt_approx_f32(uint32_t a, bool ftz) {
  const double x = in32(a, ftz);
  if (x == 0) return std::signbit(x) ? kNegInf : kPosInf;
  if (x < 0) return kNanF32;
  return out32(1.0 / std::sqrt(x), ftz);
}

// sqrt.approx: -0 -> -0, negative -> NaN, +inf -> +inf.
uint32_t sqrt_approx_f32(uint32_t a, bool ftz) {
  const double x = in32(a, ftz);
  if (x == 0) return bits_of(static_cast<float>(x));
  if (x < 0) return kNanF32;
  return out32(std::sqrt(x), ftz);
}

// rcp.approx: +-0 -> +-inf, +-inf -> +-0.
uint32_t rcp_approx_f32(uint32_t a, bool ftz) { return out32(1.0 / in32(a, ftz), ftz); }

// tanh.approx.f32: +-0 -> +-0, +-inf -> +-1 (no .ftz form; subnormals are kept).
uint32_t tanh_approx_f32(uint32_t a) { return out32(std::tanh(in32(a, false)), false); }

// div.approx.f32: a * (1/b) with the reciprocal's range limit: for 2^126 < |b| < 2^128 the
// result is 0 (NaN when a is infinite), PTX ISA div, "approximate division".
uint32_t div_approx_f32(uint32_t a, uint32_t b, bool ftz) {
  const double x = in32(a, ftz), y = in32(b, ftz);
  const double ay = std::fabs(y);
  if (ay > 0x1p126 && !std::isinf(ay) && !std::isnan(x)) {
    if (std::isinf(x)) return kNanF32;
    return bits_of(std::signbit(x) != std::signbit(y) ? -0.0f : 0.0f);
  }
  return out32(x / y, ftz);
}

// div.full.f32: full range, 2 ulp; the correctly rounded quotient is inside that bound.
uint32_t div_full_f32(uint32_t a, uint32_t b, bool ftz) { return out32(in32(a, ftz) / in32(b, ftz), ftz); }

// rsqrt.approx.f64: the same special values as the f32 form, computed from the exact sqrt;
// NaNs as f64 arithmetic writes them (alu.h nan_f64): a NaN operand quieted, kNanF64 for a
// negative one (the recording: 0x7ff0000000000001 -> 0x7ff8000000000001, -1 -> 0xfff8...).
uint64_t rsqrt_approx_f64(uint64_t a) {
  const double x = f64_of(a);
  if (std::isnan(x)) return nan_f64(a);
  if (x == 0) return bits_of(std::signbit(x) ? -HUGE_VAL : HUGE_VAL);
  if (x < 0) return kNanF64;
  return bits_of(1.0 / std::sqrt(x));
}

// rcp.approx.ftz.f64 (PTX ISA rcp.approx.ftz.f64: the operand's most significant 32 bits are
// read in 1.11.20 format and only the result's most significant 32 bits are written, the low
// word 0). The model the golden recording fits on every instance: the high word h read as the
// f64 h:0, a subnormal one flushed to the zero of its sign; 1 / (h:0) rounded toward zero to
// 20 fraction bits (the GPU's result never exceeds the exact reciprocal of h:0 in magnitude
// and stays within one unit of the 20th bit: 0x3ff8000000000000 -> 0x3fe5555500000000,
// 0x3ff7ffffffffffff -> 0x3fe5555600000000); a subnormal result flushed to signed zero.
// Specials follow from the high word alone: exponent all ones with a zero 20-bit fraction is
// an infinity whatever the low word (0x7ff0000000000001 -> +0), a nonzero one a NaN, which
// gives 0x7fffffff00000000 whatever its sign or payload.
uint64_t rcp_approx_ftz_f64(uint64_t a) {
  constexpr uint64_t kHigh = 0xffffffff00000000ull;
  const uint64_t h = a & kHigh;
  if (is_nan64(h)) return 0x7fffffff00000000ull;
  // ftz: a subnormal h:0 divides as zero (-> inf), a subnormal quotient becomes signed zero.
  return sf::op_div(0x3ff0000000000000ull, h, sf::kF64, sf::Mode::rz, true) & kHigh;
}

uint16_t ex2_approx_h(uint16_t a, Half t) { return out_h(std::exp2(in_h(a, t)), t); }
uint16_t tanh_approx_h(uint16_t a, Half t) { return out_h(std::tanh(in_h(a, t)), t); }

}  // namespace ptxforge::emu::alu
