// The nvcc baseline: the textbook 16x16 shared-memory tiled product, one output per thread,
// bf16 inputs widened to f32 and accumulated in f32 on the CUDA cores.
#include <cuda_bf16.h>

extern "C" __global__ void bgemm_ref(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, unsigned m, unsigned n, unsigned k) {
  __shared__ float as[16][16], bs[16][16];
  unsigned row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  float s = 0.0f;
  for (unsigned t = 0; t < k; t += 16) {
    as[threadIdx.y][threadIdx.x] = row < m && t + threadIdx.x < k ? __bfloat162float(a[(size_t)row * k + t + threadIdx.x]) : 0.0f;
    bs[threadIdx.y][threadIdx.x] = col < n && t + threadIdx.y < k ? __bfloat162float(b[(size_t)(t + threadIdx.y) * n + col]) : 0.0f;
    __syncthreads();
    for (int i = 0; i < 16; ++i) s += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[(size_t)row * n + col] = s;
}
