// f16 and bf16 arithmetic of the CPU engine's ALU: ties, overflow, subnormals with and
// without .ftz, .sat, .relu, the NaN rules of min/max and one rounding for fma, with values
// worked by hand (f16: bias 15, 10 mantissa bits; bf16: bias 127, 7 mantissa bits).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "emu/alu.h"

namespace ptxforge::emu::alu {
namespace {

constexpr FMode kRn{};
constexpr FMode kFtz{Round::rn, true, false};
constexpr FMode kSat{Round::rn, false, true};

TEST(AluHalf, F16AddTiesOverflowAndNan) {
  EXPECT_EQ(add_h(0x3c00, 0x3c00, Half::f16, kRn), 0x4000);  // 1 + 1 = 2
  EXPECT_EQ(add_h(0x3c00, 0x1000, Half::f16, kRn), 0x3c00);  // 1 + 2^-11: tie -> even (1)
  EXPECT_EQ(add_h(0x3c01, 0x1000, Half::f16, kRn), 0x3c02);  // tie -> even (1 + 2^-9)
  EXPECT_EQ(add_h(0x3c00, 0x1001, Half::f16, kRn), 0x3c01);  // just above the tie
  EXPECT_EQ(add_h(0x7bff, 0x7bff, Half::f16, kRn), 0x7c00);  // 65504 + 65504 -> inf
  EXPECT_EQ(add_h(0x7bff, 0x4800, Half::f16, kRn), 0x7bff);  // 65504 + 8: below the tie at 65520
  EXPECT_EQ(add_h(0x7bff, 0x4c00, Half::f16, kRn), 0x7c00);  // 65504 + 16: the tie, even is 2^16
  EXPECT_EQ(add_h(0x7bff, 0x4e00, Half::f16, kRn), 0x7c00);  // 65504 + 24 rounds past 65520
  EXPECT_EQ(add_h(0x7c00, 0xfc00, Half::f16, kRn), kNanF16);
  EXPECT_EQ(add_h(0x7d00, 0x3c00, Half::f16, kRn), kNanF16);  // signalling NaN in
  EXPECT_EQ(sub_h(0x3c00, 0x3c00, Half::f16, kRn), 0x0000);
  EXPECT_EQ(sub_h(0x3c00, 0x7e00, Half::f16, kRn), kNanF16);
}

TEST(AluHalf, F16SubnormalsFtzAndSat) {
  EXPECT_EQ(add_h(0x0001, 0x0001, Half::f16, kRn), 0x0002);   // 2^-24 + 2^-24
  EXPECT_EQ(add_h(0x0001, 0x0001, Half::f16, kFtz), 0x0000);  // flushed inputs
  EXPECT_EQ(mul_h(0x8400, 0x3800, Half::f16, kRn), 0x8200);   // -2^-14 * 0.5 = -2^-15 (subnormal)
  EXPECT_EQ(mul_h(0x8400, 0x3800, Half::f16, kFtz), 0x8000);  // flushed result keeps its sign
  EXPECT_EQ(mul_h(0x0001, 0x3800, Half::f16, kRn), 0x0000);   // 2^-25: tie -> even 0
  EXPECT_EQ(add_h(0x3c00, 0x3c00, Half::f16, kSat), 0x3c00);  // 2 -> 1
  EXPECT_EQ(add_h(0xbc00, 0x3800, Half::f16, kSat), 0x0000);  // -0.5 -> 0
  EXPECT_EQ(add_h(0x7e00, 0x3800, Half::f16, kSat), 0x0000);  // NaN -> 0
  EXPECT_EQ(mul_h(0x3800, 0x3c00, Half::f16, kSat), 0x3800);
}

TEST(AluHalf, Bf16Arithmetic) {
  EXPECT_EQ(mul_h(0x3f80, 0x4000, Half::bf16, kRn), 0x4000);  // 1 * 2
  EXPECT_EQ(add_h(0x3f80, 0x3b80, Half::bf16, kRn), 0x3f80);  // 1 + 2^-8: tie -> even
  EXPECT_EQ(add_h(0x3f81, 0x3b80, Half::bf16, kRn), 0x3f82);
  EXPECT_EQ(add_h(0x7f7f, 0x7f7f, Half::bf16, kRn), 0x7f80);  // overflow -> inf
  EXPECT_EQ(mul_h(0x0001, 0x3f80, Half::bf16, kRn), 0x0001);  // bf16 keeps subnormals
  EXPECT_EQ(mul_h(0x0001, 0x3f00, Half::bf16, kRn), 0x0000);  // 2^-133 * 0.5: tie -> 0
  EXPECT_EQ(add_h(0x7fc1, 0x3f80, Half::bf16, kRn), kNanBF16);
}

TEST(AluHalf, FmaRoundsOnceAndRelu) {
  // (1 + 2^-10)^2 - (1 + 2^-9) = 2^-20: f16 subnormal 16 * 2^-24.
  EXPECT_EQ(fma_h(0x3c01, 0x3c01, 0xbc02, Half::f16, kRn, false), 0x0010);
  EXPECT_EQ(fma_h(0x3c01, 0x3c01, 0xbc02, Half::f16, kFtz, false), 0x0000);
  // bf16: (1 + 2^-7)^2 - 1 = 2^-6 (1 + 2^-8): a tie at 7 fraction bits, even is 2^-6.
  EXPECT_EQ(fma_h(0x3f81, 0x3f81, 0xbf80, Half::bf16, kRn, false), 0x3c80);
  // (1 + 2^-7)(1 + 3 * 2^-7) - 1 = 2^-5 (1 + 3 * 2^-9): above the tie, so 2^-5 (1 + 2^-7).
  // A product rounded to bf16 first (1 + 2^-5) would give 2^-5 exactly: one rounding matters.
  EXPECT_EQ(fma_h(0x3f81, 0x3f83, 0xbf80, Half::bf16, kRn, false), 0x3d01);
  EXPECT_EQ(fma_h(0xbc00, 0x3c00, 0x0000, Half::f16, kRn, true), 0x0000);  // -1 -> relu 0
  EXPECT_EQ(fma_h(0x3c00, 0x3c00, 0x3c00, Half::f16, kRn, true), 0x4000);
  EXPECT_EQ(fma_h(0x7e00, 0x3c00, 0x3c00, Half::f16, kRn, true), kNanF16);  // NaN stays NaN
  EXPECT_EQ(fma_h(0x7c00, 0x0000, 0x3c00, Half::f16, kRn, false), kNanF16);  // inf * 0
}

TEST(AluHalf, MinMaxAndCompare) {
  EXPECT_EQ(min_h(0x0000, 0x8000, Half::f16, false), 0x8000);
  EXPECT_EQ(max_h(0x8000, 0x0000, Half::bf16, false), 0x0000);
  EXPECT_EQ(min_h(0x7e00, 0x3c00, Half::f16, false), 0x3c00);
  EXPECT_EQ(min_h(0x7e00, 0x3c00, Half::f16, true), kNanF16);
  EXPECT_EQ(max_h(0x7fc0, 0xff80, Half::bf16, false), 0xff80);  // NaN ignored: -inf
  EXPECT_EQ(max_h(0x7fc0, 0x7fc1, Half::bf16, false), kNanBF16);
  EXPECT_TRUE(cmp_h(0x7e00, 0x3c00, Half::f16, Cmp::ltu, false));
  EXPECT_FALSE(cmp_h(0x7e00, 0x3c00, Half::f16, Cmp::lt, false));
  EXPECT_TRUE(cmp_h(0x0001, 0x0000, Half::f16, Cmp::gt, false));
  EXPECT_FALSE(cmp_h(0x0001, 0x0000, Half::f16, Cmp::gt, true));  // .ftz: 0 == 0
  EXPECT_TRUE(cmp_h(0x3f80, 0x3f81, Half::bf16, Cmp::lt, false));
}

// f16 add, mul and fma against the compiler's _Float16 conversion of an exact double (a sum
// or product of two f16 values is exact in double; fma goes through a round-to-odd double,
// 53 >= 11 + 2 bits), over random operands with subnormals, both with and without .ftz.
uint16_t to_f16(double d) { return std::bit_cast<uint16_t>(static_cast<_Float16>(d)); }
double of_f16(uint16_t b) { return static_cast<double>(std::bit_cast<_Float16>(b)); }
bool nan16(uint16_t b) { return (b & 0x7fffu) > 0x7c00u; }
uint16_t flush16(uint16_t b) { return (b & 0x7c00u) == 0 ? static_cast<uint16_t>(b & 0x8000u) : b; }

double odd_sum(double x, double y) {  // x + y as a round-to-odd double
  const double s = x + y, bb = s - x, err = (x - (s - bb)) + (y - bb);
  if (err == 0) return s;
  double t = (std::signbit(err) != std::signbit(s)) ? std::nextafter(s, 0.0) : s;
  uint64_t bits = std::bit_cast<uint64_t>(t);
  return std::bit_cast<double>(bits | 1);
}

TEST(AluHalf, F16MatchesCompilerHalfReference) {
  std::mt19937 rng(16);
  int bad = 0;
  for (int i = 0; i < 200000; ++i) {
    uint16_t a = static_cast<uint16_t>(rng()), b = static_cast<uint16_t>(rng()), c = static_cast<uint16_t>(rng());
    if (i % 2) b = static_cast<uint16_t>((a & 0xfc00u) ^ (rng() & 0x83ffu));  // near a: cancellation, ties
    if (nan16(a) || nan16(b) || nan16(c) || ((a | b | c) & 0x7c00u) == 0x7c00u) continue;
    const bool ftz = i % 4 == 3;
    const FMode m{Round::rn, ftz, false};
    const uint16_t fa = ftz ? flush16(a) : a, fb = ftz ? flush16(b) : b, fc = ftz ? flush16(c) : c;
    auto fin = [&](uint16_t r) { return ftz ? flush16(r) : r; };
    const double x = of_f16(fa), y = of_f16(fb), z = of_f16(fc);
    const uint16_t want_add = (x + y == 0 && !(std::signbit(x) && std::signbit(y))) ? 0 : fin(to_f16(x + y));
    const double p = x * y;  // exact
    const bool zero_pair = p == 0 && z == 0 && std::signbit(p) == std::signbit(z);
    const uint16_t want_fma = (p + z == 0) ? (zero_pair ? to_f16(p) : 0) : fin(to_f16(odd_sum(p, z)));
    bad += add_h(a, b, Half::f16, m) != want_add;
    bad += mul_h(a, b, Half::f16, m) != fin(to_f16(x * y));
    bad += fma_h(a, b, c, Half::f16, m, false) != want_fma;
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace ptxforge::emu::alu
