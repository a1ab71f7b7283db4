// Small helpers the ALU files share: host floats from and to raw bits, the f32 flush and NaN
// tests on bit patterns (the f64 one, is_nan64, is in alu.h), and the exact path's rounding mode for an alu.h mode. Private to the
// ALU (alu_*.cpp, convert.cpp, approx.cpp); the interpreter sees only alu.h.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "emu/alu.h"
#include "emu/softfloat.h"

namespace ptxforge::emu::alu {

inline float f32_of(uint32_t b) { return std::bit_cast<float>(b); }
inline uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
inline double f64_of(uint64_t b) { return std::bit_cast<double>(b); }
inline uint64_t bits_of(double d) { return std::bit_cast<uint64_t>(d); }

inline bool is_nan32(uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; }
inline bool is_sub32(uint32_t b) { return (b & 0x7f800000u) == 0 && (b & 0x007fffffu) != 0; }
// .ftz: a subnormal f32 becomes the zero of its sign.
inline uint32_t ftz32(uint32_t b) { return is_sub32(b) ? (b & 0x80000000u) : b; }

inline sf::Mode mode_of(Round r) {
  switch (r) {
    case Round::rn: return sf::Mode::rn;
    case Round::rz: return sf::Mode::rz;
    case Round::rm: return sf::Mode::rm;
    case Round::rp: return sf::Mode::rp;
  }
  return sf::Mode::rn;
}

// .sat on an f32 result (PTX ISA add/mul/fma: "clamps the result to [0.0, 1.0]", NaN results
// flushed to +0.0). -0 becomes +0, as a clamp max(x, +0) gives; the golden vectors check it.
inline uint32_t sat32(uint32_t b) {
  if (is_nan32(b)) return 0;
  if ((b & 0x80000000u) != 0) return 0;
  if (b > 0x3f800000u) return 0x3f800000u;
  return b;
}

// min/max on any format whose values compare exactly as doubles. The PTX ISA (min, max):
// a NaN operand is ignored unless both are NaN; .NaN makes any NaN operand give NaN; -0 is
// less than +0.
template <typename Bits>
inline Bits pick(Bits a, Bits b, double x, double y, bool nan_a, bool nan_b, bool nan_mode, Bits nan,
          bool want_min) {
  if (nan_a && nan_b) return nan;
  if ((nan_a || nan_b) && nan_mode) return nan;
  if (nan_a) return b;
  if (nan_b) return a;
  if (x == y) {  // equal values, or +0 and -0: the sign bit decides
    const bool sa = std::signbit(x), sb = std::signbit(y);
    if (sa == sb) return a;
    return (sa == want_min) ? a : b;
  }
  return ((x < y) == want_min) ? a : b;
}

// A comparison of two values exact as doubles (alu_float.cpp).
bool cmp_double(double x, double y, Cmp c);

}  // namespace ptxforge::emu::alu
