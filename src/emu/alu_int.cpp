// Integer and bit operations (alu.h), exact by construction. Each follows the pseudocode of
// its PTX ISA section (9.7.1 integer arithmetic, 9.7.8 logic and shift); widths other than 32
// and 64 come in as `bits` and values are kept in the low bits of a uint64_t.
#include "emu/alu.h"

namespace ptxforge::emu::alu {
namespace {

using i128 = __int128;
using u128 = unsigned __int128;

uint64_t mask_of(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

int64_t sext(uint64_t a, int bits) {
  if (bits >= 64) return static_cast<int64_t>(a);
  const uint64_t m = uint64_t{1} << (bits - 1);
  a &= mask_of(bits);
  return static_cast<int64_t>((a ^ m) - m);
}

}  // namespace

uint32_t mul_hi_u32(uint32_t a, uint32_t b) { return static_cast<uint32_t>((uint64_t{a} * b) >> 32); }
int32_t mul_hi_s32(int32_t a, int32_t b) {
  return static_cast<int32_t>((int64_t{a} * int64_t{b}) >> 32);
}
uint64_t mul_hi_u64(uint64_t a, uint64_t b) { return static_cast<uint64_t>((u128{a} * b) >> 64); }
int64_t mul_hi_s64(int64_t a, int64_t b) { return static_cast<int64_t>((i128{a} * i128{b}) >> 64); }

// shl, shr: "Shift amounts greater than the register width N are clamped to N" (PTX ISA shl/shr).
uint64_t shl(uint64_t a, uint32_t count, int bits) {
  if (count >= static_cast<uint32_t>(bits)) return 0;
  return (a << count) & mask_of(bits);
}

uint64_t shr_u(uint64_t a, uint32_t count, int bits) {
  a &= mask_of(bits);
  if (count >= static_cast<uint32_t>(bits)) return 0;
  return a >> count;
}

uint64_t shr_s(uint64_t a, uint32_t count, int bits) {
  const int64_t v = sext(a, bits);
  const uint32_t n = count >= static_cast<uint32_t>(bits) ? static_cast<uint32_t>(bits) - 1 : count;
  return static_cast<uint64_t>(v >> n) & mask_of(bits);
}

// shf (PTX ISA shf): n = .clamp ? min(c, 32) : c & 0x1f; shf.l gives the high word of
// {b:a} << n, shf.r the low word of {b:a} >> n.
uint32_t shf_l(uint32_t lo, uint32_t hi, uint32_t count, bool wrap) {
  const uint32_t n = wrap ? (count & 31u) : (count > 32u ? 32u : count);
  const uint64_t v = (uint64_t{hi} << 32) | lo;
  return static_cast<uint32_t>((v << n) >> 32);
}

uint32_t shf_r(uint32_t lo, uint32_t hi, uint32_t count, bool wrap) {
  const uint32_t n = wrap ? (count & 31u) : (count > 32u ? 32u : count);
  const uint64_t v = (uint64_t{hi} << 32) | lo;
  return static_cast<uint32_t>(v >> n);
}

// prmt (PTX ISA prmt): bytes 0-3 of a and 4-7 of b. Default mode: each selector nibble picks
// a byte (low 3 bits) and, with bit 3 set, replicates that byte's sign bit. The other modes
// use c[1:0] and the manual's table, rows below written as d.b3 d.b2 d.b1 d.b0.
uint32_t prmt(uint32_t a, uint32_t b, uint32_t selector, uint8_t mode) {
  const uint64_t src = (uint64_t{b} << 32) | a;
  auto byte = [&](unsigned i) { return static_cast<uint32_t>((src >> (8 * (i & 7u))) & 0xffu); };
  if (mode == 0) {
    uint32_t d = 0;
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned nib = (selector >> (4 * i)) & 0xfu;
      uint32_t v = byte(nib & 7u);
      if ((nib & 8u) != 0) v = (v & 0x80u) != 0 ? 0xffu : 0u;
      d |= v << (8 * i);
    }
    return d;
  }
  static constexpr uint8_t kTable[6][4][4] = {
      // f4e
      {{3, 2, 1, 0}, {4, 3, 2, 1}, {5, 4, 3, 2}, {6, 5, 4, 3}},
      // b4e
      {{5, 6, 7, 0}, {6, 7, 0, 1}, {7, 0, 1, 2}, {0, 1, 2, 3}},
      // rc8
      {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},
      // ecl
      {{3, 2, 1, 0}, {3, 2, 1, 1}, {3, 2, 2, 2}, {3, 3, 3, 3}},
      // ecr
      {{0, 0, 0, 0}, {1, 1, 1, 0}, {2, 2, 1, 0}, {3, 2, 1, 0}},
      // rc16
      {{1, 0, 1, 0}, {3, 2, 3, 2}, {1, 0, 1, 0}, {3, 2, 3, 2}},
  };
  if (mode > 6) return 0;
  const uint8_t* row = kTable[mode - 1][selector & 3u];
  return (byte(row[0]) << 24) | (byte(row[1]) << 16) | (byte(row[2]) << 8) | byte(row[3]);
}

// bfe (PTX ISA bfe): len == 0 gives 0; n = min(len, bits - pos) bits are copied, the rest are
// the sign bit a[min(pos + len - 1, msb)] (signed) or 0. How pos and len are read depends on the
// width, as the golden vectors recorded on an sm_90 GPU show (docs/emu.md section 5): the 32-bit
// forms take them mod 256 (the manual's "restricted to 0..255"), the 64-bit forms, which ptxas
// expands into several instructions, take the whole u32 and clamp (bfe.u64 with pos 263 gives 0,
// not the field at pos 7; len 256 copies every bit up to the msb).
namespace {
struct Field {
  uint64_t pos, len;
};
Field field_operands(uint32_t pos, uint32_t len, int bits) {
  if (bits <= 32) return {pos & 0xffu, len & 0xffu};
  return {pos, len};
}
}  // namespace

uint64_t bfe_u(uint64_t a, uint32_t pos_in, uint32_t len_in, int bits) {
  const auto [pos, len] = field_operands(pos_in, len_in, bits);
  const uint64_t width = static_cast<uint64_t>(bits);
  if (len == 0 || pos >= width) return 0;
  const uint64_t n = len < width - pos ? len : width - pos;
  return (a >> pos) & mask_of(static_cast<int>(n));
}

uint64_t bfe_s(uint64_t a, uint32_t pos_in, uint32_t len_in, int bits) {
  const auto [pos, len] = field_operands(pos_in, len_in, bits);
  const uint64_t width = static_cast<uint64_t>(bits);
  if (len == 0) return 0;
  const uint64_t top = pos + len - 1 < width - 1 ? pos + len - 1 : width - 1;
  const bool sbit = ((a >> top) & 1u) != 0;
  if (pos >= width) return sbit ? mask_of(bits) : 0;
  const uint64_t n = len < width - pos ? len : width - pos;
  const uint64_t field = (a >> pos) & mask_of(static_cast<int>(n));
  return sbit ? ((field | ~mask_of(static_cast<int>(n))) & mask_of(bits)) : field;
}

// bfi (PTX ISA bfi): f = b with a's low len bits inserted at pos, bits past the msb dropped;
// pos and len read as bfe reads them.
uint64_t bfi(uint64_t a, uint64_t b, uint32_t pos_in, uint32_t len_in, int bits) {
  const auto [pos, len] = field_operands(pos_in, len_in, bits);
  const uint64_t width = static_cast<uint64_t>(bits);
  b &= mask_of(bits);
  if (len == 0 || pos >= width) return b;
  const uint64_t n = len < width - pos ? len : width - pos;
  const uint64_t m = mask_of(static_cast<int>(n)) << pos;
  return (b & ~m) | ((a << pos) & m);
}

// bfind (PTX ISA bfind): the position of the most significant non-sign bit; negative signed
// inputs are complemented first; .shiftamt returns msb - position; none found: 0xffffffff.
uint32_t bfind(uint64_t a, int bits, bool is_signed, bool shiftamt) {
  const unsigned msb = static_cast<unsigned>(bits) - 1;
  a &= mask_of(bits);
  if (is_signed && ((a >> msb) & 1u) != 0) a = ~a & mask_of(bits);
  if (a == 0) return 0xffffffffu;
  const uint32_t d = 63u - static_cast<uint32_t>(__builtin_clzll(a));
  return shiftamt ? msb - d : d;
}

uint64_t brev(uint64_t a, int bits) {
  uint64_t d = 0;
  for (int i = 0; i < bits; ++i) d |= ((a >> i) & 1u) << (bits - 1 - i);
  return d;
}

uint32_t popc(uint64_t a, int bits) { return static_cast<uint32_t>(__builtin_popcountll(a & mask_of(bits))); }

uint32_t clz(uint64_t a, int bits) {
  a &= mask_of(bits);
  if (a == 0) return static_cast<uint32_t>(bits);
  return static_cast<uint32_t>(__builtin_clzll(a)) - static_cast<uint32_t>(64 - bits);
}

// lop3 (PTX ISA lop3): bit i of the result is bit (a_i*4 + b_i*2 + c_i) of the lookup table,
// the table built from 0xF0, 0xCC, 0xAA for a, b, c.
uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint8_t lut) {
  uint32_t d = 0;
  for (unsigned k = 0; k < 8; ++k) {
    if (((lut >> k) & 1u) == 0) continue;
    const uint32_t ta = (k & 4u) != 0 ? a : ~a;
    const uint32_t tb = (k & 2u) != 0 ? b : ~b;
    const uint32_t tc = (k & 1u) != 0 ? c : ~c;
    d |= ta & tb & tc;
  }
  return d;
}

