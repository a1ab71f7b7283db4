// cvt (alu.h) for every pair of types cvt names, by bit manipulation through the exact path
// (softfloat.h), never through host casts. The rules (PTX ISA 9.7.9.21 cvt):
// - integer -> integer: sign or zero extension from the source, truncation to the destination,
//   or with .sat a clamp to the destination's range;
// - float -> integer: .rni/.rzi/.rmi/.rpi rounding, always saturating, NaN -> 0;
// - integer -> float and float -> narrower float: one rounding in .rn/.rz/.rm/.rp (.rna for
//   tf32), .satfinite turning overflow and infinity into the largest finite value;
// - .relu: a negative result becomes +0, NaN stays NaN; .sat: clamp to [0, 1], NaN -> +0;
//   .ftz: subnormal f32 sources and results become signed zeros.
// A signed integer destination comes back sign-extended to 64 bits (the register that holds a
// .s8 or .s16 result is wider than it); the interpreter truncates to the register's width.
#include <algorithm>

#include "emu/alu.h"
#include "emu/float_bits.h"
#include "emu/softfloat.h"

namespace ptxforge::emu::alu {
namespace {

using i128 = __int128;
using sf::u128;

bool is_int(Ty t) { return t <= Ty::s64; }
bool int_signed(Ty t) { return t >= Ty::s8 && t <= Ty::s64; }
int int_bits(Ty t) {
  switch (t) {
    case Ty::u8: case Ty::s8: return 8;
    case Ty::u16: case Ty::s16: return 16;
    case Ty::u32: case Ty::s32: return 32;
    default: return 64;
  }
}

const sf::Format* format_of(Ty t) {
  switch (t) {
    case Ty::f16: return &sf::kF16;
    case Ty::bf16: return &sf::kBF16;
    case Ty::tf32: return &sf::kTF32;
    case Ty::f32: return &sf::kF32;
    case Ty::f64: return &sf::kF64;
    case Ty::e4m3: return &sf::kE4M3;
    case Ty::e5m2: return &sf::kE5M2;
    case Ty::e2m1: return &sf::kE2M1;
    case Ty::e2m3: return &sf::kE2M3;
    case Ty::e3m2: return &sf::kE3M2;
    default: return nullptr;  // integers, ue8m0
  }
}

i128 int_value(uint64_t bits, Ty t) {
  const int n = int_bits(t);
  if (n < 64) bits &= (uint64_t{1} << n) - 1;
  if (int_signed(t) && n < 64 && ((bits >> (n - 1)) & 1) != 0) return static_cast<i128>(bits) - (i128{1} << n);
  if (int_signed(t) && n == 64) return static_cast<int64_t>(bits);
  return bits;
}

i128 int_min(Ty t) { return int_signed(t) ? -(i128{1} << (int_bits(t) - 1)) : 0; }
i128 int_max(Ty t) {
  return int_signed(t) ? (i128{1} << (int_bits(t) - 1)) - 1 : (i128{1} << int_bits(t)) - 1;
}

uint64_t int_result(i128 v, Ty to) {
  const int n = int_bits(to);
  uint64_t bits = static_cast<uint64_t>(v);
  if (n < 64) {
    bits &= (uint64_t{1} << n) - 1;
    if (int_signed(to) && ((bits >> (n - 1)) & 1) != 0) bits |= ~((uint64_t{1} << n) - 1);
  }
  return bits;
}

sf::Mode int_mode(IntRound r) {
  switch (r) {
    case IntRound::rni: return sf::Mode::rn;
    case IntRound::rmi: return sf::Mode::rm;
    case IntRound::rpi: return sf::Mode::rp;
    default: return sf::Mode::rz;  // .rzi (and the none that the validator rejects)
  }
}

// The source as a decoded value. ue8m0 is 2^(e-127), with 0xff its NaN.
sf::Val decode_src(uint64_t bits, Ty from, const CvtMode& m) {
  if (from == Ty::ue8m0) {
    sf::Val v;
    const unsigned e = bits & 0xffu;
    if (e == 0xffu) {
      v.cls = sf::Cls::nan;
      return v;
    }
    v.cls = sf::Cls::finite;
    v.sig = 1;
    v.exp = static_cast<int>(e) - 127;
    return v;
  }
  // A tf32 source sits in a 32-bit container laid out like f32.
  const sf::Format& f = from == Ty::tf32 ? sf::kF32 : *format_of(from);
  sf::Val v = sf::decode(bits, f);
  if (m.ftz && (from == Ty::f32 || from == Ty::tf32)) v = sf::flush(v, sf::kF32);
  return v;
}

uint64_t float_to_int(const sf::Val& v, Ty to, const CvtMode& m) {
  if (v.cls == sf::Cls::nan || v.cls == sf::Cls::zero) return 0;
  if (v.cls == sf::Cls::inf) return int_result(v.sign ? int_min(to) : int_max(to), to);
  bool huge = false;
  const u128 mag = sf::round_to_integer(v, int_mode(m.irnd), &huge);
  i128 x = huge ? (i128{1} << 100) : static_cast<i128>(mag);
  if (v.sign) x = -x;
  return int_result(std::clamp(x, int_min(to), int_max(to)), to);
}

// ue8m0 destination (cvt.rz/.rp{.satfinite}.ue8m0x2): the power of two at or below (.rz) or at
// or above (.rp) the magnitude, 2^-127 (0x00) the smallest; 0xff is NaN, 0xfe the largest.
// The sign is ignored: the format is unsigned (scale factors).
uint64_t to_ue8m0(const sf::Val& v, const CvtMode& m) {
  if (v.cls == sf::Cls::nan) return 0xffu;
  if (v.cls == sf::Cls::inf) return m.satfinite ? 0xfeu : 0xffu;
  if (v.cls == sf::Cls::zero) return 0x00u;
  const int top = sf::msb_index(v.sig);
  const bool exact = (v.sig & (v.sig - 1)) == 0;
  int k = v.exp + top;
  if (m.rnd == Round::rp && !exact) ++k;
  const int e = k + 127;
  if (e < 0) return 0x00u;
  if (e > 254) return m.satfinite ? 0xfeu : 0xffu;
  return static_cast<uint64_t>(e);
}

uint64_t sat_float(uint64_t r, const sf::Format& f) {
  const sf::Val v = sf::decode(r, f);
  if (v.cls == sf::Cls::nan || v.sign) return 0;
  if (sf::to_double(v) > 1.0) return sf::round_pack(false, 1, 0, false, f, sf::Mode::rn, false);
  return r;
}

uint64_t to_float(sf::Val v, Ty to, const CvtMode& m) {
  if (to == Ty::ue8m0) return to_ue8m0(v, m);
  const sf::Format& f = *format_of(to);
  uint64_t r;
  if (v.cls == sf::Cls::nan) {
    // Formats without a NaN (e2m1, e2m3, e3m2) give their largest finite value.
    r = f.has_nan ? f.nan : f.max_finite;
  } else if (v.cls == sf::Cls::inf) {
    r = (m.satfinite || !f.has_inf) ? ((v.sign ? f.sign_bit() : 0) | f.max_finite) : sf::pack_inf(v.sign, f);
  } else if (v.cls == sf::Cls::zero) {
    r = sf::pack_zero(v.sign, f);
  } else {
    if (m.irnd != IntRound::none) {  // round to an integral value, then to the format
      bool huge = false;
      const u128 mag = sf::round_to_integer(v, int_mode(m.irnd), &huge);
      if (!huge) {
        if (mag == 0) {
          v.cls = sf::Cls::zero;
        } else {
          v.sig = mag;
          v.exp = 0;
        }
      }
    }
    if (v.cls == sf::Cls::zero) {
      r = sf::pack_zero(v.sign, f);
    } else {
      const sf::Mode mode = m.rna ? sf::Mode::rna : mode_of(m.rnd);
      r = sf::round_pack(v.sign, v.sig, v.exp, false, f, mode, m.satfinite);
    }
  }
  const bool is_nan = v.cls == sf::Cls::nan;
  if (m.relu && !is_nan && (r & f.sign_bit()) != 0) r = 0;
  if (m.ftz && to == Ty::f32 && sf::is_subnormal(r, f)) r &= f.sign_bit();
  if (m.sat) r = sat_float(r, f);
  if (to == Ty::tf32) {
    // tf32 in its 32-bit container: the f32 layout with the low 13 bits zero; its NaN is the
    // canonical f32 NaN (an assumption the golden vectors check).
    return (!m.sat && is_nan) ? kNanF32 : (r << 13);
  }
  return r;
}

}  // namespace

uint64_t cvt(uint64_t bits, Ty from, Ty to, CvtMode m) {
  if (is_int(from)) {
    const i128 v = int_value(bits, from);
    if (is_int(to)) return int_result(m.sat ? std::clamp(v, int_min(to), int_max(to)) : v, to);
    sf::Val x;
    if (v != 0) {
      x.cls = sf::Cls::finite;
      x.sign = v < 0;
      x.sig = static_cast<u128>(v < 0 ? -v : v);
      x.exp = 0;
    }
    return to_float(x, to, m);
  }
  const sf::Val v = decode_src(bits, from, m);
  if (is_int(to)) return float_to_int(v, to, m);
  return to_float(v, to, m);
}

}  // namespace ptxforge::emu::alu
