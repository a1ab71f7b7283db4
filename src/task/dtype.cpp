#include "task/dtype.h"

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ptxforge::task {

namespace {
struct Row {
  DType t;
  std::string_view name;
  size_t size;
};
constexpr Row kRows[] = {{DType::f16, "f16", 2}, {DType::bf16, "bf16", 2}, {DType::f32, "f32", 4},
                         {DType::f64, "f64", 8}, {DType::i8, "i8", 1},     {DType::u8, "u8", 1},
                         {DType::i16, "i16", 2}, {DType::u16, "u16", 2},   {DType::i32, "i32", 4},
                         {DType::u32, "u32", 4}, {DType::i64, "i64", 8},   {DType::u64, "u64", 8},
                         {DType::e4m3, "e4m3", 1}, {DType::e5m2, "e5m2", 1}};

// An 8-bit float with `man` mantissa bits, exponent bias `bias`, largest finite `max`.
struct Minifloat {
  int man, bias;
  double max;
  bool has_inf;
};
constexpr Minifloat kE4M3{3, 7, 448.0, false};
constexpr Minifloat kE5M2{2, 15, 57344.0, true};

uint8_t encode_minifloat(float f, const Minifloat& m) {
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return 0x7F;
  double a = std::fabs(static_cast<double>(f));
  if (a == 0) return sign;
  const int emin = 1 - m.bias;
  int e;
  std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1): the exponent of a's leading bit is e - 1
  int lead = std::max(e - 1, emin);
  double quantum = std::ldexp(1.0, lead - m.man);
  double v = std::nearbyint(a / quantum) * quantum;  // round to nearest, ties to even
  if (v > m.max || std::isinf(a)) v = m.max;         // satfinite
  if (v == 0) return sign;
  std::frexp(v, &e);
  int vlead = e - 1;
  if (vlead < emin) return static_cast<uint8_t>(sign | static_cast<uint8_t>(v / std::ldexp(1.0, emin - m.man)));
  int mant = static_cast<int>(v / std::ldexp(1.0, vlead - m.man)) - (1 << m.man);
  return static_cast<uint8_t>(sign | ((vlead + m.bias) << m.man) | mant);
}

float decode_minifloat(uint8_t b, const Minifloat& m) {
  bool neg = b & 0x80;
  int field = (b & 0x7F) >> m.man, mant = b & ((1 << m.man) - 1);
  int top = (1 << (7 - m.man)) - 1;
  double v;
  if (m.has_inf && field == top) v = mant ? NAN : INFINITY;
  else if (!m.has_inf && field == top && mant == (1 << m.man) - 1) v = NAN;
  else if (field == 0) v = std::ldexp(static_cast<double>(mant), 1 - m.bias - m.man);
  else v = std::ldexp(static_cast<double>(mant + (1 << m.man)), field - m.bias - m.man);
  return static_cast<float>(neg ? -v : v);
}

template <typename T>
T load(const void* p, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T>
void store(void* p, size_t i, T v) {
  std::memcpy(static_cast<char*>(p) + i * sizeof(T), &v, sizeof(T));
}
}  // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (auto& r : kRows)
    if (r.name == name) return r.t;
  if (name == "float") return DType::f32;
  if (name == "half") return DType::f16;
  if (name == "int") return DType::i32;
  // PTX spells signed integers s8..s64 and the 8-bit floats e4m3/e5m2.
  if (name == "s8") return DType::i8;
  if (name == "s16") return DType::i16;
  if (name == "s32") return DType::i32;
  if (name == "s64") return DType::i64;
  if (name == "fp8_e4m3" || name == "f8e4m3") return DType::e4m3;
  if (name == "fp8_e5m2" || name == "f8e5m2") return DType::e5m2;
  return std::nullopt;
}

std::string_view dtype_name(DType t) { return kRows[static_cast<int>(t)].name; }
size_t dtype_size(DType t) { return kRows[static_cast<int>(t)].size; }
bool is_float(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64 || t == DType::e4m3 || t == DType::e5m2;
}
bool is_signed(DType t) {
  return is_float(t) || t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64;
}

std::string_view dtype_names() { return "f16, bf16, f32, f64, e4m3, e5m2, i8..i64 (s8..s64) or u8..u64"; }

