// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90 sm_90a
#include <cuda_fp8.h>
__global__ void to_fp8(const float* in, __nv_fp8x2_e4m3* out, __nv_fp8_e5m2* o2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { out[i] = __nv_fp8x2_e4m3(make_float2(in[2 * i], in[2 * i + 1])); o2[i] = __nv_fp8_e5m2(in[i]); }
}
