// The golden check's agreement rule (golden_check.h): bit-exact for exact forms; for the
// .approx forms, the bound the PTX ISA states for each function, on the input range it states
// it for, both between the engine and the GPU and between the engine and the true value
// (long double). Outside a stated range the manual promises nothing ("best effort") and only
// NaN and infinity must agree.
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "emu/golden_check.h"

namespace ptxforge::emu {
namespace {

struct Format {
  int precision;   // significand bits, the hidden one included
  int min_exp;     // exponent of the smallest normal
  long double max; // largest finite
};

Format format_of(GoldenType t) {
  switch (t) {
    case GoldenType::f64: return {53, -1022, 0x1.fffffffffffffp1023L};
    case GoldenType::f16: return {11, -14, 65504.0L};
    case GoldenType::bf16: return {8, -126, 0x1.fep127L};
    default: return {24, -126, 0x1.fffffep127L};
  }
}

int bits_of(GoldenType t) { return golden_type_bits(t); }

long double decode(uint64_t bits, GoldenType t) {
  switch (t) {
    case GoldenType::f64: {
      double d;
      std::memcpy(&d, &bits, 8);
      return d;
    }
    case GoldenType::f16: {
      const int e = static_cast<int>((bits >> 10) & 0x1f);
      const long double m = static_cast<long double>(bits & 0x3ff);
      const long double s = (bits & 0x8000) ? -1.0L : 1.0L;
      if (e == 31) return m == 0 ? s * HUGE_VALL : NAN;
      if (e == 0) return s * std::ldexp(m, -24);
      return s * std::ldexp(1024.0L + m, e - 25);
    }
    case GoldenType::bf16: {
      const uint32_t w = static_cast<uint32_t>(bits & 0xffff) << 16;
      float f;
      std::memcpy(&f, &w, 4);
      return f;
    }
    default: {
      const uint32_t w = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &w, 4);
      return f;
    }
  }
}

// The value's spacing in format t: 2^(exponent - precision + 1), never below the smallest subnormal.
long double ulp(long double v, GoldenType t) {
  const Format f = format_of(t);
  int e = 0;
  std::frexp(std::fabs(v), &e);  // v = m * 2^e, m in [0.5, 1)
  return std::ldexp(1.0L, std::max(e - 1, f.min_exp) - f.precision + 1);
}

// Bits as an integer that orders like the values, +0 and -0 both 0: the ulp distance is a difference.
int64_t ordered(uint64_t bits, GoldenType t) {
  const int n = bits_of(t);
  const uint64_t sign = uint64_t{1} << (n - 1);
  const int64_t mag = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

bool starts(const GoldenForm& f, std::string_view p) { return std::string_view(f.ptx).starts_with(p); }

// rcp.approx.ftz.f64 reads only its operand's most significant 32 bits (1.11.20) and writes
// only the result's (PTX ISA rcp.approx.ftz.f64; the recording agrees).
bool high_word_only(const GoldenForm& f) { return starts(f, "rcp.approx.ftz.f64"); }

// The input as the function sees it: .ftz flushes a subnormal input to the zero of its sign;
// a high-word form sees the operand with its low 32 bits cleared.
long double input(const GoldenForm& f, std::span<const uint64_t> in, size_t k) {
  const uint64_t bits = high_word_only(f) ? in[k] & 0xffffffff00000000ull : in[k];
  const long double x = decode(bits, f.inputs[k]);
  const bool ftz = f.ptx.find(".ftz") != std::string::npos;
  if (ftz && x != 0 && std::fabs(x) < std::ldexp(1.0L, format_of(f.inputs[k]).min_exp)) return std::signbit(x) ? -0.0L : 0.0L;
  return x;
}

// The check that applies to this instance, or nothing where the manual promises nothing.
std::optional<std::pair<GoldenCheck, double>> bound_for(const GoldenForm& f, std::span<const uint64_t> in) {
  if (high_word_only(f)) {
    // A result of 20 fraction bits is up to 2^-21 relative from the true value even when
    // rounded to nearest, and the GPU's is the reciprocal of the high word cut toward zero to
    // 20 bits: less than 2^-20 below 1/(high word), the truth input() gives. So the bound is
    // 2^-20 relative; the form table's 2^-22.9 cannot hold for any 20-bit result.
    return std::pair{GoldenCheck::rel, -20.0};
  }
  if (starts(f, "sin.approx") || starts(f, "cos.approx")) {
    // PTX ISA, sin/cos: max absolute error 2^-20.5 in [-2pi, 2pi], 2^-14.7 in [-100pi, 100pi].
    const long double x = std::fabs(input(f, in, 0));
    const long double pi = 3.14159265358979323846264338327950288L;
    if (x <= 2 * pi) return std::pair{GoldenCheck::abs, -20.5};
    if (x <= 100 * pi) return std::pair{GoldenCheck::abs, -14.7};
    return std::nullopt;
  }
  if (starts(f, "div.approx")) {
    // PTX ISA, div: div.approx.f32 has max 2 ulp for |b| in [2^-126, 2^126]; outside, no bound
    // is stated except that 2^126 < |b| < 2^128 gives zero for finite a (kept under the 2-ulp rule).
    const long double b = std::fabs(input(f, in, 1));
    if (b != 0 && b < std::ldexp(1.0L, -126)) return std::nullopt;
  }
  return std::pair{f.check, f.bound};
}

bool within(GoldenCheck check, double bound, long double ref, long double v, GoldenType t, long double x0, long double slack) {
  const long double err = std::fabs(v - ref);
  const long double scale = std::fmax(std::fabs(ref), std::fabs(v));
  switch (check) {
    case GoldenCheck::abs: return err <= std::pow(2.0L, bound) + slack;
    case GoldenCheck::rel: return err <= std::pow(2.0L, bound) * scale + slack;
    case GoldenCheck::abs_or_rel:
      if (x0 > 0.5L && x0 < 2.0L) return err <= std::pow(2.0L, bound) + slack;
      return err <= std::pow(2.0L, bound) * scale + slack;
    case GoldenCheck::ulp: return err <= bound * ulp(ref, t) + slack;
    case GoldenCheck::exact: return err == 0;
  }
  return false;
}

}  // namespace

bool golden_agrees(const GoldenForm& f, std::span<const uint64_t> inputs, uint64_t gpu, uint64_t actual, uint64_t mask) {
  if (f.check == GoldenCheck::exact) return (gpu & mask) == (actual & mask);
  const GoldenType t = f.result;
  const uint64_t tm = golden_mask(bits_of(t));
  const long double g = decode(gpu & tm, t), a = decode(actual & tm, t);
  if (std::isnan(g) || std::isnan(a)) return std::isnan(g) && std::isnan(a);
  if (std::isinf(g) || std::isinf(a)) return g == a;
  auto b = bound_for(f, inputs);
  if (!b) return true;
  if (b->first == GoldenCheck::ulp) return std::llabs(ordered(gpu & tm, t) - ordered(actual & tm, t)) <= static_cast<int64_t>(b->second);
  // Both approximate the true value: the engine's to half an ulp, the GPU's within the bound.
  const long double half = ulp(std::fmax(std::fabs(g), std::fabs(a)), t) / 2;
  return within(b->first, b->second, g, a, t, inputs.empty() ? 0 : input(f, inputs, 0), half);
}

bool golden_near_truth(const GoldenForm& f, std::span<const uint64_t> inputs, uint64_t actual) {
  if (f.check == GoldenCheck::exact || inputs.empty()) return true;
  const long double x = input(f, inputs, 0);
  const long double y = inputs.size() > 1 ? input(f, inputs, 1) : 1.0L;
  if (!std::isfinite(x) || !std::isfinite(y)) return true;
  long double truth;
  if (starts(f, "ex2")) truth = std::exp2(x);
  else if (starts(f, "lg2")) truth = std::log2(x);
  else if (starts(f, "sin")) truth = std::sin(x);
  else if (starts(f, "cos")) truth = std::cos(x);
  else if (starts(f, "rsqrt")) truth = 1.0L / std::sqrt(x);
  else if (starts(f, "sqrt")) truth = std::sqrt(x);
  else if (starts(f, "rcp")) truth = 1.0L / x;
  else if (starts(f, "tanh")) truth = std::tanh(x);
  else if (starts(f, "div")) {
    // div.approx: for 2^126 < |b| < 2^128 the manual specifies 0 (NaN for an infinite a), not
    // a/b: only the comparison with the GPU applies there.
    if (starts(f, "div.approx") && std::fabs(y) > std::ldexp(1.0L, 126)) return true;
    truth = x / y;
  }
  else return true;  // a non-exact form this rule does not know: the GPU comparison stands alone
  const Format fmt = format_of(f.result);
  if (!std::isfinite(truth) || std::fabs(truth) > fmt.max) return true;
  if (truth != 0 && std::fabs(truth) < std::ldexp(1.0L, fmt.min_exp)) return true;  // subnormal results: flushed or not
  const long double a = decode(actual & golden_mask(bits_of(f.result)), f.result);
  if (!std::isfinite(a)) return false;
  auto b = bound_for(f, inputs);
  if (!b) return true;
  return within(b->first, b->second, truth, a, f.result, x, 0);
}

}  // namespace ptxforge::emu
