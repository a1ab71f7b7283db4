// Integer and bit operations of the CPU engine's ALU, against values worked by hand from the
// PTX ISA's pseudocode (shift clamps, prmt modes, bfe/bfi/bfind edge cases, dp4a/dp2a).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "emu/alu.h"

namespace ptxforge::emu::alu {
namespace {

TEST(AluInt, MulHiAndWide) {
  EXPECT_EQ(mul_hi_u32(0xffffffffu, 0xffffffffu), 0xfffffffeu);  // (2^32-1)^2 = 2^64 - 2^33 + 1
  EXPECT_EQ(mul_hi_s32(-1, -1), 0);
  EXPECT_EQ(mul_hi_s32(INT32_MIN, INT32_MIN), 0x40000000);  // 2^62
  EXPECT_EQ(mul_hi_s32(INT32_MIN, 1), -1);
  EXPECT_EQ(mul_hi_u64(0xffffffffffffffffull, 2), 1u);
  EXPECT_EQ(mul_hi_s64(INT64_MIN, -1), 0);  // +2^63: high word 0
  EXPECT_EQ(mul_hi_s64(INT64_MIN, 2), -1);  // -2^64
}

TEST(AluInt, ShiftCountsAtOrPastTheWidthClamp) {
  struct Row { uint64_t a; uint32_t n; int bits; uint64_t shl_r, shr_u_r, shr_s_r; };
  const Row rows[] = {
      {0x80000001u, 0, 32, 0x80000001u, 0x80000001u, 0x80000001u},
      {0x80000001u, 1, 32, 0x00000002u, 0x40000000u, 0xc0000000u},
      {0x80000001u, 31, 32, 0x80000000u, 0x1u, 0xffffffffu},
      {0x80000001u, 32, 32, 0, 0, 0xffffffffu},
      {0x80000001u, 33, 32, 0, 0, 0xffffffffu},
      {0x7fffffffu, 0xffffffffu, 32, 0, 0, 0},
      {0x8001u, 16, 16, 0, 0, 0xffffu},
      {0x8001u, 4, 16, 0x0010u, 0x0800u, 0xf800u},
      {0x8000000000000000ull, 64, 64, 0, 0, 0xffffffffffffffffull},
      {0x8000000000000000ull, 63, 64, 0, 1, 0xffffffffffffffffull},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(shl(r.a, r.n, r.bits), r.shl_r) << std::hex << r.a << " " << r.n;
    EXPECT_EQ(shr_u(r.a, r.n, r.bits), r.shr_u_r) << std::hex << r.a << " " << r.n;
    EXPECT_EQ(shr_s(r.a, r.n, r.bits), r.shr_s_r) << std::hex << r.a << " " << r.n;
  }
}

TEST(AluInt, FunnelShiftWrapAndClamp) {
  // {hi:lo} = 0x89abcdef_01234567
  const uint32_t lo = 0x01234567u, hi = 0x89abcdefu;
  EXPECT_EQ(shf_l(lo, hi, 8, true), 0xabcdef01u);
  EXPECT_EQ(shf_r(lo, hi, 8, true), 0xef012345u);
  EXPECT_EQ(shf_l(lo, hi, 40, true), 0xabcdef01u);  // wrap: 40 & 31 = 8
  EXPECT_EQ(shf_l(lo, hi, 40, false), lo);          // clamp: 32 gives lo
  EXPECT_EQ(shf_r(lo, hi, 40, false), hi);          // clamp: 32 gives hi
  EXPECT_EQ(shf_l(lo, hi, 32, true), hi);           // wrap: 0
  EXPECT_EQ(shf_r(lo, hi, 0, false), lo);
}

TEST(AluInt, PrmtDefaultAndModes) {
  const uint32_t a = 0x03020100u, b = 0x07060504u;  // byte i holds i
  EXPECT_EQ(prmt(a, b, 0x3210, 0), 0x03020100u);
  EXPECT_EQ(prmt(a, b, 0x7654, 0), 0x07060504u);
  EXPECT_EQ(prmt(a, b, 0x0123, 0), 0x00010203u);
  EXPECT_EQ(prmt(a, b, 0xffff7654, 0), 0x07060504u);  // only the low 16 bits select
  // Bit 3 of a nibble replicates the selected byte's sign: byte 0 = 0x80 -> 0xff.
  EXPECT_EQ(prmt(0x00000080u, 0, 0x0008, 0), 0x808080ffu);
  EXPECT_EQ(prmt(0x00000070u, 0, 0x8888, 0), 0x00000000u);
  // Modes 1..6 = f4e b4e rc8 ecl ecr rc16, selector c[1:0].
  EXPECT_EQ(prmt(a, b, 1, 1), 0x04030201u);
  EXPECT_EQ(prmt(a, b, 3, 1), 0x06050403u);
  EXPECT_EQ(prmt(a, b, 0, 2), 0x05060700u);
  EXPECT_EQ(prmt(a, b, 3, 2), 0x00010203u);
  EXPECT_EQ(prmt(a, b, 2, 3), 0x02020202u);
  EXPECT_EQ(prmt(a, b, 1, 4), 0x03020101u);
  EXPECT_EQ(prmt(a, b, 2, 5), 0x02020100u);
  EXPECT_EQ(prmt(a, b, 1, 6), 0x03020302u);
  EXPECT_EQ(prmt(a, b, 0x6, 6), 0x01000100u);  // only c[1:0] counts
  // GPU-observed results published with a PTX test suite for a = 0x809122b3,
  // b = 0xc455e6ff, c = 0x8f94 (c[1:0] = 0): f4e, b4e, ecl, ecr, rc16.
  EXPECT_EQ(prmt(0x809122b3u, 0xc455e6ffu, 0x8f94u, 1), 0x809122b3u);
  EXPECT_EQ(prmt(0x809122b3u, 0xc455e6ffu, 0x8f94u, 2), 0xe655c4b3u);
  EXPECT_EQ(prmt(0x809122b3u, 0xc455e6ffu, 0x8f94u, 4), 0x809122b3u);
  EXPECT_EQ(prmt(0x809122b3u, 0xc455e6ffu, 0x8f94u, 5), 0xb3b3b3b3u);
  EXPECT_EQ(prmt(0x809122b3u, 0xc455e6ffu, 0x8f94u, 6), 0x22b322b3u);
}

TEST(AluInt, BitFieldExtract) {
  EXPECT_EQ(bfe_u(0xf0f0f0f0u, 4, 8, 32), 0x0fu);
  EXPECT_EQ(bfe_s(0xf0f0f0f0u, 4, 8, 32), 0x0000000fu);
  EXPECT_EQ(bfe_s(0x00000f00u, 8, 4, 32), 0xffffffffu);   // field 0b1111 sign-extends
  EXPECT_EQ(bfe_u(0xdeadbeefu, 7, 0, 32), 0u);            // len 0
  EXPECT_EQ(bfe_s(0xdeadbeefu, 7, 0, 32), 0u);            // len 0: sbit 0
  EXPECT_EQ(bfe_u(0x80000000u, 28, 8, 32), 0x8u);         // past the msb: zeros
  EXPECT_EQ(bfe_s(0x80000000u, 28, 8, 32), 0xfffffff8u);  // past the msb: sign = a[31]
  EXPECT_EQ(bfe_u(0xffffffffu, 40, 4, 32), 0u);           // start past the msb
  EXPECT_EQ(bfe_s(0xffffffffu, 40, 4, 32), 0xffffffffu);  // sbit = a[min(43, 31)]
  EXPECT_EQ(bfe_u(0xffu, 0x100, 0x104, 32), 0xfu);        // pos, len mod 256: (0, 4)
  EXPECT_EQ(bfe_s(0x8000000000000000ull, 60, 4, 64), 0xfffffffffffffff8ull);
}

TEST(AluInt, BitFieldInsert) {
  EXPECT_EQ(bfi(0xabu, 0x12345678u, 8, 8, 32), 0x1234ab78u);
  EXPECT_EQ(bfi(0xffffu, 0, 28, 8, 32), 0xf0000000u);  // bits past the msb dropped
  EXPECT_EQ(bfi(0xffffu, 0x5u, 0, 0, 32), 0x5u);       // len 0: b unchanged
  EXPECT_EQ(bfi(0x1u, 0x0u, 63, 1, 64), 0x8000000000000000ull);
  EXPECT_EQ(bfi(0x0u, 0xffffffffu, 0x104, 4, 32), 0xffffff0fu);  // pos mod 256 = 4
}

// Instances recorded on an sm_90 GPU (tests/emu/golden): the 64-bit forms do not take pos and
// len mod 256, they clamp the whole value.
TEST(AluInt, SixtyFourBitFieldsClampPosAndLenAsTheGpuDoes) {
  EXPECT_EQ(bfe_u(0xffffffffffffffffull, 8, 0x100, 64), 0x00ffffffffffffffull);  // len 256: to the msb
  EXPECT_EQ(bfe_u(0xffffffffffffffffull, 0x107, 7, 64), 0u);                     // pos 263: past the msb
  EXPECT_EQ(bfe_u(0x7fu, 0xffffffffu, 0x10, 64), 0u);
  EXPECT_EQ(bfe_s(0x8000000000000001ull, 0x1a, 0x158, 64), 0xffffffe000000000ull);
  EXPECT_EQ(bfe_s(0xffffffffffffffe3ull, 0x100, 0x112, 64), 0xffffffffffffffffull);  // sbit = a[63]
  EXPECT_EQ(bfi(0x28u, 0xe168c853c4ab970aull, 0x1f, 0x100, 64), 0x1444ab970aull);
  EXPECT_EQ(bfi(0xffffffffffffffffull, 0x8000u, 0x100, 0x1f, 64), 0x8000u);
  EXPECT_EQ(bfi(0x2u, 0x7fffffffffffffffull, 1, 0xffffffffu, 64), 0x5u);
}

// The manual's pseudocode for bfe and bfi, bit by bit, against the engine on random operands
// with pos and len over their whole 0..255 range (and garbage above bit 7).
TEST(AluInt, BfeBfiMatchTheManualsBitLoops) {
  std::mt19937_64 rng(0xbfe);
  auto bit = [](uint64_t v, unsigned i) { return (v >> i) & 1u; };
  for (int i = 0; i < 200000; ++i) {
    const int bits = (i % 2) ? 64 : 32;
    const unsigned msb = static_cast<unsigned>(bits) - 1;
    const uint64_t a = bits == 32 ? (rng() & 0xffffffffu) : rng(), b = bits == 32 ? (rng() & 0xffffffffu) : rng();
    const uint32_t pos_in = static_cast<uint32_t>(rng()), len_in = static_cast<uint32_t>(rng());
    const uint32_t pos = (i % 3) ? pos_in % 72 : pos_in & 0xffu, len = (i % 5) ? len_in % 72 : len_in & 0xffu;
    const uint32_t pos_arg = pos | (pos_in & 0xffffff00u), len_arg = len | (len_in & 0xffffff00u);
    // The 32-bit forms read pos and len mod 256; the 64-bit forms read the whole u32 (the GPU's
    // golden vectors, alu_int.cpp).
    const uint64_t p = bits == 32 ? pos : pos_arg, l = bits == 32 ? len : len_arg;
    uint64_t du = 0, ds = 0, f = b;
    const uint64_t sbit = l == 0 ? 0 : bit(a, static_cast<unsigned>(std::min<uint64_t>(p + l - 1, msb)));
    for (unsigned k = 0; k <= msb; ++k) {
      const bool in = k < l && p + k <= msb;
      du |= (in ? bit(a, static_cast<unsigned>(p + k)) : 0) << k;
      ds |= (in ? bit(a, static_cast<unsigned>(p + k)) : sbit) << k;
    }
    for (unsigned k = 0; k < l && p + k <= msb; ++k) {
      f = (f & ~(uint64_t{1} << (p + k))) | (bit(a, k) << (p + k));
    }
    ASSERT_EQ(bfe_u(a, pos_arg, len_arg, bits), du) << std::hex << a << " " << pos_arg << " " << len_arg;
    ASSERT_EQ(bfe_s(a, pos_arg, len_arg, bits), ds) << std::hex << a << " " << pos_arg << " " << len_arg;
    ASSERT_EQ(bfi(a, b, pos_arg, len_arg, bits), f) << std::hex << a << " " << pos_arg << " " << len_arg;
  }
}

TEST(AluInt, Bfind) {
  EXPECT_EQ(bfind(0, 32, false, false), 0xffffffffu);
  EXPECT_EQ(bfind(0, 32, false, true), 0xffffffffu);
  EXPECT_EQ(bfind(1, 32, false, false), 0u);
  EXPECT_EQ(bfind(1, 32, false, true), 31u);
  EXPECT_EQ(bfind(0x80000000u, 32, false, false), 31u);
  EXPECT_EQ(bfind(0x80000000u, 32, true, false), 30u);   // ~a = 0x7fffffff
  EXPECT_EQ(bfind(0xffffffffu, 32, true, false), 0xffffffffu);  // -1: no non-sign bit
  EXPECT_EQ(bfind(0xfffffffeu, 32, true, false), 0u);
  EXPECT_EQ(bfind(0x10, 64, false, true), 59u);
}

TEST(AluInt, BrevPopcClzLop3) {
  EXPECT_EQ(brev(0x00000001u, 32), 0x80000000u);
  EXPECT_EQ(brev(0x12345678u, 32), 0x1e6a2c48u);
  EXPECT_EQ(brev(1, 64), 0x8000000000000000ull);
  EXPECT_EQ(popc(0xffffffffu, 32), 32u);
  EXPECT_EQ(popc(0xffffffffffffffffull, 64), 64u);
  EXPECT_EQ(clz(0, 32), 32u);
  EXPECT_EQ(clz(0, 64), 64u);
  EXPECT_EQ(clz(1, 32), 31u);
  EXPECT_EQ(clz(0x80000000u, 32), 0u);
  EXPECT_EQ(clz(0x80000000u, 64), 32u);
  const uint32_t a = 0xf0f0f0f0u, b = 0xccccccccu, c = 0xaaaaaaaau;
  EXPECT_EQ(lop3(a, b, c, 0xf0), a);
  EXPECT_EQ(lop3(a, b, c, 0xcc), b);
  EXPECT_EQ(lop3(a, b, c, 0xaa), c);
  EXPECT_EQ(lop3(a, b, c, 0x80), a & b & c);
  EXPECT_EQ(lop3(a, b, c, 0x96), a ^ b ^ c);
  EXPECT_EQ(lop3(0x12345678u, 0x0f0f0f0fu, 0xffff0000u, 0xf0 & (0xcc | 0xaa)),
            0x12345678u & (0x0f0f0f0fu | 0xffff0000u));
  EXPECT_EQ(lop3(a, b, c, 0x00), 0u);
  EXPECT_EQ(lop3(a, b, c, 0xff), 0xffffffffu);
}

TEST(AluInt, DotProducts) {
  // dp4a.u32.u32: 0xff*0xff*4 + 1
  EXPECT_EQ(static_cast<uint32_t>(dp4a(0xffffffffu, 0xffffffffu, 1, false, false)), 4u * 255u * 255u + 1u);
  EXPECT_EQ(dp4a(0xffffffffu, 0xffffffffu, 0, true, true), 4);      // (-1)(-1) x 4
  EXPECT_EQ(dp4a(0xffffffffu, 0x01010101u, 0, true, false), -4);
  EXPECT_EQ(dp4a(0x80808080u, 0x80808080u, 0, true, true), 4 * 16384);
  EXPECT_EQ(dp4a(0x80808080u, 0x80808080u, INT32_MAX, true, true), INT32_MIN + 65535);  // wraps
  // dp2a: a = {0x8000, 0x0002} (halves), b bytes {1, 2, 3, 4}
  EXPECT_EQ(dp2a(0x00028000u, 0x04030201u, 0, true, false, false), -32768 * 1 + 2 * 2);
  EXPECT_EQ(dp2a(0x00028000u, 0x04030201u, 0, true, false, true), -32768 * 3 + 2 * 4);
  EXPECT_EQ(dp2a(0x00028000u, 0x04030201u, 10, false, false, true), 32768 * 3 + 2 * 4 + 10);
  EXPECT_EQ(dp2a(0x0001ffffu, 0xff00ff00u, 0, true, true, false), (-1) * 0 + 1 * (-1));
}

TEST(AluInt, SaturatingAddSub) {
  EXPECT_EQ(add_sat_s32(INT32_MAX, 1), INT32_MAX);
  EXPECT_EQ(add_sat_s32(INT32_MIN, -1), INT32_MIN);
  EXPECT_EQ(add_sat_s32(-5, 3), -2);
  EXPECT_EQ(sub_sat_s32(INT32_MIN, 1), INT32_MIN);
  EXPECT_EQ(sub_sat_s32(0, INT32_MIN), INT32_MAX);
  EXPECT_EQ(sub_sat_s32(INT32_MAX, -1), INT32_MAX);
}

TEST(AluInt, Comparisons) {
  EXPECT_TRUE(cmp_int(0xffffffffu, 0, Cmp::lt, 32, true));   // -1 < 0
  EXPECT_FALSE(cmp_int(0xffffffffu, 0, Cmp::lt, 32, false));
  EXPECT_TRUE(cmp_int(0xffffffffu, 0, Cmp::hi, 32, true));   // hi is unsigned even on .s32
  EXPECT_TRUE(cmp_int(0x80, 0x7f, Cmp::lt, 8, true));        // -128 < 127
  EXPECT_TRUE(cmp_int(0x1ffffffffull, 0xffffffffu, Cmp::eq, 32, false));  // high bits ignored
  EXPECT_TRUE(cmp_int(0x8000000000000000ull, 0, Cmp::le, 64, true));
  EXPECT_TRUE(cmp_int(5, 5, Cmp::ge, 32, true));
  EXPECT_TRUE(cmp_int(5, 5, Cmp::ls, 32, true));
  EXPECT_FALSE(cmp_int(5, 5, Cmp::ne, 32, true));
}

}  // namespace
}  // namespace ptxforge::emu::alu
