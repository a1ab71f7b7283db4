// The nvcc baseline: a plain shared-memory tiled product on the CUDA cores. Each block of 256
// threads computes a 64 x 64 tile of C, each thread 4 x 4 outputs (rows ty + 16i, columns
// tx + 16j), over k in steps of 16; bf16 inputs are widened to f32, the sums kept in f32 and
// rounded to bf16 once at the end. It ignores the tensor maps (passed by value all the same).
#include <cuda.h>
#include <cuda_bf16.h>

extern "C" __global__ void bgemm_tc_ref(const __nv_bfloat16* a, const __grid_constant__ CUtensorMap,
                                        const __nv_bfloat16* b, const __grid_constant__ CUtensorMap, __nv_bfloat16* c,
                                        unsigned m, unsigned n, unsigned k) {
  __shared__ float as[16][65], bs[16][65];  // [k][row of A] and [k][row of B]
  const unsigned tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const unsigned row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  float s[4][4] = {};
  for (unsigned t = 0; t < k; t += 16) {
    for (unsigned i = threadIdx.x; i < 64 * 16; i += 256) {
      unsigned r = i / 16, kk = i % 16;
      bool in_k = t + kk < k;
      as[kk][r] = row0 + r < m && in_k ? __bfloat162float(a[(size_t)(row0 + r) * k + t + kk]) : 0.0f;
      bs[kk][r] = col0 + r < n && in_k ? __bfloat162float(b[(size_t)(col0 + r) * k + t + kk]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) s[i][j] += as[kk][ty + 16 * i] * bs[kk][tx + 16 * j];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      unsigned row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
      if (row < m && col < n) c[(size_t)row * n + col] = __float2bfloat16_rn(s[i][j]);
    }
}
