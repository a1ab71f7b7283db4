// f32/f64 arithmetic of the CPU engine's ALU: hand-worked edge cases (NaN, +-0, subnormals
// with and without .ftz, +-inf, overflow to inf versus max-finite under directed rounding,
// ties), and a brute-force cross-check of every directed f32 operation against an
// independent reference: the exact result as a round-to-odd double (error terms from TwoSum,
// the exact product and fma remainders), then rounded to f32 by the host's nearest
// conversion and corrected one ulp by comparison. 100,000 operands per op and mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "emu/alu.h"
#include "emu/softfloat.h"

namespace ptxforge::emu::alu {
namespace {

constexpr uint32_t kInf = 0x7f800000u, kNInf = 0xff800000u, kMax = 0x7f7fffffu, kNMax = 0xff7fffffu;
constexpr uint32_t kOne = 0x3f800000u, kTwo = 0x40000000u, kNZero = 0x80000000u;
constexpr uint32_t kSNan = 0x7f800001u, kQNan = 0x7fc00000u, kMinSub = 0x00000001u;

FMode fm(Round r, bool ftz = false, bool sat = false) { return FMode{r, ftz, sat}; }

TEST(AluFloat, NanOperandsGiveTheCanonicalNan) {
  for (Round r : {Round::rn, Round::rz, Round::rm, Round::rp}) {
    EXPECT_EQ(add_f32(kSNan, kOne, fm(r)), kNanF32);
    EXPECT_EQ(add_f32(kOne, 0xffc12345u, fm(r)), kNanF32);
    EXPECT_EQ(mul_f32(kQNan, kOne, fm(r)), kNanF32);
    EXPECT_EQ(fma_f32(kOne, kOne, kSNan, fm(r)), kNanF32);
    EXPECT_EQ(div_f32(kOne, kQNan, fm(r)), kNanF32);
    EXPECT_EQ(sqrt_f32(kSNan, fm(r)), kNanF32);
    EXPECT_EQ(add_f32(kInf, kNInf, fm(r)), kNanF32);      // inf - inf
    EXPECT_EQ(mul_f32(kInf, 0, fm(r)), kNanF32);          // inf * 0
    EXPECT_EQ(fma_f32(kInf, kOne, kNInf, fm(r)), kNanF32);
    EXPECT_EQ(fma_f32(kInf, 0, kOne, fm(r)), kNanF32);
    EXPECT_EQ(div_f32(0, kNZero, fm(r)), kNanF32);        // 0 / 0
    EXPECT_EQ(div_f32(kInf, kNInf, fm(r)), kNanF32);
    EXPECT_EQ(sqrt_f32(0xbf800000u, fm(r)), kNanF32);     // sqrt(-1)
  }
  EXPECT_EQ(add_f32(kQNan, kOne, fm(Round::rn, false, true)), 0u);  // .sat: NaN -> +0
}

// f64 NaN results, cases from the golden recording (inputs -> GPU bits): the NaN operand comes
// back quieted with its payload and sign, in every rounding mode; of two NaN operands the first.
TEST(AluFloat, F64PropagatesTheNanOperand) {
  constexpr uint64_t kOne64 = 0x3ff0000000000000ull, kInf64 = 0x7ff0000000000000ull;
  for (Round r : {Round::rn, Round::rz, Round::rm, Round::rp}) {
    EXPECT_EQ(add_f64(0x7ff8000000000000ull, 0, r), 0x7ff8000000000000ull);
    EXPECT_EQ(add_f64(0x7ff0000000000001ull, 0x800fffffffffffffull, r), 0x7ff8000000000001ull);  // signalling: quieted
    EXPECT_EQ(add_f64(0xfff8000000000000ull, kInf64, r), 0xfff8000000000000ull);
    EXPECT_EQ(add_f64(kInf64, 0x7ff0000000000002ull, r), 0x7ff8000000000002ull);
    EXPECT_EQ(sub_f64(0x7ff0000000000001ull, 0xc1e0000000000000ull, r), 0x7ff8000000000001ull);
    EXPECT_EQ(sub_f64(0x4087fb221a054067ull, 0xfff8000000000000ull, r), 0xfff8000000000000ull);  // b not negated
    EXPECT_EQ(sub_f64(0xc24e701115937ea1ull, 0xffffffffffffffffull, r), 0xffffffffffffffffull);
    EXPECT_EQ(mul_f64(0x47effffff0000001ull, 0xfff7ffffffffffffull, r), 0xffffffffffffffffull);
    EXPECT_EQ(mul_f64(0xfff0000000000000ull, 0x7ff0000000000001ull, r), 0x7ff8000000000001ull);
    EXPECT_EQ(div_f64(0xfff7ffffffffffffull, 0x7ff0000000000001ull, r), 0xffffffffffffffffull);  // a first
    EXPECT_EQ(div_f64(0x40ff810a2e25f200ull, 0xfff0000000000001ull, r), 0xfff8000000000001ull);
    EXPECT_EQ(fma_f64(0x7ff0000000000001ull, kOne64, kOne64, r), 0x7ff8000000000001ull);
    EXPECT_EQ(fma_f64(kOne64, 0xfff0000000000001ull, kOne64, r), 0xfff8000000000001ull);
    EXPECT_EQ(fma_f64(kInf64, 0, 0x7ff0000000000002ull, r), 0x7ff8000000000002ull);  // NaN c beats inf * 0
    EXPECT_EQ(sqrt_f64(0xfff0000000000001ull, r), 0xfff8000000000001ull);
    EXPECT_EQ(sqrt_f64(0x7ff7ffffffffffffull, r), 0x7fffffffffffffffull);
    EXPECT_EQ(rcp_f64(0xfff0000000000001ull, r), 0xfff8000000000001ull);
    EXPECT_EQ(rcp_f64(0x7ff0000000000002ull, r), 0x7ff8000000000002ull);
  }
}

// An invalid operation on non-NaN operands gives 0xfff8000000000000 (the recording: sqrt of
// every negative number, -0 excepted; -inf too).
TEST(AluFloat, F64InvalidOperationsGiveTheDefaultNan) {
  constexpr uint64_t kInf64 = 0x7ff0000000000000ull, kNInf64 = 0xfff0000000000000ull;
  EXPECT_EQ(kNanF64, 0xfff8000000000000ull);
  for (Round r : {Round::rn, Round::rz, Round::rm, Round::rp}) {
    EXPECT_EQ(sqrt_f64(0xc1229be04e500717ull, r), kNanF64);
    EXPECT_EQ(sqrt_f64(0x8000000000000001ull, r), kNanF64);
    EXPECT_EQ(sqrt_f64(kNInf64, r), kNanF64);
    EXPECT_EQ(sqrt_f64(0x8000000000000000ull, r), 0x8000000000000000ull);  // sqrt(-0) = -0
    EXPECT_EQ(add_f64(kInf64, kNInf64, r), kNanF64);
    EXPECT_EQ(sub_f64(kInf64, kInf64, r), kNanF64);
    EXPECT_EQ(mul_f64(kInf64, 0x8000000000000000ull, r), kNanF64);
    EXPECT_EQ(fma_f64(kInf64, 0, 0, r), kNanF64);
    EXPECT_EQ(fma_f64(kInf64, 0x3ff0000000000000ull, kNInf64, r), kNanF64);
    EXPECT_EQ(div_f64(0, 0x8000000000000000ull, r), kNanF64);
    EXPECT_EQ(div_f64(kNInf64, kInf64, r), kNanF64);
  }
  EXPECT_EQ(nan_f64(0, 0x7ff0000000000003ull, 0xfff8000000000000ull), 0x7ff8000000000003ull);
  EXPECT_EQ(nan_f64(0, 0, 0xfff0000000000004ull), 0xfff8000000000004ull);
  EXPECT_EQ(nan_f64(0x3ff0000000000000ull), kNanF64);
}

TEST(AluFloat, SignedZeros) {
  EXPECT_EQ(add_f32(kOne, 0xbf800000u, fm(Round::rn)), 0u);
  EXPECT_EQ(add_f32(kOne, 0xbf800000u, fm(Round::rz)), 0u);
  EXPECT_EQ(add_f32(kOne, 0xbf800000u, fm(Round::rp)), 0u);
  EXPECT_EQ(add_f32(kOne, 0xbf800000u, fm(Round::rm)), kNZero);  // x - x = -0 under .rm
  EXPECT_EQ(add_f32(kNZero, kNZero, fm(Round::rn)), kNZero);
  EXPECT_EQ(add_f32(kNZero, 0, fm(Round::rn)), 0u);
  EXPECT_EQ(add_f32(kNZero, 0, fm(Round::rm)), kNZero);
  EXPECT_EQ(sub_f32(0, 0, fm(Round::rn)), 0u);
  EXPECT_EQ(sub_f32(0, 0, fm(Round::rm)), kNZero);
  EXPECT_EQ(mul_f32(kNZero, kOne, fm(Round::rp)), kNZero);
  EXPECT_EQ(fma_f32(kNZero, kOne, kNZero, fm(Round::rz)), kNZero);  // -0 + -0
  EXPECT_EQ(fma_f32(kNZero, kOne, 0, fm(Round::rz)), 0u);
  EXPECT_EQ(fma_f32(kNZero, kOne, 0, fm(Round::rm)), kNZero);
  EXPECT_EQ(sqrt_f32(kNZero, fm(Round::rp)), kNZero);
  EXPECT_EQ(div_f32(kOne, kNZero, fm(Round::rz)), kNInf);
  EXPECT_EQ(rcp_f32(kNZero, fm(Round::rn)), kNInf);
  EXPECT_EQ(add_f64(0x8000000000000000ull, 0x8000000000000000ull, Round::rp), 0x8000000000000000ull);
  EXPECT_EQ(sub_f64(0x3ff0000000000000ull, 0x3ff0000000000000ull, Round::rm), 0x8000000000000000ull);
}

TEST(AluFloat, OverflowGoesToInfOrMaxByDirection) {
  // FLT_MAX + FLT_MAX overflows: rn/rp -> +inf, rz/rm -> FLT_MAX; mirrored for negatives.
  EXPECT_EQ(add_f32(kMax, kMax, fm(Round::rn)), kInf);
  EXPECT_EQ(add_f32(kMax, kMax, fm(Round::rz)), kMax);
  EXPECT_EQ(add_f32(kMax, kMax, fm(Round::rm)), kMax);
  EXPECT_EQ(add_f32(kMax, kMax, fm(Round::rp)), kInf);
  EXPECT_EQ(mul_f32(kNMax, kTwo, fm(Round::rz)), kNMax);
  EXPECT_EQ(mul_f32(kNMax, kTwo, fm(Round::rp)), kNMax);
  EXPECT_EQ(mul_f32(kNMax, kTwo, fm(Round::rm)), kNInf);
  // FLT_MAX's ulp is 2^104. FLT_MAX + 2^102 (a quarter ulp): rn keeps FLT_MAX, rp gives inf.
  EXPECT_EQ(add_f32(kMax, 0x72800000u, fm(Round::rn)), kMax);
  EXPECT_EQ(add_f32(kMax, 0x72800000u, fm(Round::rp)), kInf);
  EXPECT_EQ(add_f32(kMax, 0x72800000u, fm(Round::rz)), kMax);
  // FLT_MAX + 2^103 (half an ulp) is a tie; the even neighbour is 2^128: inf under rn.
  EXPECT_EQ(add_f32(kMax, 0x73000000u, fm(Round::rn)), kInf);
  EXPECT_EQ(add_f32(kMax, 0x73000000u, fm(Round::rm)), kMax);
  EXPECT_EQ(div_f32(kMax, 0x3f000000u, fm(Round::rz)), kMax);  // FLT_MAX / 0.5
  EXPECT_EQ(mul_f64(0x7fefffffffffffffull, 0x4000000000000000ull, Round::rz), 0x7fefffffffffffffull);
  EXPECT_EQ(mul_f64(0x7fefffffffffffffull, 0x4000000000000000ull, Round::rp), 0x7ff0000000000000ull);
  EXPECT_EQ(fma_f64(0xffefffffffffffffull, 0x4000000000000000ull, 0, Round::rp), 0xffefffffffffffffull);
}

TEST(AluFloat, TiesAndDirectedRoundingByHand) {
  // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: rn picks even (1), rp goes up, rz/rm down.
  const uint32_t half_ulp = 0x33800000u;  // 2^-24
  EXPECT_EQ(add_f32(kOne, half_ulp, fm(Round::rn)), kOne);
  EXPECT_EQ(add_f32(kOne, half_ulp, fm(Round::rp)), 0x3f800001u);
  EXPECT_EQ(add_f32(kOne, half_ulp, fm(Round::rz)), kOne);
  EXPECT_EQ(add_f32(kOne, half_ulp, fm(Round::rm)), kOne);
  // (1 + 2^-23) + 2^-24 ties up to the even 1 + 2^-22.
  EXPECT_EQ(add_f32(0x3f800001u, half_ulp, fm(Round::rn)), 0x3f800002u);
  // 1 - 2^-60: rz/rm give the float below 1, rn/rp give 1.
  EXPECT_EQ(sub_f32(kOne, 0x21800000u, fm(Round::rz)), 0x3f7fffffu);
  EXPECT_EQ(sub_f32(kOne, 0x21800000u, fm(Round::rm)), 0x3f7fffffu);
  EXPECT_EQ(sub_f32(kOne, 0x21800000u, fm(Round::rn)), kOne);
  EXPECT_EQ(sub_f32(kOne, 0x21800000u, fm(Round::rp)), kOne);
  // 1/3 = 1.0101...0101010 | 1010... x 2^-2: the discarded part is 2/3 of an ulp, so rn and
  // rp round up, rz and rm down.
  EXPECT_EQ(div_f32(kOne, 0x40400000u, fm(Round::rn)), 0x3eaaaaabu);
  EXPECT_EQ(div_f32(kOne, 0x40400000u, fm(Round::rz)), 0x3eaaaaaau);
  EXPECT_EQ(div_f32(kOne, 0x40400000u, fm(Round::rm)), 0x3eaaaaaau);
  EXPECT_EQ(div_f32(kOne, 0x40400000u, fm(Round::rp)), 0x3eaaaaabu);
  EXPECT_EQ(div_f32(0xbf800000u, 0x40400000u, fm(Round::rm)), 0xbeaaaaabu);
  // sqrt(2) = 1.0110101000001001111001100110011111110011101111...: 0x3fb504f3 is below it.
  EXPECT_EQ(sqrt_f32(kTwo, fm(Round::rn)), 0x3fb504f3u);
  EXPECT_EQ(sqrt_f32(kTwo, fm(Round::rz)), 0x3fb504f3u);
  EXPECT_EQ(sqrt_f32(kTwo, fm(Round::rp)), 0x3fb504f4u);
  EXPECT_EQ(sqrt_f32(0x40800000u, fm(Round::rp)), kTwo);  // exact: sqrt(4) = 2 in every mode
  // fma keeps the product exact: (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46.
  EXPECT_EQ(fma_f32(0x3f800001u, 0x3f800001u, 0xbf800002u, fm(Round::rn)), 0x28800000u);
  // f64: 1 + 2^-53 ties to 1; rp gives 1 + 2^-52.
  EXPECT_EQ(add_f64(0x3ff0000000000000ull, 0x3ca0000000000000ull, Round::rn), 0x3ff0000000000000ull);
  EXPECT_EQ(add_f64(0x3ff0000000000000ull, 0x3ca0000000000000ull, Round::rp), 0x3ff0000000000001ull);
  EXPECT_EQ(div_f64(0x3ff0000000000000ull, 0x4008000000000000ull, Round::rz), 0x3fd5555555555555ull);
  EXPECT_EQ(div_f64(0x3ff0000000000000ull, 0x4008000000000000ull, Round::rp), 0x3fd5555555555556ull);
  EXPECT_EQ(sqrt_f64(0x4000000000000000ull, Round::rp), 0x3ff6a09e667f3bcdull);
  EXPECT_EQ(sqrt_f64(0x4000000000000000ull, Round::rz), 0x3ff6a09e667f3bccull);
  EXPECT_EQ(rcp_f64(0x4008000000000000ull, Round::rm), 0x3fd5555555555555ull);
}

TEST(AluFloat, SubnormalsAndFtz) {
  // 2^-149 * 0.5 is a tie between 0 and 2^-149: rn -> 0 (even), rp -> 2^-149.
  EXPECT_EQ(mul_f32(kMinSub, 0x3f000000u, fm(Round::rn)), 0u);
  EXPECT_EQ(mul_f32(kMinSub, 0x3f000000u, fm(Round::rp)), kMinSub);
  EXPECT_EQ(mul_f32(0x80000001u, 0x3f000000u, fm(Round::rm)), 0x80000001u);
  EXPECT_EQ(mul_f32(0x80000001u, 0x3f000000u, fm(Round::rz)), kNZero);
  // Without .ftz subnormals are kept: 2^-149 + 2^-149 = 2^-148.
  EXPECT_EQ(add_f32(kMinSub, kMinSub, fm(Round::rn)), 0x00000002u);
  // With .ftz the inputs flush: 0 + 0.
  EXPECT_EQ(add_f32(kMinSub, kMinSub, fm(Round::rn, true)), 0u);
  EXPECT_EQ(add_f32(0x80000001u, kOne, fm(Round::rz, true)), kOne);
  EXPECT_EQ(mul_f32(0x807fffffu, kOne, fm(Round::rn, true)), kNZero);  // sign preserved
  // A normal result that is subnormal flushes: 2^-126 * 0.5 = 2^-127.
  EXPECT_EQ(mul_f32(0x00800000u, 0x3f000000u, fm(Round::rn)), 0x00400000u);
  EXPECT_EQ(mul_f32(0x00800000u, 0x3f000000u, fm(Round::rn, true)), 0u);
  EXPECT_EQ(mul_f32(0x80800000u, 0x3f000000u, fm(Round::rp, true)), kNZero);
  EXPECT_EQ(div_f32(kOne, 0x7f000000u, fm(Round::rn, true)), 0u);  // 2^-127 flushes
  EXPECT_EQ(sqrt_f32(kMinSub, fm(Round::rn)), 0x1a3504f3u);        // sqrt(2^-149)
  EXPECT_EQ(sqrt_f32(kMinSub, fm(Round::rn, true)), 0u);
  // f64 subnormal products in directed modes: 2^-1074 * 0.75 rounds to 2^-1074 or 0.
  EXPECT_EQ(mul_f64(1, 0x3fe8000000000000ull, Round::rz), 0u);
  EXPECT_EQ(mul_f64(1, 0x3fe8000000000000ull, Round::rp), 1u);
  EXPECT_EQ(mul_f64(1, 0x3fe8000000000000ull, Round::rn), 1u);
  EXPECT_EQ(fma_f64(1, 0x3fe0000000000000ull, 0, Round::rn), 0u);  // tie to even 0
  EXPECT_EQ(fma_f64(1, 0x3fe0000000000000ull, 0, Round::rp), 1u);
}

TEST(AluFloat, Saturate) {
  EXPECT_EQ(add_f32(kOne, kOne, fm(Round::rn, false, true)), kOne);
  EXPECT_EQ(add_f32(0xbf800000u, 0x3f000000u, fm(Round::rz, false, true)), 0u);  // -0.5 -> 0
  EXPECT_EQ(mul_f32(kNZero, kOne, fm(Round::rn, false, true)), 0u);              // -0 -> +0
  EXPECT_EQ(add_f32(0x3f000000u, 0, fm(Round::rn, false, true)), 0x3f000000u);
  EXPECT_EQ(fma_f32(kInf, kOne, kOne, fm(Round::rn, false, true)), kOne);
  EXPECT_EQ(add_f32(kMinSub, 0, fm(Round::rn, false, true)), kMinSub);
  EXPECT_EQ(add_f32(kMinSub, 0, fm(Round::rn, true, true)), 0u);
}

TEST(AluFloat, MinMaxNanRulesAndSignedZero) {
  EXPECT_EQ(min_f32(kQNan, kOne, false, false), kOne);
  EXPECT_EQ(max_f32(kOne, kSNan, false, false), kOne);
  EXPECT_EQ(min_f32(kQNan, kSNan, false, false), kNanF32);
  EXPECT_EQ(min_f32(kQNan, kOne, false, true), kNanF32);   // .NaN
  EXPECT_EQ(max_f32(kOne, kSNan, false, true), kNanF32);
  EXPECT_EQ(min_f32(0, kNZero, false, false), kNZero);     // -0 < +0
  EXPECT_EQ(min_f32(kNZero, 0, false, false), kNZero);
  EXPECT_EQ(max_f32(kNZero, 0, false, false), 0u);
  EXPECT_EQ(max_f32(0, kNZero, false, false), 0u);
  EXPECT_EQ(min_f32(kNInf, kMax, false, false), kNInf);
  EXPECT_EQ(max_f32(kMinSub, 0, false, false), kMinSub);
  EXPECT_EQ(max_f32(kMinSub, kNZero, true, false), 0u);     // .ftz: 2^-149 is +0, > -0
  EXPECT_EQ(min_f32(0x80000001u, 0, true, false), kNZero);
  EXPECT_EQ(min_f64(0x7ff8000000000000ull, 0x3ff0000000000000ull, false), 0x3ff0000000000000ull);
  EXPECT_EQ(min_f64(0x7ff8000000000000ull, 0x3ff0000000000000ull, true), kNanF64MinMax);
  EXPECT_EQ(max_f64(0x8000000000000000ull, 0, false), 0u);
  EXPECT_EQ(min_f64(0, 0x8000000000000000ull, false), 0x8000000000000000ull);
  EXPECT_EQ(abs_f32(0x80000001u, true), 0u);
  EXPECT_EQ(abs_f32(0x80000001u, false), kMinSub);
  EXPECT_EQ(neg_f32(0, false), kNZero);
  EXPECT_EQ(neg_f32(kMinSub, true), kNZero);
}

TEST(AluFloat, ComparisonsOrderedAndUnordered) {
  EXPECT_TRUE(cmp_f32(0, kNZero, Cmp::eq, false));
  EXPECT_FALSE(cmp_f32(0, kNZero, Cmp::lt, false));
  EXPECT_FALSE(cmp_f32(kQNan, kQNan, Cmp::eq, false));
  EXPECT_FALSE(cmp_f32(kQNan, kOne, Cmp::ne, false));  // ordered ne: false with a NaN
  EXPECT_TRUE(cmp_f32(kQNan, kOne, Cmp::neu, false));
  EXPECT_TRUE(cmp_f32(kQNan, kOne, Cmp::ltu, false));
  EXPECT_TRUE(cmp_f32(kOne, kSNan, Cmp::geu, false));
  EXPECT_TRUE(cmp_f32(kOne, kSNan, Cmp::nan, false));
  EXPECT_FALSE(cmp_f32(kOne, kSNan, Cmp::num, false));
  EXPECT_TRUE(cmp_f32(kOne, kTwo, Cmp::num, false));
  EXPECT_FALSE(cmp_f32(kOne, kTwo, Cmp::equ, false));
  EXPECT_TRUE(cmp_f32(kMinSub, 0, Cmp::gt, false));
  EXPECT_FALSE(cmp_f32(kMinSub, 0, Cmp::gt, true));    // .ftz: equal to 0
  EXPECT_TRUE(cmp_f32(kMinSub, kNZero, Cmp::eq, true));
  EXPECT_TRUE(cmp_f32(kNInf, kNMax, Cmp::lt, false));
  EXPECT_TRUE(cmp_f64(0x7ff8000000000000ull, 0, Cmp::leu));
  EXPECT_FALSE(cmp_f64(0x7ff8000000000000ull, 0, Cmp::le));
  EXPECT_TRUE(cmp_f64(0x8000000000000000ull, 0, Cmp::ge));
}

// ---- the brute-force reference ----------------------------------------------------------------

float f32(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t b32(float f) { return std::bit_cast<uint32_t>(f); }

// The exact value r + err (err's sign is enough) as a round-to-odd double: 53 >= 24 + 2 bits,
// so rounding it once more to f32 is the correct rounding of the exact value.
double to_odd(double r, double err) {
  if (err == 0) return r;
  double t = r;
  if (std::signbit(err) != std::signbit(r)) t = std::nextafter(r, 0.0);  // truncate
  uint64_t bits = std::bit_cast<uint64_t>(t);
  if ((bits & 1) == 0) bits += 1;
  return std::bit_cast<double>(bits);
}

uint32_t round_ref(double d, Round mode) {
  float f = static_cast<float>(d);
  switch (mode) {
    case Round::rn: break;
    case Round::rz: if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f); break;
    case Round::rp: if (static_cast<double>(f) < d) f = std::nextafter(f, INFINITY); break;
    case Round::rm: if (static_cast<double>(f) > d) f = std::nextafter(f, -INFINITY); break;
  }
  return b32(f);
}

double two_sum_err(double a, double b, double s) {
  const double bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

enum class Op { add, sub, mul, fma, div, sqrt, rcp };

// Reference for finite, non-NaN operands (and results never NaN by construction of the draw).
uint32_t reference(Op op, uint32_t ua, uint32_t ub, uint32_t uc, Round mode) {
  const double a = f32(ua), b = f32(ub), c = f32(uc);
  double r = 0, err = 0;
  switch (op) {
    case Op::add: r = a + b; err = two_sum_err(a, b, r); break;
    case Op::sub: r = a - b; err = two_sum_err(a, -b, r); break;
    case Op::mul: r = a * b; break;  // 24 x 24 bits: exact
    case Op::fma: { const double p = a * b; r = p + c; err = two_sum_err(p, c, r); break; }
    case Op::div: { r = a / b; const double rem = std::fma(-r, b, a); err = b < 0 ? -rem : rem; break; }
    case Op::rcp: { r = 1.0 / a; const double rem = std::fma(-r, a, 1.0); err = a < 0 ? -rem : rem; break; }
    case Op::sqrt: { r = std::sqrt(a); err = std::fma(-r, r, a); break; }
  }
  if (r == 0 && err == 0) {  // exact zero: IEEE signs
    if (op == Op::mul || op == Op::div || op == Op::sqrt || op == Op::rcp) return b32(static_cast<float>(r));
    // A sum of two zeros of one sign keeps it; any other exact zero sum is +0 (-0 under .rm).
    const double x = op == Op::fma ? a * b : a, y = op == Op::fma ? c : (op == Op::sub ? -b : b);
    if (x == 0 && y == 0 && std::signbit(x) == std::signbit(y)) return b32(static_cast<float>(x));
    return mode == Round::rm ? 0x80000000u : 0u;
  }
  return round_ref(to_odd(r, err), mode);
}

uint32_t engine(Op op, uint32_t a, uint32_t b, uint32_t c, FMode m) {
  switch (op) {
    case Op::add: return add_f32(a, b, m);
    case Op::sub: return sub_f32(a, b, m);
    case Op::mul: return mul_f32(a, b, m);
    case Op::fma: return fma_f32(a, b, c, m);
    case Op::div: return div_f32(a, b, m);
    case Op::sqrt: return sqrt_f32(a, m);
    case Op::rcp: return rcp_f32(a, m);
  }
  return 0;
}

// Finite operands: half with exponents near `near` (cancellation, carries, ties), some
// subnormals, the rest anywhere in the finite range.
struct Draw {
  std::mt19937_64 rng{0x5eed0027u};
  uint32_t any() {
    for (;;) {
      const uint32_t b = static_cast<uint32_t>(rng());
      if ((b & 0x7f800000u) != 0x7f800000u) return b;
    }
  }
  uint32_t near(uint32_t base) {
    const uint32_t k = static_cast<uint32_t>(rng() % 8);
    if (k == 0) return static_cast<uint32_t>(rng()) & 0x807fffffu;  // subnormal or zero
    const int e = static_cast<int>((base >> 23) & 0xff) + static_cast<int>(rng() % 61) - 30;
    const uint32_t exp = static_cast<uint32_t>(std::clamp(e, 1, 254));
    uint32_t mant = static_cast<uint32_t>(rng()) & 0x7fffffu;
    if (k == 1) mant &= 0x7f0000u;  // short mantissas: exact results and ties
    return (static_cast<uint32_t>(rng() & 1) << 31) | (exp << 23) | mant;
  }
};

void cross_check(Op op, const char* name) {
  Draw d;
  for (Round mode : {Round::rz, Round::rm, Round::rp, Round::rn}) {
    int bad = 0;
    for (int i = 0; i < 100000; ++i) {
      const uint32_t a = (i % 4 == 0) ? d.any() : d.near(0x3f800000u);
      const uint32_t b = (i % 4 == 0) ? d.any() : d.near(a);
      const uint32_t c = (i % 2 == 0) ? d.near(a) : d.any();
      uint32_t sa = a;
      if (op == Op::sqrt) sa &= 0x7fffffffu;
      if ((op == Op::div && f32(b) == 0) || (op == Op::rcp && f32(sa) == 0)) continue;
      const uint32_t want = reference(op, sa, b, c, mode);
      const uint32_t got = engine(op, sa, b, c, FMode{mode, false, false});
      if (want != got && ++bad <= 5) {
        ADD_FAILURE() << name << " mode " << static_cast<int>(mode) << std::hex << " a=0x" << sa
                      << " b=0x" << b << " c=0x" << c << ": want 0x" << want << " got 0x" << got;
      }
    }
    EXPECT_EQ(bad, 0) << name << " mode " << static_cast<int>(mode);
  }
}

TEST(AluFloat, DirectedF32AddMatchesReference) { cross_check(Op::add, "add"); }
TEST(AluFloat, DirectedF32SubMatchesReference) { cross_check(Op::sub, "sub"); }
TEST(AluFloat, DirectedF32MulMatchesReference) { cross_check(Op::mul, "mul"); }
TEST(AluFloat, DirectedF32FmaMatchesReference) { cross_check(Op::fma, "fma"); }
TEST(AluFloat, DirectedF32DivMatchesReference) { cross_check(Op::div, "div"); }
TEST(AluFloat, DirectedF32SqrtMatchesReference) { cross_check(Op::sqrt, "sqrt"); }
TEST(AluFloat, DirectedF32RcpMatchesReference) { cross_check(Op::rcp, "rcp"); }

// .ftz variants of the directed operations: the same reference on flushed operands, with a
// subnormal result flushed to its signed zero.
TEST(AluFloat, DirectedF32FtzMatchesReference) {
  Draw d;
  auto flush = [](uint32_t b) { return ((b & 0x7f800000u) == 0) ? (b & 0x80000000u) : b; };
  int bad = 0;
  for (Round mode : {Round::rz, Round::rm, Round::rp}) {
    for (int i = 0; i < 30000; ++i) {
      const uint32_t a = d.near(0x00800000u), b = d.near(a), c = d.near(a);
      for (Op op : {Op::add, Op::mul, Op::fma, Op::div}) {
        if (op == Op::div && f32(flush(b)) == 0) continue;
        const uint32_t want = flush(reference(op, flush(a), flush(b), flush(c), mode));
        const uint32_t got = engine(op, a, b, c, FMode{mode, true, false});
        if (want != got && ++bad <= 5) {
          ADD_FAILURE() << "op " << static_cast<int>(op) << std::hex << " a=0x" << a << " b=0x" << b << " c=0x" << c
                        << ": want 0x" << want << " got 0x" << got;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

// The exact path in round-to-nearest against the host's IEEE arithmetic (f32 and f64): the
// interpreter uses the host for .rn, the exact path serves every other format, so the two must
// agree bit for bit, subnormals included.
TEST(AluFloat, ExactPathNearestMatchesHost) {
  Draw d;
  std::mt19937_64 rng(99);
  int bad = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint32_t a = (i % 3 == 0) ? d.any() : d.near(0x00800000u + static_cast<uint32_t>(rng() % 0x7f000000u));
    const uint32_t b = d.near(a), c = d.near(a);
    bad += sf::op_add(a, b, sf::kF32, sf::Mode::rn, false) != b32(f32(a) + f32(b));
    bad += sf::op_mul(a, b, sf::kF32, sf::Mode::rn, false) != b32(f32(a) * f32(b));
    bad += sf::op_fma(a, b, c, sf::kF32, sf::Mode::rn, false) != b32(std::fma(f32(a), f32(b), f32(c)));
    if (f32(b) != 0) bad += sf::op_div(a, b, sf::kF32, sf::Mode::rn, false) != b32(f32(a) / f32(b));
    bad += sf::op_sqrt(a & 0x7fffffffu, sf::kF32, sf::Mode::rn, false) != b32(std::sqrt(f32(a & 0x7fffffffu)));
    const uint64_t x = rng(), y = (x & 0xfff0000000000000ull) + (rng() >> 12) - (uint64_t{rng() % 64} << 52);
    const double dx = std::bit_cast<double>(x), dy = std::bit_cast<double>(y);
    if (std::isnan(dx) || std::isnan(dy) || std::isinf(dx) || std::isinf(dy)) continue;
    bad += sf::op_add(x, y, sf::kF64, sf::Mode::rn, false) != std::bit_cast<uint64_t>(dx + dy);
    bad += sf::op_mul(x, y, sf::kF64, sf::Mode::rn, false) != std::bit_cast<uint64_t>(dx * dy);
    if (dy != 0) bad += sf::op_div(x, y, sf::kF64, sf::Mode::rn, false) != std::bit_cast<uint64_t>(dx / dy);
    bad += sf::op_fma(x, y, x, sf::kF64, sf::Mode::rn, false) != std::bit_cast<uint64_t>(std::fma(dx, dy, dx));
  }
  EXPECT_EQ(bad, 0);
}

// f64 in directed modes: the host's nearest result moved one ulp as its exact error term says
// (TwoSum, fma remainders); operands kept where no intermediate under- or overflows.
TEST(AluFloat, DirectedF64MatchesErrorTermReference) {
  std::mt19937_64 rng(0xf64f64u);
  auto draw = [&](int spread) {
    const uint64_t e = static_cast<uint64_t>(1023 + static_cast<int>(rng() % (2 * spread + 1)) - spread);
    return ((rng() & 1) << 63) | (e << 52) | (rng() & 0xfffffffffffffull);
  };
  auto adjust = [](double r, double err, Round mode) {
    if (err == 0) return r;
    switch (mode) {
      case Round::rz: return (std::signbit(err) != std::signbit(r)) ? std::nextafter(r, 0.0) : r;
      case Round::rp: return err > 0 ? std::nextafter(r, INFINITY) : r;
      case Round::rm: return err < 0 ? std::nextafter(r, -INFINITY) : r;
      case Round::rn: return r;
    }
    return r;
  };
  int bad = 0;
  for (Round mode : {Round::rz, Round::rm, Round::rp}) {
    for (int i = 0; i < 30000; ++i) {
      const uint64_t ua = draw(200), ub = draw(i % 2 ? 60 : 200), uc = draw(100);
      const double a = std::bit_cast<double>(ua), b = std::bit_cast<double>(ub), c = std::bit_cast<double>(uc);
      const double s = a + b, p = a * b, q = a / b, f = std::fma(a, b, c), r = std::sqrt(std::fabs(a));
      const double want_add = adjust(s, two_sum_err(a, b, s), mode);
      const double want_mul = adjust(p, std::fma(a, b, -p), mode);
      const double rq = std::fma(-q, b, a);
      const double want_div = adjust(q, b < 0 ? -rq : rq, mode);
      const double want_sqrt = adjust(r, std::fma(-r, r, std::fabs(a)), mode);
      // fma's error: a*b = p + ep exactly, then (p + c) + ep with TwoSum; sign of the total error.
      const double ep = std::fma(a, b, -p);
      const double s1 = p + c, e1 = two_sum_err(p, c, s1);
      const double fe = (s1 - f) + e1 + ep;  // f is RN(s1 + e1 + ep); s1 - f is exact here
      const double want_fma = adjust(f, fe, mode);
      bad += add_f64(ua, ub, mode) != std::bit_cast<uint64_t>(want_add);
      bad += mul_f64(ua, ub, mode) != std::bit_cast<uint64_t>(want_mul);
      bad += div_f64(ua, ub, mode) != std::bit_cast<uint64_t>(want_div);
      bad += sqrt_f64(ua & 0x7fffffffffffffffull, mode) != std::bit_cast<uint64_t>(want_sqrt);
      bad += fma_f64(ua, ub, uc, mode) != std::bit_cast<uint64_t>(want_fma);
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace ptxforge::emu::alu
