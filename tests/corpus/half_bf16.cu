// Corpus source for the front-end tests: compiled by nvcc during the test.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void hmath(const __half* a, const __nv_bfloat16* b, __half* c, __nv_bfloat16* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { c[i] = __hfma(a[i], a[i], __float2half(1.0f)); d[i] = __hmul(b[i], __float2bfloat16(2.0f)); }
}
__global__ void h2(const __half2* a, __half2* b, int n) { int i = threadIdx.x; if (i < n) b[i] = __hadd2(a[i], h2exp(a[i])); }
