// The exact path of the ALU: decode, exact 128-bit arithmetic with a sticky bit, one rounding.
// Each operation keeps at least 64 significant bits plus the sticky bit, and every target
// format has at most 53, so the single rounding in round_pack is the correctly rounded result.
#include "emu/softfloat.h"

#include <utility>

namespace ptxforge::emu::sf {

int msb_index(u128 x) {
  uint64_t hi = static_cast<uint64_t>(x >> 64);
  if (hi != 0) return 127 - __builtin_clzll(hi);
  return 63 - __builtin_clzll(static_cast<uint64_t>(x));
}

Val decode(uint64_t bits, const Format& f) {
  Val v;
  v.sign = (bits & f.sign_bit()) != 0;
  const uint64_t mag = bits & (f.sign_bit() - 1);
  const uint64_t emask = (uint64_t{1} << f.ebits) - 1;
  const uint64_t e = (mag >> f.mbits) & emask;
  const uint64_t mant = mag & ((uint64_t{1} << f.mbits) - 1);
  if (f.ieee_nan && e == emask) {
    v.cls = mant != 0 ? Cls::nan : Cls::inf;
    return v;
  }
  if (!f.ieee_nan && f.has_nan && mag == f.nan) {
    v.cls = Cls::nan;
    return v;
  }
  if (e == 0) {
    if (mant == 0) return v;  // zero
    v.cls = Cls::finite;
    v.sig = mant;
    v.exp = 1 - f.bias() - f.mbits;
    return v;
  }
  v.cls = Cls::finite;
  v.sig = mant | (uint64_t{1} << f.mbits);
  v.exp = static_cast<int>(e) - f.bias() - f.mbits;
  return v;
}

Val flush(Val v, const Format& f) {
  if (v.cls == Cls::finite && v.sig < (u128{1} << f.mbits) && v.exp == 1 - f.bias() - f.mbits) {
    v.cls = Cls::zero;
    v.sig = 0;
  }
  return v;
}

uint64_t pack_zero(bool sign, const Format& f) { return sign ? f.sign_bit() : 0; }

uint64_t pack_inf(bool sign, const Format& f) {
  const uint64_t mag = f.has_inf ? f.max_finite + 1 : f.max_finite;
  return (sign ? f.sign_bit() : 0) | mag;
}

bool is_subnormal(uint64_t bits, const Format& f) {
  const uint64_t mag = bits & (f.sign_bit() - 1);
  return mag != 0 && (mag >> f.mbits) == 0;
}

// Splits sig at bit `shift`: the kept part, the first bit below it, and whether anything
// nonzero lies further below (including the incoming sticky bit).
static void split(u128 sig, int shift, bool sticky, u128* q, bool* round, bool* rest) {
  if (shift <= 0) {
    *q = sig << -shift;
    *round = false;
    *rest = sticky;
  } else if (shift > 128) {
    *q = 0;
    *round = false;
    *rest = true;  // sig != 0
  } else if (shift == 128) {
    *q = 0;
    *round = (sig >> 127) != 0;
    *rest = (sig & ((u128{1} << 127) - 1)) != 0 || sticky;
  } else {
    *q = sig >> shift;
    *round = ((sig >> (shift - 1)) & 1) != 0;
    *rest = (sig & ((u128{1} << (shift - 1)) - 1)) != 0 || sticky;
  }
}

static bool rounds_up(Mode m, bool sign, u128 q, bool round, bool rest) {
  switch (m) {
    case Mode::rn: return round && (rest || (q & 1) != 0);
    case Mode::rna: return round;
    case Mode::rz: return false;
    case Mode::rp: return !sign && (round || rest);
    case Mode::rm: return sign && (round || rest);
  }
  return false;
}

uint64_t round_pack(bool sign, u128 sig, int exp, bool sticky, const Format& f, Mode m, bool satfinite) {
  const uint64_t sbit = sign ? f.sign_bit() : 0;
  const int big_e = exp + msb_index(sig);  // the value lies in [2^big_e, 2^(big_e+1))
  const int emin = 1 - f.bias();
  const int emax = static_cast<int>(f.max_finite >> f.mbits) - f.bias();
  const bool to_max = satfinite || !f.has_inf || m == Mode::rz || (m == Mode::rm && !sign) ||
                      (m == Mode::rp && sign);
  const uint64_t overflow = sbit | (to_max ? f.max_finite : f.max_finite + 1);
  if (big_e > emax) return overflow;
  const int lsb = (big_e < emin ? emin : big_e) - f.mbits;
  u128 q;
  bool round, rest;
  split(sig, lsb - exp, sticky, &q, &round, &rest);
  if (rounds_up(m, sign, q, round, rest)) ++q;
  uint64_t enc;
  if (big_e < emin) {
    enc = static_cast<uint64_t>(q);  // q == 2^mbits is the smallest normal's encoding
  } else {
    // (E + bias - 1) << mbits plus q (with its implicit bit) also absorbs a carry out of q.
    enc = (static_cast<uint64_t>(big_e + f.bias() - 1) << f.mbits) + static_cast<uint64_t>(q);
  }
  if (enc > f.max_finite) return overflow;
  return sbit | enc;
}

Exact mul(const Val& a, const Val& b) {
  Exact e;
  e.sign = a.sign != b.sign;
  e.sig = a.sig * b.sig;  // at most 53 + 53 bits
  e.exp = a.exp + b.exp;
  return e;
}

Exact add(bool sa, u128 siga, int expa, bool sb, u128 sigb, int expb) {
  // Both significands to bit 124; the smaller operand's shifted-out bits jam into bit 0,
  // which is far below any rounding position (results have at most 53 bits).
  const int pa = msb_index(siga), pb = msb_index(sigb);
  siga <<= (124 - pa);
  expa -= 124 - pa;
  sigb <<= (124 - pb);
  expb -= 124 - pb;
  if (expa < expb || (expa == expb && siga < sigb)) {
    std::swap(siga, sigb);
    std::swap(expa, expb);
    std::swap(sa, sb);
  }
  const int d = expa - expb;
  if (d >= 125) {
    sigb = 1;
  } else if (d > 0) {
    const bool lost = (sigb & ((u128{1} << d) - 1)) != 0;
    sigb = (sigb >> d) | (lost ? 1 : 0);
  }
  Exact e;
  e.sign = sa;
  e.exp = expa;
  if (sa == sb) {
    e.sig = siga + sigb;
  } else {
    e.sig = siga - sigb;
    e.zero = e.sig == 0;
  }
  return e;
}

Exact div(const Val& a, const Val& b) {
  const int pa = msb_index(a.sig), pb = msb_index(b.sig);
  const uint64_t na = static_cast<uint64_t>(a.sig << (63 - pa));
  const uint64_t nb = static_cast<uint64_t>(b.sig << (63 - pb));
  const u128 num = u128{na} << 64;
  Exact e;
  e.sign = a.sign != b.sign;
  e.sig = num / nb;  // in (2^63, 2^65): 64+ significant bits
  e.sticky = num % nb != 0;
  e.exp = (a.exp - (63 - pa)) - (b.exp - (63 - pb)) - 64;
  return e;
}

Exact sqrt(const Val& a) {
  u128 n = a.sig;
  int exp = a.exp;
  const int p = msb_index(n);
  n <<= (124 - p);
  exp -= 124 - p;
  if ((exp & 1) != 0) {
    n <<= 1;
    exp -= 1;
  }
  // Bit-by-bit integer square root: root = floor(sqrt(n)) (about 63 bits), n = remainder.
  u128 root = 0;
  u128 bit = u128{1} << 126;
  while (bit > n) bit >>= 2;
  while (bit != 0) {
    if (n >= root + bit) {
      n -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  Exact e;
  e.sig = root;
  e.sticky = n != 0;
  e.exp = exp / 2;
  return e;
}

u128 round_to_integer(const Val& v, Mode m, bool* huge) {
  *huge = false;
  if (v.exp >= 0) {
    if (msb_index(v.sig) + v.exp >= 126) {
      *huge = true;
      return u128{1} << 126;
    }
    return v.sig << v.exp;
  }
  u128 q;
  bool round, rest;
  split(v.sig, -v.exp, false, &q, &round, &rest);
  if (rounds_up(m, v.sign, q, round, rest)) ++q;
  return q;
}

}  // namespace ptxforge::emu::sf
