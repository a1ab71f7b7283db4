// IEEE 754 special cases around the exact path: NaN, infinity, signed zero and .ftz, written
// once for every format (f64, f32, f16, bf16), so the per-type files only pick a format.
#include <cmath>

#include "emu/softfloat.h"

namespace ptxforge::emu::sf {
namespace {

Val load(uint64_t bits, const Format& f, bool ftz) {
  Val v = decode(bits, f);
  return ftz ? flush(v, f) : v;
}

uint64_t finish(uint64_t r, const Format& f, bool ftz) {
  if (ftz && is_subnormal(r, f)) return r & f.sign_bit();
  return r;
}

// A value that is already representable in f (an operand passed through, such as x + 0).
uint64_t repack(const Val& v, const Format& f, bool ftz) {
  if (v.cls == Cls::zero) return pack_zero(v.sign, f);
  if (v.cls == Cls::inf) return pack_inf(v.sign, f);
  return finish(round_pack(v.sign, v.sig, v.exp, false, f, Mode::rn, false), f, ftz);
}

// x + y for two zeros: -0 only when both are -0, or when they differ and the mode is .rm.
bool zero_sum_sign(bool sx, bool sy, Mode m) { return sx == sy ? sx : m == Mode::rm; }

uint64_t sum(const Val& x, const Val& y, const Format& f, Mode m, bool ftz) {
  if (x.cls == Cls::inf || y.cls == Cls::inf) {
    if (x.cls == Cls::inf && y.cls == Cls::inf && x.sign != y.sign) return f.nan;
    return pack_inf(x.cls == Cls::inf ? x.sign : y.sign, f);
  }
  if (x.cls == Cls::zero && y.cls == Cls::zero) return pack_zero(zero_sum_sign(x.sign, y.sign, m), f);
  if (x.cls == Cls::zero) return repack(y, f, ftz);
  if (y.cls == Cls::zero) return repack(x, f, ftz);
  const Exact e = add(x.sign, x.sig, x.exp, y.sign, y.sig, y.exp);
  if (e.zero) return pack_zero(m == Mode::rm, f);
  return finish(round_pack(e, f, m, false), f, ftz);
}

}  // namespace

double to_double(const Val& v) {
  if (v.cls == Cls::nan) return std::nan("");
  if (v.cls == Cls::inf) return v.sign ? -INFINITY : INFINITY;
  if (v.cls == Cls::zero) return v.sign ? -0.0 : 0.0;
  const double mag = std::ldexp(static_cast<double>(static_cast<uint64_t>(v.sig)), v.exp);
  return v.sign ? -mag : mag;
}

uint64_t op_add(uint64_t a, uint64_t b, const Format& f, Mode m, bool ftz) {
  const Val x = load(a, f, ftz), y = load(b, f, ftz);
  if (x.cls == Cls::nan || y.cls == Cls::nan) return f.nan;
  return sum(x, y, f, m, ftz);
}

uint64_t op_mul(uint64_t a, uint64_t b, const Format& f, Mode m, bool ftz) {
  const Val x = load(a, f, ftz), y = load(b, f, ftz);
  if (x.cls == Cls::nan || y.cls == Cls::nan) return f.nan;
  const bool sign = x.sign != y.sign;
  if (x.cls == Cls::inf || y.cls == Cls::inf) {
    if (x.cls == Cls::zero || y.cls == Cls::zero) return f.nan;
    return pack_inf(sign, f);
  }
  if (x.cls == Cls::zero || y.cls == Cls::zero) return pack_zero(sign, f);
  return finish(round_pack(mul(x, y), f, m, false), f, ftz);
}

uint64_t op_fma(uint64_t a, uint64_t b, uint64_t c, const Format& f, Mode m, bool ftz) {
  const Val x = load(a, f, ftz), y = load(b, f, ftz), z = load(c, f, ftz);
  if (x.cls == Cls::nan || y.cls == Cls::nan || z.cls == Cls::nan) return f.nan;
  const bool psign = x.sign != y.sign;
  if (x.cls == Cls::inf || y.cls == Cls::inf) {
    if (x.cls == Cls::zero || y.cls == Cls::zero) return f.nan;
    if (z.cls == Cls::inf && z.sign != psign) return f.nan;
    return pack_inf(psign, f);
  }
  if (x.cls == Cls::zero || y.cls == Cls::zero) {
    Val p;
    p.sign = psign;
    return sum(p, z, f, m, ftz);
  }
  if (z.cls == Cls::inf) return pack_inf(z.sign, f);
  const Exact p = mul(x, y);
  if (z.cls == Cls::zero) return finish(round_pack(p, f, m, false), f, ftz);
  const Exact e = add(p.sign, p.sig, p.exp, z.sign, z.sig, z.exp);
  if (e.zero) return pack_zero(m == Mode::rm, f);
  return finish(round_pack(e, f, m, false), f, ftz);
}

uint64_t op_div(uint64_t a, uint64_t b, const Format& f, Mode m, bool ftz) {
  const Val x = load(a, f, ftz), y = load(b, f, ftz);
  if (x.cls == Cls::nan || y.cls == Cls::nan) return f.nan;
  const bool sign = x.sign != y.sign;
  if (x.cls == Cls::inf) return y.cls == Cls::inf ? f.nan : pack_inf(sign, f);
  if (y.cls == Cls::inf) return pack_zero(sign, f);
  if (y.cls == Cls::zero) return x.cls == Cls::zero ? f.nan : pack_inf(sign, f);
  if (x.cls == Cls::zero) return pack_zero(sign, f);
  return finish(round_pack(div(x, y), f, m, false), f, ftz);
}

uint64_t op_sqrt(uint64_t a, const Format& f, Mode m, bool ftz) {
  const Val x = load(a, f, ftz);
  if (x.cls == Cls::nan) return f.nan;
  if (x.cls == Cls::zero) return pack_zero(x.sign, f);  // sqrt(-0) = -0
  if (x.sign) return f.nan;
  if (x.cls == Cls::inf) return pack_inf(false, f);
  return finish(round_pack(sqrt(x), f, m, false), f, ftz);
}

}  // namespace ptxforge::emu::sf