namespace {
int32_t part(uint32_t v, unsigned i, unsigned width, bool is_signed) {
  const uint32_t raw = (v >> (i * width)) & ((1u << width) - 1u);
  if (!is_signed) return static_cast<int32_t>(raw);
  return static_cast<int32_t>(sext(raw, static_cast<int>(width)));
}
}  // namespace

// dp4a / dp2a (PTX ISA): four (two) byte (halfword x byte) products added to c, modulo 2^32.
int32_t dp4a(uint32_t a, uint32_t b, int32_t c, bool a_signed, bool b_signed) {
  uint32_t acc = static_cast<uint32_t>(c);
  for (unsigned i = 0; i < 4; ++i) {
    acc += static_cast<uint32_t>(part(a, i, 8, a_signed) * part(b, i, 8, b_signed));
  }
  return static_cast<int32_t>(acc);
}

int32_t dp2a(uint32_t a, uint32_t b, int32_t c, bool a_signed, bool b_signed, bool hi) {
  uint32_t acc = static_cast<uint32_t>(c);
  const unsigned base = hi ? 2 : 0;
  for (unsigned i = 0; i < 2; ++i) {
    acc += static_cast<uint32_t>(part(a, i, 16, a_signed) * part(b, base + i, 8, b_signed));
  }
  return static_cast<int32_t>(acc);
}

