// Element types of task buffers and scalars, with their sizes and the conversions the host
// side needs (generating inputs, comparing outputs). Half types are converted in software so
// the host code needs no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxforge::task {

enum class DType { f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64 };

std::optional<DType> parse_dtype(std::string_view name);
std::string_view dtype_name(DType t);
size_t dtype_size(DType t);
bool is_float(DType t);

// Reads element `i` of a buffer of type `t` as a double, and writes one.
double load_element(const void* data, DType t, size_t i);
void store_element(void* data, DType t, size_t i, double v);

uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t h);

}  // namespace ptxforge::task
