#include "task/dtype.h"

#include <cmath>
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
                         {DType::u32, "u32", 4}, {DType::i64, "i64", 8},   {DType::u64, "u64", 8}};

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
  return std::nullopt;
}

std::string_view dtype_name(DType t) { return kRows[static_cast<int>(t)].name; }
size_t dtype_size(DType t) { return kRows[static_cast<int>(t)].size; }
bool is_float(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64; }

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
  }
  return 0;
}

void store_element(void* p, DType t, size_t i, double v) {
  switch (t) {
    case DType::f16: return store(p, i, float_to_half(static_cast<float>(v)));
    case DType::bf16: return store(p, i, float_to_bf16(static_cast<float>(v)));
    case DType::f32: return store(p, i, static_cast<float>(v));
    case DType::f64: return store(p, i, v);
    case DType::i8: return store(p, i, static_cast<int8_t>(v));
    case DType::u8: return store(p, i, static_cast<uint8_t>(v));
    case DType::i16: return store(p, i, static_cast<int16_t>(v));
    case DType::u16: return store(p, i, static_cast<uint16_t>(v));
    case DType::i32: return store(p, i, static_cast<int32_t>(v));
    case DType::u32: return store(p, i, static_cast<uint32_t>(v));
    case DType::i64: return store(p, i, static_cast<int64_t>(v));
    case DType::u64: return store(p, i, static_cast<uint64_t>(v));
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

}  // namespace ptxforge::task
