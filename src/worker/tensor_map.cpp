#include "worker/tensor_map.h"

#include <fmt/format.h>

namespace ptxforge::gpu {

namespace {

Result<CUtensorMapDataType> data_type(task::DType t) {
  using task::DType;
  switch (t) {
    case DType::u8:
    case DType::e4m3:  // TMA moves 8-bit floats as bytes
    case DType::e5m2: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case DType::u16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case DType::u32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case DType::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DType::u64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    case DType::i64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    default: return Error{fmt::format("TMA has no element type for {}", task::dtype_name(t))};
  }
}

}  // namespace

Result<CUtensorMap> encode_tensor_map(const Driver& d, const task::Param& map, const task::TensorMapChoice& choice,
                                      task::DType element, CUdeviceptr base, const task::Bindings& symbols) {
  auto dt = data_type(element);
  if (!dt) return dt.error();
  const size_t rank = map.dims.size();
  cuuint64_t dims[5] = {}, strides[5] = {};
  cuuint32_t box[5] = {}, elem_strides[5] = {1, 1, 1, 1, 1};
  for (size_t i = 0; i < rank; ++i) {
    auto v = map.dims[i].evaluate_int(symbols);
    if (!v) return v.error();
    dims[i] = static_cast<cuuint64_t>(*v);
    auto b = choice.box[i].evaluate_int(symbols);
    if (!b) return b.error();
    if (*b < 1 || *b > 256) return Error{fmt::format("box dimension {} is {}; TMA boxes are 1..256 elements", i, *b)};
    box[i] = static_cast<cuuint32_t>(*b);
  }
  for (size_t i = 0; i + 1 < rank; ++i) {
    auto s = map.strides[i].evaluate_int(symbols);
    if (!s) return s.error();
    if (*s % 16) return Error{fmt::format("stride {} is {} bytes; TMA strides must be multiples of 16", i + 1, *s)};
    strides[i] = static_cast<cuuint64_t>(*s);
  }
  auto swizzle = choice.swizzle == "32B"    ? CU_TENSOR_MAP_SWIZZLE_32B
                 : choice.swizzle == "64B"  ? CU_TENSOR_MAP_SWIZZLE_64B
                 : choice.swizzle == "128B" ? CU_TENSOR_MAP_SWIZZLE_128B
                                            : CU_TENSOR_MAP_SWIZZLE_NONE;
  auto interleave = choice.interleave == "16B"   ? CU_TENSOR_MAP_INTERLEAVE_16B
                    : choice.interleave == "32B" ? CU_TENSOR_MAP_INTERLEAVE_32B
                                                 : CU_TENSOR_MAP_INTERLEAVE_NONE;
  auto l2 = choice.l2_promotion == "64B"    ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
            : choice.l2_promotion == "128B" ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
            : choice.l2_promotion == "256B" ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                                            : CU_TENSOR_MAP_L2_PROMOTION_NONE;
  auto oob = choice.oob_fill == "nan" ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  CUtensorMap m{};
  CUresult r = d.cuTensorMapEncodeTiled(&m, *dt, static_cast<cuuint32_t>(rank), reinterpret_cast<void*>(base), dims,
                                        strides, box, elem_strides, interleave, swizzle, l2, oob);
  if (r != CUDA_SUCCESS)
    return Error{fmt::format("cuTensorMapEncodeTiled rejected the choices (box, swizzle, strides): {}", describe(r))};
  return m;
}

}  // namespace ptxforge::gpu
