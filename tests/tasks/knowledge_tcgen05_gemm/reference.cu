// C = A Bᵀ, bf16 in, f32 out, one thread per element of C with an f32 sum over k.
#include <cuda_bf16.h>

extern "C" __global__ void tc_gemm_ref(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, unsigned m,
                                       unsigned n, unsigned k) {
  unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  float s = 0.0f;
  for (unsigned i = 0; i < k; ++i)
    s += __bfloat162float(a[(size_t)row * k + i]) * __bfloat162float(b[(size_t)col * k + i]);
  c[(size_t)row * n + col] = s;
}