int32_t add_sat_s32(int32_t a, int32_t b) {
  const int64_t s = int64_t{a} + b;
  return static_cast<int32_t>(s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : s));
}

int32_t sub_sat_s32(int32_t a, int32_t b) {
  const int64_t s = int64_t{a} - b;
  return static_cast<int32_t>(s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : s));
}

bool cmp_int(uint64_t a, uint64_t b, Cmp c, int bits, bool is_signed) {
  const uint64_t ua = a & mask_of(bits), ub = b & mask_of(bits);
  const int64_t sa = sext(a, bits), sb = sext(b, bits);
  auto lt = [&] { return is_signed ? sa < sb : ua < ub; };
  auto gt = [&] { return is_signed ? sa > sb : ua > ub; };
  switch (c) {
    case Cmp::eq: case Cmp::equ: return ua == ub;
    case Cmp::ne: case Cmp::neu: return ua != ub;
    case Cmp::lt: case Cmp::ltu: return lt();
    case Cmp::le: case Cmp::leu: return !gt();
    case Cmp::gt: case Cmp::gtu: return gt();
    case Cmp::ge: case Cmp::geu: return !lt();
    case Cmp::lo: return ua < ub;
    case Cmp::ls: return ua <= ub;
    case Cmp::hi: return ua > ub;
    case Cmp::hs: return ua >= ub;
    case Cmp::num: return true;
    case Cmp::nan: return false;
  }
  return false;
}

}  // namespace ptxforge::emu::alu
