// f32 and f64 arithmetic, min/max and comparisons (alu.h). Round-to-nearest add/sub/mul/fma/
// div/sqrt/rcp use the host's IEEE arithmetic (correctly rounded, the host never leaves RN);
// the directed modes go through the exact path (softfloat.h), which rounds once. NaN results
// are the GPU's: the canonical NaN for f32 (alu.h kNanF32), the propagated operand or kNanF64
// for f64 (alu.h nan_f64); .ftz flushes operands and results.
#include <cmath>

#include "emu/alu.h"
#include "emu/float_bits.h"
#include "emu/softfloat.h"

namespace ptxforge::emu::alu {
namespace {

uint32_t canon32(float r) {
  const uint32_t b = bits_of(r);
  return is_nan32(b) ? kNanF32 : b;
}

// f64: host arithmetic (round to nearest) or the exact path (directed modes) gives the value;
// a NaN result r is replaced by the GPU's (alu.h nan_f64): the first NaN operand quieted, or
// kNanF64 for an invalid operation. The host's own NaN choice is not used: which operand it
// keeps depends on the order the compiler gives commutative operands.
uint64_t or_nan(uint64_t r, uint64_t a, uint64_t b = 0, uint64_t c = 0) { return is_nan64(r) ? nan_f64(a, b, c) : r; }

// The modifiers applied to every f32 result: flush, then saturate.
uint32_t post32(uint32_t r, FMode m) {
  if (m.ftz) r = ftz32(r);
  if (m.sat) r = sat32(r);
  return r;
}

}  // namespace

uint32_t add_f32(uint32_t a, uint32_t b, FMode m) {
  if (m.ftz) a = ftz32(a), b = ftz32(b);
  if (m.rnd == Round::rn) return post32(canon32(f32_of(a) + f32_of(b)), m);
  return post32(static_cast<uint32_t>(sf::op_add(a, b, sf::kF32, mode_of(m.rnd), m.ftz)), m);
}

uint32_t sub_f32(uint32_t a, uint32_t b, FMode m) {
  if (is_nan32(b)) return post32(kNanF32, m);
  return add_f32(a, b ^ 0x80000000u, m);
}

uint32_t mul_f32(uint32_t a, uint32_t b, FMode m) {
  if (m.ftz) a = ftz32(a), b = ftz32(b);
  if (m.rnd == Round::rn) return post32(canon32(f32_of(a) * f32_of(b)), m);
  return post32(static_cast<uint32_t>(sf::op_mul(a, b, sf::kF32, mode_of(m.rnd), m.ftz)), m);
}

uint32_t fma_f32(uint32_t a, uint32_t b, uint32_t c, FMode m) {
  if (m.ftz) a = ftz32(a), b = ftz32(b), c = ftz32(c);
  if (m.rnd == Round::rn) return post32(canon32(std::fmaf(f32_of(a), f32_of(b), f32_of(c))), m);
  return post32(static_cast<uint32_t>(sf::op_fma(a, b, c, sf::kF32, mode_of(m.rnd), m.ftz)), m);
}

uint32_t div_f32(uint32_t a, uint32_t b, FMode m) {
  if (m.ftz) a = ftz32(a), b = ftz32(b);
  if (m.rnd == Round::rn) return post32(canon32(f32_of(a) / f32_of(b)), m);
  return post32(static_cast<uint32_t>(sf::op_div(a, b, sf::kF32, mode_of(m.rnd), m.ftz)), m);
}

uint32_t sqrt_f32(uint32_t a, FMode m) {
  if (m.ftz) a = ftz32(a);
  if (m.rnd == Round::rn) return post32(canon32(std::sqrt(f32_of(a))), m);
  return post32(static_cast<uint32_t>(sf::op_sqrt(a, sf::kF32, mode_of(m.rnd), m.ftz)), m);
}

uint32_t rcp_f32(uint32_t a, FMode m) { return div_f32(0x3f800000u, a, m); }

uint32_t min_f32(uint32_t a, uint32_t b, bool ftz, bool nan_mode) {
  if (ftz) a = ftz32(a), b = ftz32(b);
  return pick<uint32_t>(a, b, f32_of(a), f32_of(b), is_nan32(a), is_nan32(b), nan_mode, kNanF32, true);
}

uint32_t max_f32(uint32_t a, uint32_t b, bool ftz, bool nan_mode) {
  if (ftz) a = ftz32(a), b = ftz32(b);
  return pick<uint32_t>(a, b, f32_of(a), f32_of(b), is_nan32(a), is_nan32(b), nan_mode, kNanF32, false);
}

// abs and neg change the sign bit; a NaN operand gives the canonical NaN like every other
// f32 operation (an assumption the golden vectors check).
uint32_t abs_f32(uint32_t a, bool ftz) {
  if (is_nan32(a)) return kNanF32;
  if (ftz) a = ftz32(a);
  return a & 0x7fffffffu;
}

uint32_t neg_f32(uint32_t a, bool ftz) {
  if (is_nan32(a)) return kNanF32;
  if (ftz) a = ftz32(a);
  return a ^ 0x80000000u;
}

uint64_t add_f64(uint64_t a, uint64_t b, Round r) {
  if (r == Round::rn) return or_nan(bits_of(f64_of(a) + f64_of(b)), a, b);
  return or_nan(sf::op_add(a, b, sf::kF64, mode_of(r), false), a, b);
}

// A NaN b comes back with its own sign (the recording: sub.f64(x, 0xfff8...) = 0xfff8...).
uint64_t sub_f64(uint64_t a, uint64_t b, Round r) {
  if (is_nan64(a) || is_nan64(b)) return nan_f64(a, b);
  return add_f64(a, b ^ 0x8000000000000000ull, r);
}

uint64_t mul_f64(uint64_t a, uint64_t b, Round r) {
  if (r == Round::rn) return or_nan(bits_of(f64_of(a) * f64_of(b)), a, b);
  return or_nan(sf::op_mul(a, b, sf::kF64, mode_of(r), false), a, b);
}

uint64_t fma_f64(uint64_t a, uint64_t b, uint64_t c, Round r) {
  if (r == Round::rn) return or_nan(bits_of(std::fma(f64_of(a), f64_of(b), f64_of(c))), a, b, c);
  return or_nan(sf::op_fma(a, b, c, sf::kF64, mode_of(r), false), a, b, c);
}

uint64_t div_f64(uint64_t a, uint64_t b, Round r) {
  if (r == Round::rn) return or_nan(bits_of(f64_of(a) / f64_of(b)), a, b);
  return or_nan(sf::op_div(a, b, sf::kF64, mode_of(r), false), a, b);
}

uint64_t sqrt_f64(uint64_t a, Round r) {
  if (r == Round::rn) return or_nan(bits_of(std::sqrt(f64_of(a))), a);
  return or_nan(sf::op_sqrt(a, sf::kF64, mode_of(r), false), a);
}

// 1 / a: a NaN a is the first NaN operand (the constant 1 never is).
uint64_t rcp_f64(uint64_t a, Round r) { return div_f64(0x3ff0000000000000ull, a, r); }

uint64_t min_f64(uint64_t a, uint64_t b, bool nan_mode) {
  return pick<uint64_t>(a, b, f64_of(a), f64_of(b), is_nan64(a), is_nan64(b), nan_mode, kNanF64MinMax, true);
}

uint64_t max_f64(uint64_t a, uint64_t b, bool nan_mode) {
  return pick<uint64_t>(a, b, f64_of(a), f64_of(b), is_nan64(a), is_nan64(b), nan_mode, kNanF64MinMax, false);
}

// Comparisons (PTX ISA setp, "Floating Point Comparison Operators"): the ordered forms are
// false when either operand is NaN, the unordered forms (equ ... geu) true; num: neither is
// NaN, nan: either is. lo/ls/hi/hs are integer forms; on floats they read as lt/le/gt/ge.
bool cmp_double(double x, double y, Cmp c) {
  const bool un = std::isnan(x) || std::isnan(y);
  switch (c) {
    case Cmp::eq: return !un && x == y;
    case Cmp::ne: return !un && x != y;
    case Cmp::lt: case Cmp::lo: return !un && x < y;
    case Cmp::le: case Cmp::ls: return !un && x <= y;
    case Cmp::gt: case Cmp::hi: return !un && x > y;
    case Cmp::ge: case Cmp::hs: return !un && x >= y;
    case Cmp::equ: return un || x == y;
    case Cmp::neu: return un || x != y;
    case Cmp::ltu: return un || x < y;
    case Cmp::leu: return un || x <= y;
    case Cmp::gtu: return un || x > y;
    case Cmp::geu: return un || x >= y;
    case Cmp::num: return !un;
    case Cmp::nan: return un;
  }
  return false;
}

bool cmp_f32(uint32_t a, uint32_t b, Cmp c, bool ftz) {
  if (ftz) a = ftz32(a), b = ftz32(b);
  return cmp_double(f32_of(a), f32_of(b), c);
}

bool cmp_f64(uint64_t a, uint64_t b, Cmp c) { return cmp_double(f64_of(a), f64_of(b), c); }

}  // namespace ptxforge::emu::alu
