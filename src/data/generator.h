// Generated CUDA C++ kernels for a CUDA→PTX training corpus: a few hand-written kernels teach
// a model little, so this draws hundreds of different but valid translation units from six
// families (element-wise expressions, reductions, scans, stencils, transposes, tiled GEMMs),
// each with the knobs that change what nvcc emits: dtype (float, double, int, __half,
// __nv_bfloat16, __nv_fp8_e4m3), block size, vector width, unrolling, grid-stride loops,
// __restrict__, launch bounds, shared-memory layout. The caller compiles them with nvcc.
//
// Deterministic: one splitmix64 stream drives every choice, so the same (seed, count) gives
// byte-identical kernels on every platform and standard library, and a longer run extends a
// shorter one with the same seed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ptxforge::data {

struct GeneratedKernel {
  std::string name;    // unique within a call, e.g. "ew_f32_v4_u2_0017"; the first kernel's symbol
  std::string family;  // one of kernel_families()
  std::string source;  // a complete .cu translation unit; every __global__ in it is extern "C"
  // The knobs chosen, for the dataset card. Always present: "family", "dtype" (a tag of
  // kernel_dtypes()), "block" (threads per block) and "kernels" (the extern "C" symbols,
  // comma-separated, the first being `name`).
  std::map<std::string, std::string> params;
};

// "elementwise", "reduction", "scan", "stencil", "transpose", "gemm".
const std::vector<std::string>& kernel_families();
// The dtype tags params["dtype"] takes: "f32", "f64", "i32", "f16", "bf16", "fp8".
const std::vector<std::string>& kernel_dtypes();

// `count` kernels (none for count <= 0). Every family appears once count >= 7, and every
// dtype a family supports once that family has appeared six times. The sources compile with
// `nvcc -ptx` for sm_80 and later (sm_90a included): nothing above sm_80 is used.
std::vector<GeneratedKernel> generate_kernels(uint64_t seed, int count);

}  // namespace ptxforge::data
