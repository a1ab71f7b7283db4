// Element types of task buffers and scalars, with their sizes and the conversions the host
// side needs (generating inputs, comparing outputs). Half and 8-bit float types are converted
// in software so the host code needs no CUDA headers. e4m3 is the OCP/NVIDIA "e4m3fn" format
// (bias 7, no infinity, max 448, NaN = S.1111.111); e5m2 is IEEE-like (bias 15, infinities,
// max 57344). Conversion to either saturates to the largest finite value, as the GPU's
// cvt.rn.satfinite does; NaN stays NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxforge::task {

enum class DType { f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64, e4m3, e5m2 };

std::optional<DType> parse_dtype(std::string_view name);
std::string_view dtype_name(DType t);
size_t dtype_size(DType t);
bool is_float(DType t);
bool is_signed(DType t);  // floats and i8..i64
// The largest finite value, the lowest (most negative, 0 for unsigned) finite value, and the
// smallest positive normal value (1 for integers).
double dtype_max(DType t);
double dtype_lowest(DType t);
double dtype_min_normal(DType t);
// The dtype names, for error messages: "f16, bf16, f32, ...".
std::string_view dtype_names();

// Reads element `i` of a buffer of type `t` as a double, and writes one.
double load_element(const void* data, DType t, size_t i);
void store_element(void* data, DType t, size_t i, double v);

uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t h);
uint8_t float_to_e4m3(float f);
float e4m3_to_float(uint8_t b);
uint8_t float_to_e5m2(float f);
float e5m2_to_float(uint8_t b);

}  // namespace ptxforge::task
