// cvt of the CPU engine's ALU: integer saturation and extension, float -> int rounding with
// the GPU's NaN results, int -> float rounding, f32 <-> f16/bf16/f64 in every direction and
// which NaN each gives, tf32 .rn/.rz/.rna{.satfinite}, the
// 8-, 6- and 4-bit formats with .satfinite and .relu, and ue8m0. Expected bit patterns are
// worked by hand from the formats (f16 bias 15; e4m3 bias 7, max 448, NaN 0x7f; e5m2 bias 15,
// max 57344; e2m1 values 0 .5 1 1.5 2 3 4 6; e2m3 max 7.5; e3m2 max 28; ue8m0 = 2^(e-127)).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "emu/alu.h"

namespace ptxforge::emu::alu {
namespace {

CvtMode irnd(IntRound r) { CvtMode m; m.irnd = r; return m; }
CvtMode rnd(Round r) { CvtMode m; m.rnd = r; return m; }
CvtMode sat() { CvtMode m; m.sat = true; return m; }
CvtMode satfinite(bool relu = false) { CvtMode m; m.satfinite = true; m.relu = relu; return m; }

constexpr uint64_t kF32Nan = 0x7fc00000u, kF32SNan = 0xff800001u;

TEST(Convert, FloatToIntRoundingModes) {
  struct Row { uint32_t f; IntRound r; int32_t want; };
  const Row rows[] = {
      {0x40200000u, IntRound::rni, 2},   // 2.5 -> 2 (ties to even)
      {0x40600000u, IntRound::rni, 4},   // 3.5 -> 4
      {0xc0200000u, IntRound::rni, -2},  // -2.5 -> -2
      {0xc02ccccdu, IntRound::rzi, -2},  // -2.7 -> -2
      {0xc0066666u, IntRound::rmi, -3},  // -2.1 -> -3
      {0x40066666u, IntRound::rpi, 3},   // 2.1 -> 3
      {0x40066666u, IntRound::rmi, 2},
      {0x3f000000u, IntRound::rni, 0},   // 0.5 -> 0
      {0x3f000001u, IntRound::rni, 1},
      {0xbf000000u, IntRound::rpi, 0},   // -0.5 -> -0 -> 0
      {0x00000001u, IntRound::rpi, 1},   // the smallest subnormal rounds up to 1
  };
  for (const Row& r : rows) {
    EXPECT_EQ(static_cast<int32_t>(cvt(r.f, Ty::f32, Ty::s32, irnd(r.r))), r.want) << std::hex << r.f;
  }
  CvtMode ftz = irnd(IntRound::rpi);
  ftz.ftz = true;
  EXPECT_EQ(cvt(0x00000001u, Ty::f32, Ty::s32, ftz), 0u);  // flushed before rounding
}

TEST(Convert, FloatToIntSaturates) {
  const CvtMode rz = irnd(IntRound::rzi);
  EXPECT_EQ(cvt(0x7f800000u, Ty::f32, Ty::s32, rz), 0x7fffffffu);
  EXPECT_EQ(cvt(0xff800000u, Ty::f32, Ty::s32, rz), 0xffffffff80000000ull);  // sign-extended
  EXPECT_EQ(cvt(0x4f32d05eu, Ty::f32, Ty::s32, rz), 0x7fffffffu);            // 3e9
  EXPECT_EQ(cvt(0x4f32d05eu, Ty::f32, Ty::u32, rz), 3000000000u);
  EXPECT_EQ(cvt(0xbf800000u, Ty::f32, Ty::u32, rz), 0u);                     // -1 -> 0
  EXPECT_EQ(cvt(0x43960000u, Ty::f32, Ty::u8, rz), 0xffu);                   // 300 -> 255
  EXPECT_EQ(cvt(0xc3480000u, Ty::f32, Ty::s8, rz), 0xffffffffffffff80ull);   // -200 -> -128
  EXPECT_EQ(cvt(0x5f000000u, Ty::f32, Ty::s64, rz), 0x7fffffffffffffffull);  // 2^63
  EXPECT_EQ(cvt(0xdf000000u, Ty::f32, Ty::s64, rz), 0x8000000000000000ull);  // -2^63 fits
  EXPECT_EQ(cvt(0x43e0000000000000ull, Ty::f64, Ty::u64, rz), 0x8000000000000000ull);  // 2^63
  EXPECT_EQ(cvt(0x43f0000000000000ull, Ty::f64, Ty::u64, rz), 0xffffffffffffffffull);  // 2^64
  EXPECT_EQ(cvt(0x7bffu, Ty::f16, Ty::s16, irnd(IntRound::rni)), 0x7fffu);  // 65504 -> 32767
  EXPECT_EQ(cvt(0xfff0000000000000ull, Ty::f64, Ty::u64, rz), 0u);                  // -inf
  EXPECT_EQ(cvt(0x7ff0000000000000ull, Ty::f64, Ty::s32, irnd(IntRound::rni)), 0x7fffffffu);
}

// NaN -> integer, from the GPU (golden vectors, sm_90): 0 from f16/bf16/f32 to 32 bits or fewer;
// the destination's top bit alone from an f64 source or to a 64-bit destination.
TEST(Convert, FloatToIntNanDependsOnTheDatapath) {
  const CvtMode rz = irnd(IntRound::rzi), rn = irnd(IntRound::rni);
  EXPECT_EQ(cvt(kF32Nan, Ty::f32, Ty::s32, rz), 0u);
  EXPECT_EQ(cvt(0x7f800001u, Ty::f32, Ty::u32, rz), 0u);
  EXPECT_EQ(cvt(0xffc00000u, Ty::f32, Ty::u8, rn), 0u);
  EXPECT_EQ(cvt(0x7fc00000u, Ty::f32, Ty::s16, rn), 0u);
  EXPECT_EQ(cvt(0x7e00u, Ty::f16, Ty::s32, rn), 0u);
  // Recorded: cvt.rzi.s64.f32, cvt.rni.s32.f64, cvt.rzi.u64.f64.
  EXPECT_EQ(cvt(0x7fc00000u, Ty::f32, Ty::s64, rz), 0x8000000000000000ull);
  EXPECT_EQ(cvt(0x7fbfffffu, Ty::f32, Ty::s64, rz), 0x8000000000000000ull);
  EXPECT_EQ(cvt(0xfff8000000000001ull, Ty::f64, Ty::s32, rn), 0xffffffff80000000ull);  // sign-extended
  EXPECT_EQ(cvt(0x7ff0000000000001ull, Ty::f64, Ty::u64, rz), 0x8000000000000000ull);
  // Not recorded, the same split: u64 <- f32 and u32 <- f64.
  EXPECT_EQ(cvt(kF32SNan, Ty::f32, Ty::u64, rz), 0x8000000000000000ull);
  EXPECT_EQ(cvt(0x7ff8000000000000ull, Ty::f64, Ty::u32, rz), 0x80000000u);
}

TEST(Convert, IntegerToInteger) {
  EXPECT_EQ(cvt(0x80, Ty::s8, Ty::s32, CvtMode{}), 0xffffffffffffff80ull);
  EXPECT_EQ(cvt(0x80, Ty::s8, Ty::u32, CvtMode{}), 0xffffff80u);  // extend by source, cut to 32
  EXPECT_EQ(cvt(0x80, Ty::u8, Ty::s32, CvtMode{}), 0x80u);
  EXPECT_EQ(cvt(0xffffffffu, Ty::s32, Ty::u8, CvtMode{}), 0xffu);
  EXPECT_EQ(cvt(0xffffffffu, Ty::s32, Ty::u8, sat()), 0u);
  EXPECT_EQ(cvt(300, Ty::u32, Ty::s8, sat()), 127u);
  EXPECT_EQ(cvt(300, Ty::u32, Ty::s8, CvtMode{}), 44u);  // 300 mod 256
  EXPECT_EQ(cvt(0xfffffffffffffffbull, Ty::s64, Ty::u32, sat()), 0u);
  EXPECT_EQ(cvt(0x80000000u, Ty::u32, Ty::s32, sat()), 0x7fffffffu);
  EXPECT_EQ(cvt(0xffffffffu, Ty::s32, Ty::u64, CvtMode{}), 0xffffffffffffffffull);
  EXPECT_EQ(cvt(0xffffffffu, Ty::u32, Ty::s64, CvtMode{}), 0xffffffffu);
  EXPECT_EQ(cvt(0x8000, Ty::s16, Ty::s64, sat()), 0xffffffffffff8000ull);
}

TEST(Convert, IntegerToFloat) {
  EXPECT_EQ(cvt(0xffffffffu, Ty::u32, Ty::f32, rnd(Round::rn)), 0x4f800000u);  // 2^32
  EXPECT_EQ(cvt(0xffffffffu, Ty::u32, Ty::f32, rnd(Round::rz)), 0x4f7fffffu);
  EXPECT_EQ(cvt(0xffffffffu, Ty::s32, Ty::f32, rnd(Round::rn)), 0xbf800000u);  // -1
  EXPECT_EQ(cvt(0x1000001u, Ty::s32, Ty::f32, rnd(Round::rn)), 0x4b800000u);   // 2^24 + 1: tie -> even
  EXPECT_EQ(cvt(0x1000001u, Ty::s32, Ty::f32, rnd(Round::rp)), 0x4b800001u);
  EXPECT_EQ(cvt(0x1000003u, Ty::s32, Ty::f32, rnd(Round::rn)), 0x4b800002u);   // tie -> even (up)
  EXPECT_EQ(cvt(0xfefffffful, Ty::s32, Ty::f32, rnd(Round::rm)), 0xcb800001u); // -(2^24 + 1)
  EXPECT_EQ(cvt(0, Ty::s32, Ty::f32, rnd(Round::rm)), 0u);                     // +0 in every mode
  EXPECT_EQ(cvt(0x8000000000000000ull, Ty::s64, Ty::f32, rnd(Round::rn)), 0xdf000000u);
  EXPECT_EQ(cvt(0xffffffffffffffffull, Ty::u64, Ty::f64, rnd(Round::rn)), 0x43f0000000000000ull);
  EXPECT_EQ(cvt(0xffffffffffffffffull, Ty::u64, Ty::f64, rnd(Round::rz)), 0x43efffffffffffffull);
  EXPECT_EQ(cvt(70000, Ty::s32, Ty::f16, rnd(Round::rn)), 0x7c00u);            // past 65520: inf
  EXPECT_EQ(cvt(70000, Ty::s32, Ty::f16, rnd(Round::rz)), 0x7bffu);
  EXPECT_EQ(cvt(0xffu, Ty::u8, Ty::bf16, rnd(Round::rn)), 0x437fu);            // 255: 8 bits, exact
  EXPECT_EQ(cvt(257, Ty::u16, Ty::bf16, rnd(Round::rn)), 0x4380u);             // 257: tie -> 256
}

TEST(Convert, F32ToF16AndBf16) {
  EXPECT_EQ(cvt(0x3f800000u, Ty::f32, Ty::f16, rnd(Round::rn)), 0x3c00u);
  EXPECT_EQ(cvt(0x477fe000u, Ty::f32, Ty::f16, rnd(Round::rn)), 0x7bffu);  // 65504
  EXPECT_EQ(cvt(0x477ff000u, Ty::f32, Ty::f16, rnd(Round::rn)), 0x7c00u);  // 65520: tie -> inf
  EXPECT_EQ(cvt(0x477ff000u, Ty::f32, Ty::f16, rnd(Round::rz)), 0x7bffu);
  EXPECT_EQ(cvt(0x501502f9u, Ty::f32, Ty::f16, rnd(Round::rm)), 0x7bffu);  // 1e10
  EXPECT_EQ(cvt(0xd01502f9u, Ty::f32, Ty::f16, rnd(Round::rm)), 0xfc00u);
  EXPECT_EQ(cvt(0x501502f9u, Ty::f32, Ty::f16, satfinite()), 0x7bffu);
  EXPECT_EQ(cvt(0x7f800000u, Ty::f32, Ty::f16, satfinite()), 0x7bffu);
  EXPECT_EQ(cvt(0x7f800000u, Ty::f32, Ty::f16, rnd(Round::rz)), 0x7c00u);  // inf stays inf
  EXPECT_EQ(cvt(kF32Nan, Ty::f32, Ty::f16, rnd(Round::rn)), kNanF16);
  EXPECT_EQ(cvt(0x33800000u, Ty::f32, Ty::f16, rnd(Round::rn)), 0x0001u);  // 2^-24
  EXPECT_EQ(cvt(0x33000000u, Ty::f32, Ty::f16, rnd(Round::rn)), 0x0000u);  // 2^-25: tie -> 0
  EXPECT_EQ(cvt(0x33000000u, Ty::f32, Ty::f16, rnd(Round::rp)), 0x0001u);
  EXPECT_EQ(cvt(0xb3000000u, Ty::f32, Ty::f16, rnd(Round::rm)), 0x8001u);
  EXPECT_EQ(cvt(0xb3000000u, Ty::f32, Ty::f16, rnd(Round::rz)), 0x8000u);
  CvtMode relu = rnd(Round::rn);
  relu.relu = true;
  EXPECT_EQ(cvt(0xbf800000u, Ty::f32, Ty::f16, relu), 0x0000u);
  EXPECT_EQ(cvt(kF32Nan, Ty::f32, Ty::f16, relu), kNanF16);
  EXPECT_EQ(cvt(0x3f808000u, Ty::f32, Ty::bf16, rnd(Round::rn)), 0x3f80u);  // tie -> even
  EXPECT_EQ(cvt(0x3f818000u, Ty::f32, Ty::bf16, rnd(Round::rn)), 0x3f82u);
  EXPECT_EQ(cvt(0x3f818000u, Ty::f32, Ty::bf16, rnd(Round::rz)), 0x3f81u);
  EXPECT_EQ(cvt(0xbf808001u, Ty::f32, Ty::bf16, rnd(Round::rp)), 0xbf80u);
  EXPECT_EQ(cvt(0xbf808001u, Ty::f32, Ty::bf16, rnd(Round::rm)), 0xbf81u);
  EXPECT_EQ(cvt(0x7f7fffffu, Ty::f32, Ty::bf16, rnd(Round::rn)), 0x7f80u);  // FLT_MAX -> inf
  EXPECT_EQ(cvt(0x7f7fffffu, Ty::f32, Ty::bf16, rnd(Round::rz)), 0x7f7fu);
  EXPECT_EQ(cvt(0x00000001u, Ty::f32, Ty::bf16, rnd(Round::rp)), 0x0001u);
}

TEST(Convert, WideningAndF64ToF32) {
  EXPECT_EQ(cvt(0x0001u, Ty::f16, Ty::f32, CvtMode{}), 0x33800000u);
  EXPECT_EQ(cvt(0xfc00u, Ty::f16, Ty::f32, CvtMode{}), 0xff800000u);
  EXPECT_EQ(cvt(0x7e00u, Ty::f16, Ty::f32, CvtMode{}), kNanF32);
  EXPECT_EQ(cvt(0x0001u, Ty::bf16, Ty::f32, CvtMode{}), 0x00010000u);
  EXPECT_EQ(cvt(0x00000001u, Ty::f32, Ty::f64, CvtMode{}), 0x36a0000000000000ull);  // 2^-149
  CvtMode ftz;
  ftz.ftz = true;
  EXPECT_EQ(cvt(0x80000001u, Ty::f32, Ty::f64, ftz), 0x8000000000000000ull);
  EXPECT_EQ(cvt(0x3ff0000010000000ull, Ty::f64, Ty::f32, rnd(Round::rn)), 0x3f800000u);  // tie
  EXPECT_EQ(cvt(0x3ff0000010000000ull, Ty::f64, Ty::f32, rnd(Round::rp)), 0x3f800001u);
  EXPECT_EQ(cvt(0x7e37e43c8800759cull, Ty::f64, Ty::f32, rnd(Round::rn)), 0x7f800000u);  // 1e300
  EXPECT_EQ(cvt(0x7e37e43c8800759cull, Ty::f64, Ty::f32, rnd(Round::rz)), 0x7f7fffffu);
  EXPECT_EQ(cvt(0x01a56e1fc2f8f359ull, Ty::f64, Ty::f32, rnd(Round::rn)), 0u);           // 1e-300
  EXPECT_EQ(cvt(0x01a56e1fc2f8f359ull, Ty::f64, Ty::f32, rnd(Round::rp)), 1u);
  CvtMode ftz_rp = rnd(Round::rp);
  ftz_rp.ftz = true;
  EXPECT_EQ(cvt(0x01a56e1fc2f8f359ull, Ty::f64, Ty::f32, ftz_rp), 0u);  // subnormal result flushed
}

// Which NaN a float -> float conversion writes, from the GPU (golden vectors, sm_90).
TEST(Convert, NanPayloads) {
  // bf16 -> f32 widens the pattern: sign and payload kept, a signaling NaN stays signaling.
  EXPECT_EQ(cvt(0x7fc0u, Ty::bf16, Ty::f32, CvtMode{}), 0x7fc00000u);
  EXPECT_EQ(cvt(0x7f81u, Ty::bf16, Ty::f32, CvtMode{}), 0x7f810000u);
  EXPECT_EQ(cvt(0xffc0u, Ty::bf16, Ty::f32, CvtMode{}), 0xffc00000u);
  // f32 -> f64: quieted, sign and payload kept (shifted up 29 bits).
  EXPECT_EQ(cvt(0x7fc00000u, Ty::f32, Ty::f64, CvtMode{}), 0x7ff8000000000000ull);
  EXPECT_EQ(cvt(0x7f800001u, Ty::f32, Ty::f64, CvtMode{}), 0x7ff8000020000000ull);
  EXPECT_EQ(cvt(0x7f800002u, Ty::f32, Ty::f64, CvtMode{}), 0x7ff8000040000000ull);
  EXPECT_EQ(cvt(0xffc00000u, Ty::f32, Ty::f64, CvtMode{}), 0xfff8000000000000ull);
  // f64 -> f32 in every rounding: quieted, sign and the payload's top 22 bits kept.
  for (Round r : {Round::rn, Round::rz, Round::rm, Round::rp}) {
    EXPECT_EQ(cvt(0x7ff0000000000001ull, Ty::f64, Ty::f32, rnd(r)), 0x7fc00000u);
    EXPECT_EQ(cvt(0xfff8000000000000ull, Ty::f64, Ty::f32, rnd(r)), 0xffc00000u);
    EXPECT_EQ(cvt(0xffffffffffffffffull, Ty::f64, Ty::f32, rnd(r)), 0xffffffffu);
  }
  // f64 -> f64 rounding to an integral value: quieted, sign and payload kept.
  const CvtMode rmi = irnd(IntRound::rmi);
  EXPECT_EQ(cvt(0x7ff0000000000001ull, Ty::f64, Ty::f64, rmi), 0x7ff8000000000001ull);
  EXPECT_EQ(cvt(0xfff7ffffffffffffull, Ty::f64, Ty::f64, rmi), 0xffffffffffffffffull);
  EXPECT_EQ(cvt(0xfff8000000000000ull, Ty::f64, Ty::f64, rmi), 0xfff8000000000000ull);
  // Elsewhere the canonical NaN of the destination.
  EXPECT_EQ(cvt(0x7e00u, Ty::f16, Ty::f32, CvtMode{}), kNanF32);
  EXPECT_EQ(cvt(0xffc00000u, Ty::f32, Ty::f32, irnd(IntRound::rni)), kNanF32);
  EXPECT_EQ(cvt(0xffc00000u, Ty::f32, Ty::bf16, rnd(Round::rz)), kNanBF16);
  EXPECT_EQ(cvt(0x7f800001u, Ty::f32, Ty::f16, rnd(Round::rn)), kNanF16);
  // .sat still turns a NaN into +0.
  CvtMode sat64 = sat();
  sat64.irnd = IntRound::rni;
  EXPECT_EQ(cvt(0x7ff8000000000001ull, Ty::f64, Ty::f64, sat64), 0u);
}

TEST(Convert, RoundToIntegralFloat) {
  EXPECT_EQ(cvt(0x40200000u, Ty::f32, Ty::f32, irnd(IntRound::rni)), 0x40000000u);  // 2.5 -> 2
  EXPECT_EQ(cvt(0xbe99999au, Ty::f32, Ty::f32, irnd(IntRound::rzi)), 0x80000000u);  // -0.3 -> -0
  EXPECT_EQ(cvt(0xbe99999au, Ty::f32, Ty::f32, irnd(IntRound::rmi)), 0xbf800000u);  // -> -1
  EXPECT_EQ(cvt(0x7149f2cau, Ty::f32, Ty::f32, irnd(IntRound::rpi)), 0x7149f2cau);  // 1e30 stays
  EXPECT_EQ(cvt(0x7f800000u, Ty::f32, Ty::f32, irnd(IntRound::rni)), 0x7f800000u);
  EXPECT_EQ(cvt(0x3fe8000000000000ull, Ty::f64, Ty::f64, irnd(IntRound::rpi)), 0x3ff0000000000000ull);
  EXPECT_EQ(cvt(0x40490fdbu, Ty::f32, Ty::f32, sat()), 0x3f800000u);  // pi -> 1
  EXPECT_EQ(cvt(kF32Nan, Ty::f32, Ty::f32, sat()), 0u);
}

TEST(Convert, Tf32) {
  CvtMode rna;
  rna.rna = true;
  EXPECT_EQ(cvt(0x3f801000u, Ty::f32, Ty::tf32, rna), 0x3f802000u);            // 1 + 2^-11: tie away
  EXPECT_EQ(cvt(0x3f801000u, Ty::f32, Ty::tf32, rnd(Round::rn)), 0x3f800000u); // tie to even
  EXPECT_EQ(cvt(0x3f803000u, Ty::f32, Ty::tf32, rnd(Round::rn)), 0x3f804000u); // tie to even (up)
  EXPECT_EQ(cvt(0x3f801fffu, Ty::f32, Ty::tf32, rnd(Round::rz)), 0x3f800000u);
  EXPECT_EQ(cvt(0xbf801000u, Ty::f32, Ty::tf32, rna), 0xbf802000u);
  EXPECT_EQ(cvt(0x7f7fffffu, Ty::f32, Ty::tf32, rna), 0x7f800000u);            // rounds past max
  CvtMode rna_sf = rna;
  rna_sf.satfinite = true;
  EXPECT_EQ(cvt(0x7f7fffffu, Ty::f32, Ty::tf32, rna_sf), 0x7f7fe000u);
  EXPECT_EQ(cvt(0xff800000u, Ty::f32, Ty::tf32, rna_sf), 0xff7fe000u);
  EXPECT_EQ(cvt(0x00001000u, Ty::f32, Ty::tf32, rna), 0x00002000u);            // subnormal tie away
}

// tf32's NaN and .rna rules, from the GPU (golden vectors, sm_90).
TEST(Convert, Tf32NanAndBitRounding) {
  // .rn and .rz: any NaN gives 0x7fffe000.
  for (Round r : {Round::rn, Round::rz}) {
    EXPECT_EQ(cvt(0x7fc00000u, Ty::f32, Ty::tf32, rnd(r)), 0x7fffe000u);
    EXPECT_EQ(cvt(0x7f800001u, Ty::f32, Ty::tf32, rnd(r)), 0x7fffe000u);
    EXPECT_EQ(cvt(0xffbfffffu, Ty::f32, Ty::tf32, rnd(r)), 0x7fffe000u);
  }
  CvtMode rna;
  rna.rna = true;
  // .rna: inf and NaN truncated to the tf32 pattern, sign and payload kept.
  EXPECT_EQ(cvt(0x7f800001u, Ty::f32, Ty::tf32, rna), 0x7f800000u);
  EXPECT_EQ(cvt(0xff800001u, Ty::f32, Ty::tf32, rna), 0xff800000u);
  EXPECT_EQ(cvt(0xffc00001u, Ty::f32, Ty::tf32, rna), 0xffc00000u);
  EXPECT_EQ(cvt(0x7fc00000u, Ty::f32, Ty::tf32, rna), 0x7fc00000u);
  EXPECT_EQ(cvt(0xff7fffffu, Ty::f32, Ty::tf32, rna), 0xff800000u);  // -FLT_MAX rounds to -inf
  EXPECT_EQ(cvt(0x007fffffu, Ty::f32, Ty::tf32, rna), 0x00800000u);  // into the normals
  EXPECT_EQ(cvt(0x3f800100u, Ty::f32, Ty::tf32, rna), 0x3f800000u);
  // .rna.satfinite: overflow and inf give the largest finite value; a NaN, the pattern one
  // tf32 unit below its truncation.
  CvtMode rna_sf = rna;
  rna_sf.satfinite = true;
  EXPECT_EQ(cvt(0x7f800000u, Ty::f32, Ty::tf32, rna_sf), 0x7f7fe000u);
  EXPECT_EQ(cvt(0xff7fffffu, Ty::f32, Ty::tf32, rna_sf), 0xff7fe000u);
  EXPECT_EQ(cvt(0x7fc00000u, Ty::f32, Ty::tf32, rna_sf), 0x7fbfe000u);
  EXPECT_EQ(cvt(0xffc00000u, Ty::f32, Ty::tf32, rna_sf), 0xffbfe000u);
  EXPECT_EQ(cvt(0xffbfffffu, Ty::f32, Ty::tf32, rna_sf), 0xffbfc000u);
  EXPECT_EQ(cvt(0x7f800001u, Ty::f32, Ty::tf32, rna_sf), 0x7f7fe000u);
  EXPECT_EQ(cvt(0x477ff000u, Ty::f32, Ty::tf32, rna_sf), 0x47800000u);  // finite: rounded as .rna
}

TEST(Convert, Fp8WithSatfinite) {
  EXPECT_EQ(cvt(0x3f800000u, Ty::f32, Ty::e4m3, satfinite()), 0x38u);  // 1.0
  EXPECT_EQ(cvt(0x43e00000u, Ty::f32, Ty::e4m3, satfinite()), 0x7eu);  // 448 = max
  EXPECT_EQ(cvt(0x43e80000u, Ty::f32, Ty::e4m3, satfinite()), 0x7eu);  // 464 (the NaN slot) -> max
  EXPECT_EQ(cvt(0x447a0000u, Ty::f32, Ty::e4m3, satfinite()), 0x7eu);  // 1000
  EXPECT_EQ(cvt(0xff800000u, Ty::f32, Ty::e4m3, satfinite()), 0xfeu);  // -inf -> -448
  EXPECT_EQ(cvt(kF32Nan, Ty::f32, Ty::e4m3, satfinite()), 0x7fu);
  EXPECT_EQ(cvt(0x3b000000u, Ty::f32, Ty::e4m3, satfinite()), 0x01u);  // 2^-9, the smallest
  EXPECT_EQ(cvt(0x3a800000u, Ty::f32, Ty::e4m3, satfinite()), 0x00u);  // 2^-10: tie -> 0
  EXPECT_EQ(cvt(0x3f880000u, Ty::f32, Ty::e4m3, satfinite()), 0x38u);  // 1.0625: tie -> 1 (even)
  EXPECT_EQ(cvt(0x3f980000u, Ty::f32, Ty::e4m3, satfinite()), 0x3au);  // 1.1875: tie -> 1.25 (even)
  EXPECT_EQ(cvt(0x3f900000u, Ty::f32, Ty::e4m3, satfinite()), 0x39u);  // 1.125 is exact
  EXPECT_EQ(cvt(0xbf800000u, Ty::f32, Ty::e4m3, satfinite(true)), 0x00u);  // .relu
  EXPECT_EQ(cvt(kF32Nan, Ty::f32, Ty::e4m3, satfinite(true)), 0x7fu);
  EXPECT_EQ(cvt(0x3f800000u, Ty::f32, Ty::e5m2, satfinite()), 0x3cu);
  EXPECT_EQ(cvt(0x47600000u, Ty::f32, Ty::e5m2, satfinite()), 0x7bu);  // 57344
  EXPECT_EQ(cvt(0x47700000u, Ty::f32, Ty::e5m2, satfinite()), 0x7bu);  // 61440: tie, saturates
  EXPECT_EQ(cvt(0x7f800000u, Ty::f32, Ty::e5m2, satfinite()), 0x7bu);
  EXPECT_EQ(cvt(kF32Nan, Ty::f32, Ty::e5m2, satfinite()), 0x7fu);
  EXPECT_EQ(cvt(0x37800000u, Ty::f32, Ty::e5m2, satfinite()), 0x01u);  // 2^-16
  // Back to f16 (exact): e4m3 0x7e = 448, 0x01 = 2^-9; e5m2 is f16's top byte.
  EXPECT_EQ(cvt(0x7eu, Ty::e4m3, Ty::f16, CvtMode{}), 0x5f00u);
  EXPECT_EQ(cvt(0x01u, Ty::e4m3, Ty::f16, CvtMode{}), 0x1800u);
  EXPECT_EQ(cvt(0x7fu, Ty::e4m3, Ty::f16, CvtMode{}), kNanF16);
  EXPECT_EQ(cvt(0xfbu, Ty::e5m2, Ty::f16, CvtMode{}), 0xfb00u);
  EXPECT_EQ(cvt(0x7cu, Ty::e5m2, Ty::f16, CvtMode{}), 0x7c00u);
}

TEST(Convert, Fp6Fp4AndUe8m0) {
  // e2m1: 0 .5 1 1.5 2 3 4 6 at codes 0..7.
  EXPECT_EQ(cvt(0x3f800000u, Ty::f32, Ty::e2m1, satfinite()), 0x2u);
  EXPECT_EQ(cvt(0x40c00000u, Ty::f32, Ty::e2m1, satfinite()), 0x7u);  // 6
  EXPECT_EQ(cvt(0x40a00000u, Ty::f32, Ty::e2m1, satfinite()), 0x6u);  // 5: tie -> 4 (even)
  EXPECT_EQ(cvt(0x40e00000u, Ty::f32, Ty::e2m1, satfinite()), 0x7u);  // 7 -> 6
  EXPECT_EQ(cvt(0x3e800000u, Ty::f32, Ty::e2m1, satfinite()), 0x0u);  // 0.25: tie -> 0
  EXPECT_EQ(cvt(0xc0400000u, Ty::f32, Ty::e2m1, satfinite()), 0xdu);  // -3
  EXPECT_EQ(cvt(0xff800000u, Ty::f32, Ty::e2m1, satfinite()), 0xfu);  // -inf -> -6
  // e2m3: max 7.5 = 0x1f; 1.0 = 0x08. e3m2: max 28 = 0x1f; 1.0 = 0x0c.
  EXPECT_EQ(cvt(0x3f800000u, Ty::f32, Ty::e2m3, satfinite()), 0x08u);
  EXPECT_EQ(cvt(0x41000000u, Ty::f32, Ty::e2m3, satfinite()), 0x1fu);  // 8 -> 7.5
  EXPECT_EQ(cvt(0x3f800000u, Ty::f32, Ty::e3m2, satfinite()), 0x0cu);
  EXPECT_EQ(cvt(0x42000000u, Ty::f32, Ty::e3m2, satfinite()), 0x1fu);  // 32 -> 28
  EXPECT_EQ(cvt(0x3d800000u, Ty::f32, Ty::e3m2, satfinite()), 0x01u);  // 2^-4, the smallest
  // ue8m0: 2^(e - 127).
  CvtMode rz = rnd(Round::rz), rp = rnd(Round::rp);
  rz.satfinite = rp.satfinite = true;
  EXPECT_EQ(cvt(0x3f800000u, Ty::f32, Ty::ue8m0, rz), 0x7fu);
  EXPECT_EQ(cvt(0x3fc00000u, Ty::f32, Ty::ue8m0, rz), 0x7fu);  // 1.5 -> 1
  EXPECT_EQ(cvt(0x3fc00000u, Ty::f32, Ty::ue8m0, rp), 0x80u);  // 1.5 -> 2
  EXPECT_EQ(cvt(0x3f800000u, Ty::f32, Ty::ue8m0, rp), 0x7fu);  // exact
  EXPECT_EQ(cvt(0x00400000u, Ty::f32, Ty::ue8m0, rz), 0x00u);  // 2^-127
  EXPECT_EQ(cvt(kF32Nan, Ty::f32, Ty::ue8m0, rz), 0xffu);
  EXPECT_EQ(cvt(0x7f800000u, Ty::f32, Ty::ue8m0, rz), 0xfeu);
  EXPECT_EQ(cvt(0x7f7fffffu, Ty::f32, Ty::ue8m0, rp), 0xfeu);  // 2^128 saturates
  EXPECT_EQ(cvt(0x7fu, Ty::ue8m0, Ty::bf16, CvtMode{}), 0x3f80u);
  EXPECT_EQ(cvt(0x00u, Ty::ue8m0, Ty::bf16, CvtMode{}), 0x0040u);  // 2^-127: bf16 subnormal
  EXPECT_EQ(cvt(0xffu, Ty::ue8m0, Ty::bf16, CvtMode{}), kNanBF16);
}

// ---- random cross-checks against host conversions -------------------------------------------

// A sign-magnitude encoding one step up (toward +inf) or down.
uint64_t step(uint64_t bits, uint64_t sign_bit, bool up) {
  const bool neg = (bits & sign_bit) != 0;
  const uint64_t mag = bits & (sign_bit - 1);
  if (mag == 0) return up ? 1 : (sign_bit | 1);
  return (up != neg) ? bits + 1 : bits - 1;
}

// Turns the host's round-to-nearest result into the directed one by comparing with the exact
// source value x (every value compared is exact in long double).
template <typename Dec>
uint64_t directed(uint64_t rn_bits, long double x, Round mode, uint64_t sign_bit, Dec dec) {
  const long double r = dec(rn_bits);
  switch (mode) {
    case Round::rn: return rn_bits;
    case Round::rz: return std::fabs(r) > std::fabs(x) ? step(rn_bits, sign_bit, r < 0) : rn_bits;
    case Round::rp: return r < x ? step(rn_bits, sign_bit, true) : rn_bits;
    case Round::rm: return r > x ? step(rn_bits, sign_bit, false) : rn_bits;
  }
  return rn_bits;
}

bool finite32(uint32_t b) { return (b & 0x7f800000u) != 0x7f800000u; }

TEST(Convert, FloatNarrowingMatchesHostInEveryMode) {
  std::mt19937_64 rng(2027);
  auto dec16 = [](uint64_t b) { return static_cast<long double>(std::bit_cast<_Float16>(static_cast<uint16_t>(b))); };
  auto decbf = [](uint64_t b) { return static_cast<long double>(std::bit_cast<float>(static_cast<uint32_t>(b << 16))); };
  auto dec32 = [](uint64_t b) { return static_cast<long double>(std::bit_cast<float>(static_cast<uint32_t>(b))); };
  int bad = 0;
  for (int i = 0; i < 100000; ++i) {
    // f32 sources spread over f16's range (exponents 100..150) and beyond.
    uint32_t f = static_cast<uint32_t>(rng());
    if (i % 4 != 0) f = (f & 0x807fffffu) | (static_cast<uint32_t>(96 + rng() % 60) << 23);
    const uint64_t d = (i % 8 == 0) ? rng() : ((rng() & 0x800fffffffffffffull) | (uint64_t{800 + rng() % 450} << 52));
    const bool d_ok = !std::isnan(std::bit_cast<double>(d)) && !std::isinf(std::bit_cast<double>(d));
    if (!finite32(f) || !d_ok) continue;
    const long double x = std::bit_cast<float>(f);
    const uint16_t h_rn = std::bit_cast<uint16_t>(static_cast<_Float16>(std::bit_cast<float>(f)));
    const uint32_t bf_rn = (f + 0x7fffu + ((f >> 16) & 1u)) >> 16;  // nearest-even on the bits
    const uint32_t s_rn = std::bit_cast<uint32_t>(static_cast<float>(std::bit_cast<double>(d)));
    for (Round m : {Round::rn, Round::rz, Round::rm, Round::rp}) {
      bad += cvt(f, Ty::f32, Ty::f16, rnd(m)) != directed(h_rn, x, m, 0x8000u, dec16);
      bad += cvt(f, Ty::f32, Ty::bf16, rnd(m)) != directed(bf_rn, x, m, 0x8000u, decbf);
      bad += cvt(d, Ty::f64, Ty::f32, rnd(m)) != directed(s_rn, std::bit_cast<double>(d), m, 0x80000000u, dec32);
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(Convert, IntegerToFloatMatchesHostInEveryMode) {
  std::mt19937_64 rng(4099);
  auto dec32 = [](uint64_t b) { return static_cast<long double>(std::bit_cast<float>(static_cast<uint32_t>(b))); };
  auto dec64 = [](uint64_t b) { return static_cast<long double>(std::bit_cast<double>(b)); };
  int bad = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    const int64_t sv = (i % 2) ? -static_cast<int64_t>(v >> 1) : static_cast<int64_t>(v >> 1);
    for (Round m : {Round::rn, Round::rz, Round::rm, Round::rp}) {
      bad += cvt(v, Ty::u64, Ty::f32, rnd(m)) !=
             directed(std::bit_cast<uint32_t>(static_cast<float>(v)), static_cast<long double>(v), m, 0x80000000u, dec32);
      bad += cvt(static_cast<uint64_t>(sv), Ty::s64, Ty::f64, rnd(m)) !=
             directed(std::bit_cast<uint64_t>(static_cast<double>(sv)), static_cast<long double>(sv), m,
                      0x8000000000000000ull, dec64);
      const int32_t s32 = static_cast<int32_t>(sv);
      bad += cvt(static_cast<uint32_t>(s32), Ty::s32, Ty::f32, rnd(m)) !=
             directed(std::bit_cast<uint32_t>(static_cast<float>(s32)), static_cast<long double>(s32), m, 0x80000000u,
                      dec32);
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(Convert, FloatToIntegerMatchesHostRounding) {
  std::mt19937_64 rng(7);
  int bad = 0;
  auto clamp32 = [](double r) -> int64_t {
    if (std::isnan(r)) return 0;
    if (r >= 2147483647.0) return INT32_MAX;
    if (r <= -2147483648.0) return INT32_MIN;
    return static_cast<int64_t>(r);
  };
  for (int i = 0; i < 100000; ++i) {
    uint32_t f = static_cast<uint32_t>(rng());
    if (i % 2) f = (f & 0x807fffffu) | (static_cast<uint32_t>(110 + rng() % 50) << 23);  // |x| in 2^-17..2^32
    const double x = std::bit_cast<float>(f);
    const std::pair<IntRound, double> rows[] = {{IntRound::rni, std::nearbyint(x)}, {IntRound::rzi, std::trunc(x)},
                                                {IntRound::rmi, std::floor(x)}, {IntRound::rpi, std::ceil(x)}};
    for (auto [r, want] : rows) {
      bad += static_cast<int64_t>(static_cast<int32_t>(cvt(f, Ty::f32, Ty::s32, irnd(r)))) != clamp32(want);
      const uint64_t u = cvt(f, Ty::f32, Ty::u32, irnd(r));
      const double uw = std::isnan(want) ? 0 : std::clamp(want, 0.0, 4294967295.0);
      bad += u != static_cast<uint64_t>(uw);
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace ptxforge::emu::alu
