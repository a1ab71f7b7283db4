// The .approx functions of the CPU engine's ALU: the special values of the PTX ISA's tables
// (+-0, +-inf, NaN, negative arguments, subnormals with .ftz) exactly, and the documented
// error bounds over sampled arguments against libm in double precision.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "emu/alu.h"
#include "emu/golden_check.h"
#include "emu/golden_forms.h"

namespace ptxforge::emu::alu {
namespace {

constexpr uint32_t kInf = 0x7f800000u, kNInf = 0xff800000u, kNZero = 0x80000000u, kOne = 0x3f800000u;
constexpr uint32_t kQNan = 0x7fc00000u, kMinSub = 0x00000001u;

float f32(uint32_t b) { return std::bit_cast<float>(b); }

TEST(Approx, Ex2SpecialValues) {
  EXPECT_EQ(ex2_approx_f32(kNInf, false), 0u);
  EXPECT_EQ(ex2_approx_f32(kInf, false), kInf);
  EXPECT_EQ(ex2_approx_f32(0, false), kOne);
  EXPECT_EQ(ex2_approx_f32(kNZero, false), kOne);
  EXPECT_EQ(ex2_approx_f32(kQNan, false), kNanF32);
  EXPECT_EQ(ex2_approx_f32(0x3f800000u, false), 0x40000000u);  // 2^1
  EXPECT_EQ(ex2_approx_f32(0xc3150000u, false), 0x00000001u);  // 2^-149: subnormal kept
  EXPECT_EQ(ex2_approx_f32(0xc3150000u, true), 0u);            // flushed under .ftz
  EXPECT_EQ(ex2_approx_f32(0x43000000u, false), kInf);         // 2^128 overflows
}

TEST(Approx, Lg2SpecialValues) {
  EXPECT_EQ(lg2_approx_f32(0, false), kNInf);
  EXPECT_EQ(lg2_approx_f32(kNZero, false), kNInf);
  EXPECT_EQ(lg2_approx_f32(0xbf800000u, false), kNanF32);  // log of a negative
  EXPECT_EQ(lg2_approx_f32(kNInf, false), kNanF32);
  EXPECT_EQ(lg2_approx_f32(kInf, false), kInf);
  EXPECT_EQ(lg2_approx_f32(kQNan, false), kNanF32);
  EXPECT_EQ(lg2_approx_f32(0x40000000u, false), kOne);
  EXPECT_EQ(lg2_approx_f32(kMinSub, false), 0xc3150000u);  // -149
  EXPECT_EQ(lg2_approx_f32(kMinSub, true), kNInf);         // .ftz: log2(+0)
  EXPECT_EQ(lg2_approx_f32(0x80000001u, true), kNInf);     // .ftz: -subnormal is -0
  EXPECT_EQ(lg2_approx_f32(0x80000001u, false), kNanF32);
}

TEST(Approx, SinCosTanhSpecialValues) {
  EXPECT_EQ(sin_approx_f32(kNZero, false), kNZero);
  EXPECT_EQ(sin_approx_f32(0, false), 0u);
  EXPECT_EQ(sin_approx_f32(kInf, false), kNanF32);
  EXPECT_EQ(cos_approx_f32(kNInf, false), kNanF32);
  EXPECT_EQ(cos_approx_f32(kNZero, false), kOne);
  EXPECT_EQ(sin_approx_f32(0x80000001u, true), kNZero);
  EXPECT_EQ(tanh_approx_f32(kInf), kOne);
  EXPECT_EQ(tanh_approx_f32(kNInf), 0xbf800000u);
  EXPECT_EQ(tanh_approx_f32(kNZero), kNZero);
  EXPECT_EQ(tanh_approx_f32(kQNan), kNanF32);
}

TEST(Approx, RsqrtSqrtRcpSpecialValues) {
  EXPECT_EQ(rsqrt_approx_f32(0, false), kInf);
  EXPECT_EQ(rsqrt_approx_f32(kNZero, false), kNInf);
  EXPECT_EQ(rsqrt_approx_f32(kInf, false), 0u);
  EXPECT_EQ(rsqrt_approx_f32(0xbf800000u, false), kNanF32);
  EXPECT_EQ(rsqrt_approx_f32(0x40800000u, false), 0x3f000000u);  // 1/sqrt(4)
  EXPECT_EQ(rsqrt_approx_f32(kMinSub, true), kInf);               // .ftz: +0
  EXPECT_EQ(sqrt_approx_f32(kNZero, false), kNZero);
  EXPECT_EQ(sqrt_approx_f32(0xc0000000u, false), kNanF32);
  EXPECT_EQ(sqrt_approx_f32(kInf, false), kInf);
  EXPECT_EQ(rcp_approx_f32(0, false), kInf);
  EXPECT_EQ(rcp_approx_f32(kNZero, false), kNInf);
  EXPECT_EQ(rcp_approx_f32(kNInf, false), kNZero);
  EXPECT_EQ(rcp_approx_f32(0x40000000u, false), 0x3f000000u);
  EXPECT_EQ(rcp_approx_f32(0x7f000000u, false), 0x00400000u);  // 2^-127 kept without .ftz
  EXPECT_EQ(rcp_approx_f32(0x7f000000u, true), 0u);
  EXPECT_EQ(rsqrt_approx_f64(0x4010000000000000ull), 0x3fe0000000000000ull);
  EXPECT_EQ(rsqrt_approx_f64(0x8000000000000000ull), 0xfff0000000000000ull);
  EXPECT_EQ(rcp_approx_ftz_f64(0x0000000000000001ull), 0x7ff0000000000000ull);  // subnormal -> +0
  EXPECT_EQ(rcp_approx_ftz_f64(0x7fe0000000000000ull), 0u);  // 2^-1023 is subnormal: flushed
  EXPECT_EQ(rcp_approx_ftz_f64(0xc000000000000000ull), 0xbfe0000000000000ull);
}

// rsqrt.approx.f64 NaNs, from the golden recording (input -> GPU bits): a NaN operand quieted
// with its payload, a negative one the invalid-operation NaN.
TEST(Approx, RsqrtF64NanResults) {
  EXPECT_EQ(rsqrt_approx_f64(0x7ff0000000000001ull), 0x7ff8000000000001ull);
  EXPECT_EQ(rsqrt_approx_f64(0xfff8000000000000ull), 0xfff8000000000000ull);
  EXPECT_EQ(rsqrt_approx_f64(0xbff0000000000000ull), kNanF64);
  EXPECT_EQ(rsqrt_approx_f64(0xfff0000000000000ull), kNanF64);
  EXPECT_EQ(rsqrt_approx_f64(0x8000000000000001ull), kNanF64);  // a negative subnormal is not flushed
}

// rcp.approx.ftz.f64 reads the high word and writes the high word: the reciprocal of h:0 rounded
// toward zero to 20 fraction bits. Cases from the golden recording (input -> GPU bits).
TEST(Approx, RcpFtzF64IsTheHighWordReciprocal) {
  EXPECT_EQ(rcp_approx_ftz_f64(0x4004000000000000ull), 0x3fd9999900000000ull);  // 1/2.5, cut
  EXPECT_EQ(rcp_approx_ftz_f64(0x3ff8000000000000ull), 0x3fe5555500000000ull);  // 1/1.5
  EXPECT_EQ(rcp_approx_ftz_f64(0x3ff7ffffffffffffull), 0x3fe5555600000000ull);  // low word ignored
  EXPECT_EQ(rcp_approx_ftz_f64(0x3ff0000010000001ull), 0x3ff0000000000000ull);  // high word 1.0
  EXPECT_EQ(rcp_approx_ftz_f64(0x3fdfffffffffffffull), 0x4000000000000000ull);  // 2 + 2^-20 cut to 2
  EXPECT_EQ(rcp_approx_ftz_f64(0x656f84dc6f480a9aull), 0x1a703e8200000000ull);
  EXPECT_EQ(rcp_approx_ftz_f64(0xbf64b2ca707ecfabull), 0xc078bc7800000000ull);
  EXPECT_EQ(rcp_approx_ftz_f64(0x50017c71d4b27826ull), 0x2fdd47c800000000ull);
  EXPECT_EQ(rcp_approx_ftz_f64(0x8010000000000000ull), 0xffd0000000000000ull);
  EXPECT_EQ(rcp_approx_ftz_f64(0x800fffffffffffffull), 0xfff0000000000000ull);  // subnormal: -0
  EXPECT_EQ(rcp_approx_ftz_f64(0x7fefffffffffffffull), 0u);                     // 2^-1024: flushed
  EXPECT_EQ(rcp_approx_ftz_f64(0xffefffffffffffffull), 0x8000000000000000ull);
  EXPECT_EQ(rcp_approx_ftz_f64(0xfff0000000000000ull), 0x8000000000000000ull);
  // Specials by the high word only: an infinity's pattern with a nonzero low word is infinity,
  // and every NaN gives 0x7fffffff:00000000.
  EXPECT_EQ(rcp_approx_ftz_f64(0x7ff0000000000001ull), 0u);
  EXPECT_EQ(rcp_approx_ftz_f64(0x7ff8000000000000ull), 0x7fffffff00000000ull);
  EXPECT_EQ(rcp_approx_ftz_f64(0xfff8000000000000ull), 0x7fffffff00000000ull);
  EXPECT_EQ(rcp_approx_ftz_f64(0x7ff7ffffffffffffull), 0x7fffffff00000000ull);
}

// Over sampled operands the result is the high word's reciprocal cut to 20 fraction bits:
// never larger in magnitude, less than one unit of the 20th bit below, low word 0.
TEST(Approx, RcpFtzF64StaysWithinOneUnitBelowTheHighWordReciprocal) {
  std::mt19937_64 rng(0x1f64u);
  int bad = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t a = (rng() & 0x800fffffffffffffull) | ((1 + rng() % 2045) << 52);
    const double h = std::bit_cast<double>(a & 0xffffffff00000000ull);
    const double want = 1.0 / h;
    if (std::fpclassify(want) != FP_NORMAL) continue;
    const double got = std::bit_cast<double>(rcp_approx_ftz_f64(a));
    const double unit = std::ldexp(1.0, std::ilogb(got) - 20);
    bad += (std::bit_cast<uint64_t>(got) & 0xffffffffu) != 0 || std::signbit(got) != std::signbit(h) ||
           std::fabs(got) > std::fabs(want) || std::fabs(want) - std::fabs(got) >= unit;
  }
  EXPECT_EQ(bad, 0);
}

// The golden check's bound for rcp.approx.ftz.f64 (golden_bounds.cpp): relative 2^-20 from the
// reciprocal of the high word. The GPU's 1/1.5 = 0x3fe5555500000000 is 2^-22 below 2/3, outside
// the form table's 2^-22.9 and inside this bound; two units of the 20th bit below is outside.
TEST(Approx, RcpFtzF64GoldenBoundIsTheHighWordsTwentyBits) {
  const GoldenForm* f = nullptr;
  for (const GoldenForm& g : golden_forms()) {
    if (g.ptx == "rcp.approx.ftz.f64 %d, %a") f = &g;
  }
  ASSERT_NE(f, nullptr);
  const uint64_t in[] = {0x3ff8000000000000ull};
  EXPECT_TRUE(golden_near_truth(*f, in, 0x3fe5555500000000ull));
  EXPECT_TRUE(golden_near_truth(*f, in, 0x3fe5555600000000ull));
  EXPECT_FALSE(golden_near_truth(*f, in, 0x3fe5555300000000ull));
  EXPECT_TRUE(golden_agrees(*f, in, 0x3fe5555500000000ull, 0x3fe5555400000000ull, ~0ull));
  EXPECT_FALSE(golden_agrees(*f, in, 0x3fe5555500000000ull, 0x3fe5555200000000ull, ~0ull));
  // The low word is not read: 1/(high word 1.0) is 1 exactly, whatever the low word says.
  const uint64_t low[] = {0x3ff00000fffffff0ull};
  EXPECT_TRUE(golden_near_truth(*f, low, 0x3ff0000000000000ull));
  EXPECT_FALSE(golden_near_truth(*f, low, 0x3feffffd00000000ull));
}

TEST(Approx, DivisionRangeRule) {
  // div.approx.f32: for 2^126 < |b| < 2^128 the result is 0, or NaN for an infinite a.
  EXPECT_EQ(div_approx_f32(kOne, 0x7f000000u, false), 0u);
  EXPECT_EQ(div_approx_f32(0xbf800000u, 0x7f000000u, false), kNZero);
  EXPECT_EQ(div_approx_f32(kInf, 0x7f000000u, false), kNanF32);
  EXPECT_EQ(div_approx_f32(0x40c00000u, 0x40000000u, false), 0x40400000u);  // 6 / 2
  EXPECT_EQ(div_full_f32(kOne, 0x7f000000u, false), 0x00400000u);         // full range: 2^-127
  EXPECT_EQ(div_full_f32(kOne, 0x7f000000u, true), 0u);
  EXPECT_EQ(div_full_f32(0, 0, false), kNanF32);
  EXPECT_EQ(div_full_f32(kOne, kNZero, false), kNInf);
}

TEST(Approx, HalfForms) {
  EXPECT_EQ(ex2_approx_h(0x3c00, Half::f16), 0x4000);  // 2^1
  EXPECT_EQ(ex2_approx_h(0xfc00, Half::f16), 0x0000);  // 2^-inf
  EXPECT_EQ(ex2_approx_h(0x4c00, Half::f16), 0x7c00);  // 2^16 overflows f16
  EXPECT_EQ(ex2_approx_h(0x4c00, Half::bf16), 0x7f80); // bf16 0x4c00 = 2^25: 2^(2^25) overflows
  EXPECT_EQ(ex2_approx_h(0x3f80, Half::bf16), 0x4000); // 2^1
  EXPECT_EQ(ex2_approx_h(0x7e00, Half::f16), kNanF16);
  EXPECT_EQ(tanh_approx_h(0x8000, Half::f16), 0x8000);
  EXPECT_EQ(tanh_approx_h(0x7c00, Half::f16), 0x3c00);
  EXPECT_EQ(tanh_approx_h(0xff80, Half::bf16), 0xbf80);
}

// Outside [-2pi, 2pi] sin/cos follow the hardware's f32 range reduction, not the true value:
// x = 2^20 + 0.5: x * 0x3e22f983 = 166886.1264..., which RZ on the f32 grid (2^-6 there) makes
// t = 166886.125.
TEST(Approx, SinCosReduceTheArgumentLikeTheHardware) {
  const uint32_t x = 0x49800004u;  // 1048576.5
  const double t = 166886.125;
  EXPECT_EQ(sin_approx_f32(x, false), std::bit_cast<uint32_t>(static_cast<float>(std::sin(2 * M_PI * t))));
  EXPECT_NE(sin_approx_f32(x, false), std::bit_cast<uint32_t>(static_cast<float>(std::sin(1048576.5))));
  EXPECT_EQ(cos_approx_f32(x, false), std::bit_cast<uint32_t>(static_cast<float>(std::cos(2 * M_PI * t))));
}

// The bounds the manual states, on sampled arguments (docs/emu.md section 5).
TEST(Approx, StaysInsideTheDocumentedBounds) {
  std::mt19937 rng(27);
  std::uniform_real_distribution<float> trig(-6.2831853f, 6.2831853f), pos(1e-30f, 1e30f), wide(-100.f, 100.f);
  auto ulp = [](float x) { return std::nextafter(std::fabs(x), INFINITY) - std::fabs(x); };
  for (int i = 0; i < 20000; ++i) {
    const float t = trig(rng);
    const uint32_t tb = std::bit_cast<uint32_t>(t);
    EXPECT_LE(std::fabs(f32(sin_approx_f32(tb, false)) - std::sin(static_cast<double>(t))), std::exp2(-20.5));
    EXPECT_LE(std::fabs(f32(cos_approx_f32(tb, false)) - std::cos(static_cast<double>(t))), std::exp2(-20.5));
    const float p = pos(rng);
    const uint32_t pb = std::bit_cast<uint32_t>(p);
    const double lg = std::log2(static_cast<double>(p));
    const double lg_err = std::fabs(f32(lg2_approx_f32(pb, false)) - lg);
    EXPECT_LE(lg_err, (p > 0.5f && p < 2.f) ? std::exp2(-22) : std::exp2(-22) * std::fabs(lg));
    const double rs = 1.0 / std::sqrt(static_cast<double>(p));
    EXPECT_LE(std::fabs(f32(rsqrt_approx_f32(pb, false)) - rs) / rs, std::exp2(-22.9));
    const float rc = f32(rcp_approx_f32(pb, false));
    EXPECT_LE(std::fabs(rc - 1.0 / p), ulp(rc));
    const float w = wide(rng);
    const float e2 = f32(ex2_approx_f32(std::bit_cast<uint32_t>(w), false));
    EXPECT_LE(std::fabs(e2 - std::exp2(static_cast<double>(w))), 2 * ulp(e2));
    const double th = std::tanh(static_cast<double>(w) / 16);
    const float tf = f32(tanh_approx_f32(std::bit_cast<uint32_t>(w / 16)));
    EXPECT_LE(std::fabs(tf - th), std::exp2(-11) * std::fabs(th) + 1e-45);
  }
}

}  // namespace
}  // namespace ptxforge::emu::alu
