// f16 and bf16 arithmetic (alu.h): one value in the low 16 bits; the interpreter applies these
// per half for the x2 forms. Every operation is computed exactly and rounded once by the exact
// path (softfloat.h), so add, mul and fma (including a fused fma whose product would not fit a
// wider host type) are correctly rounded. .ftz exists for f16 only; bf16 keeps subnormals.
#include "emu/alu.h"
#include "emu/float_bits.h"
#include "emu/softfloat.h"

namespace ptxforge::emu::alu {
namespace {

const sf::Format& fmt(Half t) { return t == Half::f16 ? sf::kF16 : sf::kBF16; }
uint16_t one(Half t) { return t == Half::f16 ? 0x3c00u : 0x3f80u; }

bool is_nan_h(uint16_t b, Half t) { return sf::decode(b, fmt(t)).cls == sf::Cls::nan; }

uint16_t post(uint64_t r, Half t, FMode m) {
  uint16_t b = static_cast<uint16_t>(r);
  if (m.sat) {  // NaN -> +0, clamp to [0, 1]
    if (is_nan_h(b, t) || (b & 0x8000u) != 0) return 0;
    const double v = sf::to_double(sf::decode(b, fmt(t)));
    if (v > 1.0) return one(t);
  }
  return b;
}

bool ftz_of(Half t, FMode m) { return t == Half::f16 && m.ftz; }

double value(uint16_t b, Half t, bool ftz) {
  sf::Val v = sf::decode(b, fmt(t));
  if (ftz) v = sf::flush(v, fmt(t));
  return sf::to_double(v);
}

}  // namespace

uint16_t add_h(uint16_t a, uint16_t b, Half t, FMode m) {
  return post(sf::op_add(a, b, fmt(t), mode_of(m.rnd), ftz_of(t, m)), t, m);
}

uint16_t sub_h(uint16_t a, uint16_t b, Half t, FMode m) {
  if (is_nan_h(b, t)) return post(fmt(t).nan, t, m);
  return add_h(a, static_cast<uint16_t>(b ^ 0x8000u), t, m);
}

uint16_t mul_h(uint16_t a, uint16_t b, Half t, FMode m) {
  return post(sf::op_mul(a, b, fmt(t), mode_of(m.rnd), ftz_of(t, m)), t, m);
}

// fma.rn{.ftz}{.sat|.relu}: .relu clamps a negative result to +0 and keeps NaN as the
// canonical NaN (PTX ISA fma, half precision).
uint16_t fma_h(uint16_t a, uint16_t b, uint16_t c, Half t, FMode m, bool relu) {
  uint16_t r = post(sf::op_fma(a, b, c, fmt(t), mode_of(m.rnd), ftz_of(t, m)), t, m);
  if (relu && !is_nan_h(r, t) && (r & 0x8000u) != 0) r = 0;
  return r;
}

uint16_t min_h(uint16_t a, uint16_t b, Half t, bool nan_mode) {
  return pick<uint16_t>(a, b, value(a, t, false), value(b, t, false), is_nan_h(a, t), is_nan_h(b, t),
                        nan_mode, static_cast<uint16_t>(fmt(t).nan), true);
}

uint16_t max_h(uint16_t a, uint16_t b, Half t, bool nan_mode) {
  return pick<uint16_t>(a, b, value(a, t, false), value(b, t, false), is_nan_h(a, t), is_nan_h(b, t),
                        nan_mode, static_cast<uint16_t>(fmt(t).nan), false);
}

bool cmp_h(uint16_t a, uint16_t b, Half t, Cmp c, bool ftz) {
  const bool f = ftz && t == Half::f16;
  return cmp_double(value(a, t, f), value(b, t, f), c);
}

}  // namespace ptxforge::emu::alu
