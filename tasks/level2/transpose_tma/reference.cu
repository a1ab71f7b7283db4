// The nvcc baseline: the classic shared-memory transpose (32x32 tiles, padded rows, 32x8
// threads), coalesced on both sides. It ignores the tensor maps (passed by value all the same).
#include <cuda.h>

extern "C" __global__ void transpose_ref(const float* in, const __grid_constant__ CUtensorMap, float* out,
                                         const __grid_constant__ CUtensorMap, unsigned rows, unsigned cols) {
  __shared__ float tile[32][33];
  unsigned x0 = blockIdx.x * 32, y0 = blockIdx.y * 32;
  for (unsigned i = threadIdx.y; i < 32; i += 8) {
    unsigned r = y0 + i, c = x0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = in[(size_t)r * cols + c];
  }
  __syncthreads();
  for (unsigned i = threadIdx.y; i < 32; i += 8) {
    unsigned c = x0 + i, r = y0 + threadIdx.x;
    if (r < rows && c < cols) out[(size_t)c * rows + r] = tile[threadIdx.x][i];
  }
}