double dtype_max(DType t) {
  switch (t) {
    case DType::f16: return 65504.0;
    case DType::bf16: return 3.3895313892515355e38;
    case DType::f32: return 3.4028234663852886e38;
    case DType::f64: return 1.7976931348623157e308;
    case DType::e4m3: return kE4M3.max;
    case DType::e5m2: return kE5M2.max;
    case DType::i8: return 127;
    case DType::u8: return 255;
    case DType::i16: return 32767;
    case DType::u16: return 65535;
    case DType::i32: return 2147483647.0;
    case DType::u32: return 4294967295.0;
    case DType::i64: return 9223372036854775807.0;
    case DType::u64: return 18446744073709551615.0;
  }
  return 0;
}

double dtype_lowest(DType t) {
  if (!is_signed(t)) return 0;
  if (is_float(t)) return -dtype_max(t);
  return -dtype_max(t) - 1;
}

double dtype_min_normal(DType t) {
  switch (t) {
    case DType::f16: return 6.103515625e-05;
    case DType::bf16:
    case DType::f32: return 1.1754943508222875e-38;
    case DType::f64: return 2.2250738585072014e-308;
    case DType::e4m3: return 0.015625;         // 2^-6
    case DType::e5m2: return 6.103515625e-05;  // 2^-14
    default: return 1;
  }
}

double load_element(const void* p, DType t, size_t i) {
  switch (t) {
    case DType::f16: return half_to_float(load<uint16_t>(p, i));
    case DType::bf16: return bf16_to_float(load<uint16_t>(p, i));
    case DType::f32: return load<float>(p, i);
    case DType::f64: return load<double>(p, i);
    case DType::i8: return load<int8_t>(p, i);
    case DType::u8: return load<uint8_t>(p, i);
    case DType::i16: return load<int16_t>(p, i);
    case DType::u16: return load<uint16_t>(p, i);
    case DType::i32: return load<int32_t>(p, i);
    case DType::u32: return load<uint32_t>(p, i);
    case DType::i64: return static_cast<double>(load<int64_t>(p, i));
    case DType::u64: return static_cast<double>(load<uint64_t>(p, i));
    case DType::e4m3: return e4m3_to_float(load<uint8_t>(p, i));
    case DType::e5m2: return e5m2_to_float(load<uint8_t>(p, i));
  }
  return 0;
}

namespace {
// Out-of-range float-to-integer conversion is undefined: values are clamped to the type's range.
double clamp_int(double v, DType t) {
  if (std::isnan(v)) return 0;
  return std::min(std::max(v, dtype_lowest(t)), dtype_max(t));
}
}  // namespace

void store_element(void* p, DType t, size_t i, double v) {
  switch (t) {
    case DType::f16: return store(p, i, float_to_half(static_cast<float>(v)));
    case DType::bf16: return store(p, i, float_to_bf16(static_cast<float>(v)));
    case DType::f32: return store(p, i, static_cast<float>(v));
    case DType::f64: return store(p, i, v);
    case DType::i8: return store(p, i, static_cast<int8_t>(clamp_int(v, t)));
    case DType::u8: return store(p, i, static_cast<uint8_t>(clamp_int(v, t)));
    case DType::i16: return store(p, i, static_cast<int16_t>(clamp_int(v, t)));
    case DType::u16: return store(p, i, static_cast<uint16_t>(clamp_int(v, t)));
    case DType::i32: return store(p, i, static_cast<int32_t>(clamp_int(v, t)));
    case DType::u32: return store(p, i, static_cast<uint32_t>(clamp_int(v, t)));
    case DType::i64:
      // 2^63 is a double but not an int64: the top needs care.
      return store(p, i, v >= 9223372036854775807.0 ? INT64_MAX : v <= -9223372036854775808.0 ? INT64_MIN
                                                                   : static_cast<int64_t>(std::isnan(v) ? 0 : v));
    case DType::u64:
      return store(p, i, v >= 18446744073709551615.0 ? UINT64_MAX : v <= 0 || std::isnan(v) ? 0 : static_cast<uint64_t>(v));
    case DType::e4m3: return store(p, i, float_to_e4m3(static_cast<float>(v)));
    case DType::e5m2: return store(p, i, float_to_e5m2(static_cast<float>(v)));
  }
}

// IEEE binary16 with round-to-nearest-even, subnormals, infinities and NaN.
uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into the exponent: correct
  return static_cast<uint16_t>(half);
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  uint32_t x = exp == 31 ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp - 15 + 127) << 23) | (mant << 13));
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

float bf16_to_float(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint8_t float_to_e4m3(float f) { return encode_minifloat(f, kE4M3); }
float e4m3_to_float(uint8_t b) { return decode_minifloat(b, kE4M3); }
uint8_t float_to_e5m2(float f) { return encode_minifloat(f, kE5M2); }
float e5m2_to_float(uint8_t b) { return decode_minifloat(b, kE5M2); }

}  // namespace ptxforge::task
