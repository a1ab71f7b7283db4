// cvt (alu.h) for every pair of types cvt names, by bit manipulation through the exact path
// (softfloat.h), never through host casts. The rules (PTX ISA 9.7.9.21 cvt):
// - integer -> integer: sign or zero extension from the source, truncation to the destination,
//   or with .sat a clamp to the destination's range;
// - float -> integer: .rni/.rzi/.rmi/.rpi rounding, always saturating; NaN as float_to_int says;
// - integer -> float and float -> narrower float: one rounding in .rn/.rz/.rm/.rp (.rna for
//   tf32), .satfinite turning overflow and infinity into the largest finite value;
// - .relu: a negative result becomes +0, NaN stays NaN; .sat: clamp to [0, 1], NaN -> +0;
//   .ftz: subnormal f32 sources and results become signed zeros.
// Which NaN comes out of a float -> float conversion, and tf32's NaN and .rna rules, are the
// GPU's (learned from the golden vectors, tests/emu/golden): see nan_to_float and tf32_rna.
// A signed integer destination comes back sign-extended to 64 bits (the register that holds a
// .s8 or .s16 result is wider than it); the interpreter truncates to the register's width.
#include <algorithm>
#include <optional>

#include "emu/alu.h"
#include "emu/float_bits.h"
#include "emu/softfloat.h"

namespace ptxforge::emu::alu {
namespace {

using i128 = __int128;
using sf::u128;

constexpr uint64_t kNanTf32 = 0x7fffe000u;  // the canonical f32 NaN with tf32's low 13 bits clear

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

// NaN -> integer, as the GPU does it (golden vectors, sm_90): a conversion from an f64 source or
// to a 64-bit destination gives the integer with only the destination's top bit set, signed or
// unsigned alike (recorded: s64 <- f32 0x8000000000000000, s32 <- f64 0x80000000, u64 <- f64
// 0x8000000000000000); one from a narrower float (f16, bf16, f32) to 32 bits or fewer gives 0
// (recorded: s32/u32/s16/u8 <- f32, s32 <- f16). The pairs not recorded (u32 <- f64, u64 <- f32,
// 8- and 16-bit <- f64) follow the same split. Infinities and out-of-range values saturate.
uint64_t float_to_int(const sf::Val& v, Ty from, Ty to, const CvtMode& m) {
  if (v.cls == sf::Cls::nan) {
    if (from != Ty::f64 && int_bits(to) < 64) return 0;
    return int_result(i128{1} << (int_bits(to) - 1), to);
  }
  if (v.cls == sf::Cls::zero) return 0;
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
    // tf32 in its 32-bit container: the f32 layout with the low 13 bits zero. A NaN source gives
    // the canonical f32 NaN with those bits cleared, 0x7fffe000, whatever its sign and payload
    // (golden vectors: .rn and .rz; .rna is tf32_rna).
    return (!m.sat && is_nan) ? kNanTf32 : (r << 13);
  }
  return r;
}

// cvt.rna{.satfinite}.tf32.f32 on the GPU is rounding on the bit pattern (golden vectors, sm_90):
// a finite value is rounded to nearest, ties away, by adding half a tf32 unit (0x1000) to the
// pattern and clearing the low 13 bits (a carry runs into the exponent, FLT_MAX becoming inf).
// An infinity or NaN source is truncated instead: its low 13 bits cleared, sign and the rest of
// the payload kept (0x7f800001 -> 0x7f800000, 0xffc00001 -> 0xffc00000). With .satfinite, a
// finite value that rounds to infinity gives the largest finite value of its sign, and an
// infinity or NaN source gives its truncated pattern lowered by one tf32 unit (0x2000): the
// largest finite value for +-inf, and for a NaN the pattern below it (0x7fc00000 -> 0x7fbfe000,
// 0xffbfffff -> 0xffbfc000, 0x7f800001 -> 0x7f7fe000).
uint64_t tf32_rna(uint32_t b, bool satfinite) {
  const bool special = (b & 0x7f800000u) == 0x7f800000u;
  if (special) return satfinite ? (b & 0xffffe000u) - 0x2000u : (b & 0xffffe000u);
  uint32_t r = (b + 0x1000u) & 0xffffe000u;
  if (satfinite && (r & 0x7f800000u) == 0x7f800000u) r = (r & 0x80000000u) | 0x7f7fe000u;
  return r;
}

// The NaN of a float -> float conversion from a NaN source, as the GPU writes it (golden vectors,
// sm_90), or nullopt where the general rules apply (.sat, .relu, .satfinite, the canonical NaN):
// - bf16 -> f32 widens the pattern (the bf16 is the f32's top half): sign and payload kept, a
//   signaling NaN stays signaling (0x7f81 -> 0x7f810000);
// - a conversion with an f64 source (f64 -> f32, the f64 -> f64 roundings .rni/.rzi/.rmi/.rpi)
//   or from f32 to f64 returns the NaN quieted with its sign and payload, the payload's top bits
//   where the destination is narrower (0x7ff0000000000001 -> 0x7fc00000, 0xffffffffffffffff ->
//   0xffffffff, 0xfff7ffffffffffff -> 0xffffffffffffffff) or shifted up where it is wider
//   (0x7f800001 -> 0x7ff8000020000000);
// - every other pair (f16 -> f32, f32 -> f32, f32 -> f16/bf16, ...) gives the destination's
//   canonical NaN, the general path's.
std::optional<uint64_t> nan_to_float(uint64_t bits, Ty from, Ty to, const CvtMode& m) {
  if (m.sat || m.relu || m.satfinite) return std::nullopt;
  if (from == Ty::bf16 && to == Ty::f32) return (bits & 0xffffu) << 16;
  const bool f64_path = from == Ty::f64 || (from == Ty::f32 && to == Ty::f64);
  if (!f64_path || (to != Ty::f16 && to != Ty::bf16 && to != Ty::f32 && to != Ty::f64)) return std::nullopt;
  const sf::Format& fs = *format_of(from);
  const sf::Format& fd = *format_of(to);
  const uint64_t payload = bits & ((uint64_t{1} << fs.mbits) - 1);
  const uint64_t moved = fs.mbits >= fd.mbits ? payload >> (fs.mbits - fd.mbits) : payload << (fd.mbits - fs.mbits);
  const uint64_t exp_ones = ((uint64_t{1} << fd.ebits) - 1) << fd.mbits;
  const uint64_t quiet = uint64_t{1} << (fd.mbits - 1);
  const bool sign = ((bits >> (fs.width() - 1)) & 1) != 0;
  return (sign ? fd.sign_bit() : 0) | exp_ones | quiet | moved;
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
  if (is_int(to)) return float_to_int(v, from, to, m);
  if (to == Ty::tf32 && from == Ty::f32 && m.rna && !m.sat && !m.relu) {
    const uint32_t b = static_cast<uint32_t>(bits);
    return tf32_rna(m.ftz ? ftz32(b) : b, m.satfinite);
  }
  if (v.cls == sf::Cls::nan) {
    if (const std::optional<uint64_t> r = nan_to_float(bits, from, to, m)) return *r;
  }
  return to_float(v, to, m);
}

}  // namespace ptxforge::emu::alu
