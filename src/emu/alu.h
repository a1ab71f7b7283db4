// The CPU engine's arithmetic (docs/emu.md section 5): every PTX ALU operation the engine
// executes, as pure functions on bit patterns, so the interpreter (emu/interp.cpp) is a
// dispatch loop and every rounding, flush and NaN rule lives here with its table-driven test.
// Values travel as raw bits (f32 in uint32_t, f64 in uint64_t, f16/bf16 in the low 16 bits),
// because the GPU's results are bit patterns and host float conversions would lose them
// (signalling NaNs, -0, subnormals under FTZ).
//
// Files: alu_int.cpp (integer and bit ops), alu_float.cpp (f32/f64 arithmetic in every
// rounding mode), alu_half.cpp (f16/bf16 and their x2 forms), convert.cpp (cvt), approx.cpp
// (.approx functions). Each is built with -ffp-contract=off and never changes the host's
// rounding mode.
#pragma once

#include <cstdint>

namespace ptxforge::emu::alu {

// ---- modes -----------------------------------------------------------------------------------

enum class Round : uint8_t { rn, rz, rm, rp };                // .rn .rz .rm .rp (floating results)
enum class IntRound : uint8_t { none, rni, rzi, rmi, rpi };  // cvt's rounding to an integral value
struct FMode {
  Round rnd = Round::rn;
  bool ftz = false;  // .ftz: subnormal inputs and results flush to sign-preserving zero
  bool sat = false;  // .sat: clamp to [0, 1], NaN -> +0
};

// The NaN the GPU writes for every NaN result of f32, f16 and bf16 operations (payloads are not
// propagated).
inline constexpr uint32_t kNanF32 = 0x7fffffffu;
inline constexpr uint16_t kNanF16 = 0x7fffu;
inline constexpr uint16_t kNanBF16 = 0x7fffu;

// f64 arithmetic (add sub mul div fma sqrt rcp, every rounding mode) propagates NaNs, as the
// golden recording shows (docs/emu.md section 5): a NaN operand comes back quieted (bit 51 set)
// with its payload and sign (sub returns a NaN b unnegated); of several NaN operands, the first
// in operand order (a, then b, then c); an invalid operation on non-NaN operands (inf - inf,
// 0 * inf, 0 / 0, inf / inf, sqrt of a negative number) gives kNanF64.
inline constexpr uint64_t kNanF64 = 0xfff8000000000000ull;
inline constexpr uint64_t kQuietF64 = 0x0008000000000000ull;  // the quiet bit of an f64 NaN
// min/max.f64 of two NaN operands: the canonical NaN, as for f32 (the recording has no such instance).
inline constexpr uint64_t kNanF64MinMax = 0x7fffffffffffffffull;

inline constexpr bool is_nan64(uint64_t b) { return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
// The NaN an f64 arithmetic operation writes for operands a, b, c (unused ones 0), by the rule above.
inline constexpr uint64_t nan_f64(uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  if (is_nan64(a)) return a | kQuietF64;
  if (is_nan64(b)) return b | kQuietF64;
  if (is_nan64(c)) return c | kQuietF64;
  return kNanF64;
}

// ---- integers (alu_int.cpp) -------------------------------------------------------------------

// mul.hi / mul.wide: the high half (or the full product) of a signed or unsigned product.
uint32_t mul_hi_u32(uint32_t a, uint32_t b);
int32_t mul_hi_s32(int32_t a, int32_t b);
uint64_t mul_hi_u64(uint64_t a, uint64_t b);
int64_t mul_hi_s64(int64_t a, int64_t b);
// Shifts: counts >= the width clamp (shl/shr.u -> 0, shr.s -> sign fill).
uint64_t shl(uint64_t a, uint32_t count, int bits);
uint64_t shr_u(uint64_t a, uint32_t count, int bits);
uint64_t shr_s(uint64_t a, uint32_t count, int bits);
// shf.l/.r with .wrap (count mod 32) or .clamp (count min 32).
uint32_t shf_l(uint32_t lo, uint32_t hi, uint32_t count, bool wrap);
uint32_t shf_r(uint32_t lo, uint32_t hi, uint32_t count, bool wrap);
uint32_t prmt(uint32_t a, uint32_t b, uint32_t selector, uint8_t mode);  // mode: 0 default, 1 f4e, 2 b4e, 3 rc8, 4 ecl, 5 ecr, 6 rc16
uint64_t bfe_u(uint64_t a, uint32_t pos, uint32_t len, int bits);
uint64_t bfe_s(uint64_t a, uint32_t pos, uint32_t len, int bits);
uint64_t bfi(uint64_t a, uint64_t b, uint32_t pos, uint32_t len, int bits);
uint32_t bfind(uint64_t a, int bits, bool is_signed, bool shiftamt);  // 0xffffffff when none
uint64_t brev(uint64_t a, int bits);
uint32_t popc(uint64_t a, int bits);
uint32_t clz(uint64_t a, int bits);
uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint8_t lut);
int32_t dp4a(uint32_t a, uint32_t b, int32_t c, bool a_signed, bool b_signed);
int32_t dp2a(uint32_t a, uint32_t b, int32_t c, bool a_signed, bool b_signed, bool hi);
// Saturating s32 add/sub (.sat).
int32_t add_sat_s32(int32_t a, int32_t b);
int32_t sub_sat_s32(int32_t a, int32_t b);
// min/max with .relu (negative result -> 0), abs, neg: plain enough to stay in the interpreter.

// ---- f32 / f64 (alu_float.cpp) ------------------------------------------------------------------

uint32_t add_f32(uint32_t a, uint32_t b, FMode m);
uint32_t sub_f32(uint32_t a, uint32_t b, FMode m);
uint32_t mul_f32(uint32_t a, uint32_t b, FMode m);
uint32_t fma_f32(uint32_t a, uint32_t b, uint32_t c, FMode m);  // also mad.f32 with a rounding mode
uint32_t div_f32(uint32_t a, uint32_t b, FMode m);              // div.rn/.rz/.rm/.rp
uint32_t sqrt_f32(uint32_t a, FMode m);                         // sqrt.rn/...
uint32_t rcp_f32(uint32_t a, FMode m);                          // rcp.rn/...
uint32_t min_f32(uint32_t a, uint32_t b, bool ftz, bool nan_mode);  // .NaN: a NaN operand gives NaN
uint32_t max_f32(uint32_t a, uint32_t b, bool ftz, bool nan_mode);
uint32_t abs_f32(uint32_t a, bool ftz);
uint32_t neg_f32(uint32_t a, bool ftz);
uint64_t add_f64(uint64_t a, uint64_t b, Round r);
uint64_t sub_f64(uint64_t a, uint64_t b, Round r);
uint64_t mul_f64(uint64_t a, uint64_t b, Round r);
uint64_t fma_f64(uint64_t a, uint64_t b, uint64_t c, Round r);
uint64_t div_f64(uint64_t a, uint64_t b, Round r);
uint64_t sqrt_f64(uint64_t a, Round r);
uint64_t rcp_f64(uint64_t a, Round r);
uint64_t min_f64(uint64_t a, uint64_t b, bool nan_mode);
uint64_t max_f64(uint64_t a, uint64_t b, bool nan_mode);

// setp / set / slct comparisons: eq ne lt le gt ge (ordered), equ neu ltu leu gtu geu
// (unordered: true when either is NaN), num, nan.
enum class Cmp : uint8_t { eq, ne, lt, le, gt, ge, lo, ls, hi, hs, equ, neu, ltu, leu, gtu, geu, num, nan };
bool cmp_f32(uint32_t a, uint32_t b, Cmp c, bool ftz);
bool cmp_f64(uint64_t a, uint64_t b, Cmp c);
bool cmp_int(uint64_t a, uint64_t b, Cmp c, int bits, bool is_signed);  // lo/ls/hi/hs are the unsigned forms

// ---- f16 / bf16 (alu_half.cpp): one value in the low 16 bits; x2 forms apply per half ------------

enum class Half : uint8_t { f16, bf16 };
uint16_t add_h(uint16_t a, uint16_t b, Half t, FMode m);
uint16_t sub_h(uint16_t a, uint16_t b, Half t, FMode m);
uint16_t mul_h(uint16_t a, uint16_t b, Half t, FMode m);
uint16_t fma_h(uint16_t a, uint16_t b, uint16_t c, Half t, FMode m, bool relu);
uint16_t min_h(uint16_t a, uint16_t b, Half t, bool nan_mode);
uint16_t max_h(uint16_t a, uint16_t b, Half t, bool nan_mode);
bool cmp_h(uint16_t a, uint16_t b, Half t, Cmp c, bool ftz);

// ---- cvt (convert.cpp) ------------------------------------------------------------------------

// Every type cvt names: integers, floats, and the packed and narrow float formats.
enum class Ty : uint8_t {
  u8, u16, u32, u64, s8, s16, s32, s64,
  f16, bf16, tf32, f32, f64,
  e4m3, e5m2, e2m1, e2m3, e3m2, ue8m0,
};
struct CvtMode {
  Round rnd = Round::rn;        // floating destination, or floating -> narrower floating
  IntRound irnd = IntRound::none;
  bool rna = false;             // .rna (tf32, and f32 -> f16/bf16 round-to-nearest-away)
  bool ftz = false;
  bool sat = false;             // integer saturation / float .sat
  bool satfinite = false;       // .satfinite: NaN stays NaN (or max for formats without NaN), inf clamps to max finite
  bool relu = false;            // .relu: negative -> 0, NaN -> canonical NaN per format
};
// Converts one value given as its bits (low bits of the u64) from `from` to `to`. Integer
// destinations follow the manual's saturation (float -> int always saturates); a NaN source gives
// what the GPU gives (convert.cpp: 0, or the destination's top bit from f64 or to 64 bits).
uint64_t cvt(uint64_t bits, Ty from, Ty to, CvtMode m);

// ---- .approx (approx.cpp): correctly rounded from double, inside every documented bound ------

uint32_t ex2_approx_f32(uint32_t a, bool ftz);
uint32_t lg2_approx_f32(uint32_t a, bool ftz);
uint32_t sin_approx_f32(uint32_t a, bool ftz);
uint32_t cos_approx_f32(uint32_t a, bool ftz);
uint32_t rsqrt_approx_f32(uint32_t a, bool ftz);
uint32_t sqrt_approx_f32(uint32_t a, bool ftz);
uint32_t rcp_approx_f32(uint32_t a, bool ftz);
uint32_t tanh_approx_f32(uint32_t a);
uint32_t div_approx_f32(uint32_t a, uint32_t b, bool ftz);  // div.approx
uint32_t div_full_f32(uint32_t a, uint32_t b, bool ftz);    // div.full
uint64_t rsqrt_approx_f64(uint64_t a);                       // rsqrt.approx.f64
uint64_t rcp_approx_ftz_f64(uint64_t a);                     // reads and writes only the high word
uint16_t ex2_approx_h(uint16_t a, Half t);
uint16_t tanh_approx_h(uint16_t a, Half t);

}  // namespace ptxforge::emu::alu
