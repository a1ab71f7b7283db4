// The ALU's exact path (docs/emu.md section 5): floating values decoded to an integer
// significand and a binary exponent, operated on exactly with 128-bit integers (a sticky bit
// stands for everything shifted out), then rounded once into any binary format in any rounding
// mode. Every format cvt names (f64 down to e2m1) is one `Format` row, so rounding, subnormals,
// overflow and .satfinite are written once. The interpreter's hot round-to-nearest f32/f64
// paths use host arithmetic instead (alu_float.cpp); everything directed or narrow comes here.
#pragma once

#include <cstdint>

namespace ptxforge::emu::sf {

using u128 = unsigned __int128;

// A signed binary floating-point format of 1 + ebits + mbits bits.
struct Format {
  uint8_t ebits;
  uint8_t mbits;
  bool has_inf;         // exponent all ones, mantissa 0 is infinity (IEEE-like formats)
  bool ieee_nan;        // exponent all ones, mantissa != 0 is NaN (IEEE-like formats)
  bool has_nan;         // some encoding is NaN (e4m3: only S.1111.111)
  uint64_t max_finite;  // encoding of the largest finite magnitude, sign bit clear
  uint64_t nan;         // the canonical NaN the GPU writes (when has_nan)
  int bias() const { return (1 << (ebits - 1)) - 1; }
  int width() const { return 1 + ebits + mbits; }
  uint64_t sign_bit() const { return uint64_t{1} << (width() - 1); }
};

inline constexpr Format kF64{11, 52, true, true, true, 0x7fefffffffffffffull, 0x7fffffffffffffffull};
inline constexpr Format kF32{8, 23, true, true, true, 0x7f7fffffu, 0x7fffffffu};
inline constexpr Format kF16{5, 10, true, true, true, 0x7bffu, 0x7fffu};
inline constexpr Format kBF16{8, 7, true, true, true, 0x7f7fu, 0x7fffu};
// tf32 as a 19-bit format; cvt places it in the high bits of a 32-bit container.
inline constexpr Format kTF32{8, 10, true, true, true, 0x3fbffu, 0x3ffffu};
// The OCP 8-bit and 6/4-bit formats (PTX ISA "Alternate floating-point data formats").
inline constexpr Format kE4M3{4, 3, false, false, true, 0x7eu, 0x7fu};
inline constexpr Format kE5M2{5, 2, true, true, true, 0x7bu, 0x7fu};
inline constexpr Format kE2M3{2, 3, false, false, false, 0x1fu, 0};
inline constexpr Format kE3M2{3, 2, false, false, false, 0x1fu, 0};
inline constexpr Format kE2M1{2, 1, false, false, false, 0x7u, 0};

// Rounding of the exact path: the four IEEE directions plus nearest-ties-away (.rna).
enum class Mode : uint8_t { rn, rz, rm, rp, rna };

enum class Cls : uint8_t { zero, finite, inf, nan };
// A decoded value: finite values are (-1)^sign * sig * 2^exp with sig != 0.
struct Val {
  Cls cls = Cls::zero;
  bool sign = false;
  u128 sig = 0;
  int exp = 0;
};

// An exact result about to be rounded: (-1)^sign * (sig + sticky*epsilon) * 2^exp, where the
// sticky bit means "something nonzero below bit 0". zero: the exact result is zero.
struct Exact {
  bool sign = false;
  bool zero = false;
  u128 sig = 0;
  int exp = 0;
  bool sticky = false;
};

Val decode(uint64_t bits, const Format& f);
// Subnormal to sign-preserving zero (.ftz on an input).
Val flush(Val v, const Format& f);

// Exact arithmetic on finite operands.
Exact mul(const Val& a, const Val& b);
Exact add(bool sa, u128 siga, int expa, bool sb, u128 sigb, int expb);
Exact div(const Val& a, const Val& b);
Exact sqrt(const Val& a);  // a > 0

// Rounds an exact nonzero value into f. satfinite: overflow (and only overflow) gives the
// largest finite magnitude instead of infinity. A format without infinity always saturates
// that way (the manual makes .satfinite mandatory for them).
uint64_t round_pack(bool sign, u128 sig, int exp, bool sticky, const Format& f, Mode m, bool satfinite);
inline uint64_t round_pack(const Exact& e, const Format& f, Mode m, bool satfinite) {
  return round_pack(e.sign, e.sig, e.exp, e.sticky, f, m, satfinite);
}

uint64_t pack_zero(bool sign, const Format& f);
uint64_t pack_inf(bool sign, const Format& f);  // max finite for formats without infinity
bool is_subnormal(uint64_t bits, const Format& f);  // nonzero with exponent field 0

// Rounds a finite value to an integral value in the given direction and returns its
// magnitude. A value of 2^126 or more sets *huge and returns 2^126 (every caller saturates or
// keeps the value unchanged well below that).
u128 round_to_integer(const Val& v, Mode m, bool* huge);

int msb_index(u128 x);  // position of the highest set bit, x != 0

// IEEE operations on encodings of f (softfloat_ops.cpp): NaN operands and invalid operations
// give f.nan (the GPU's canonical NaN), signed zeros follow IEEE 754 (an exact zero sum is
// -0 only under .rm), and ftz flushes subnormal operands and results to signed zero.
uint64_t op_add(uint64_t a, uint64_t b, const Format& f, Mode m, bool ftz);
uint64_t op_mul(uint64_t a, uint64_t b, const Format& f, Mode m, bool ftz);
uint64_t op_fma(uint64_t a, uint64_t b, uint64_t c, const Format& f, Mode m, bool ftz);
uint64_t op_div(uint64_t a, uint64_t b, const Format& f, Mode m, bool ftz);
uint64_t op_sqrt(uint64_t a, const Format& f, Mode m, bool ftz);
// Decoded value as a double (exact for every format of at most 53 significant bits).
double to_double(const Val& v);

}  // namespace ptxforge::emu::sf
