// The nvcc baseline: a plain shared-memory tiled product on the CUDA cores. Each block of 256
// threads computes a 64 x 64 tile of C, each thread 4 x 4 outputs (rows ty + 16i, columns
// tx + 16j), over k in steps of 16. Each e4m3 input is widened to f32 and multiplied by its
// block's scale 2^(s - 127) (exact: a power of two), the sums kept in f32 and rounded to bf16
// once at the end. It ignores the tensor maps (passed by value all the same).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>

// The byte of scale block kb (k / 32) of row r in the task's tiled layout: 512-byte tiles of 128
// rows x 4 blocks, k-tiles of a row of tiles consecutive; inside a tile row r % 32 holds 16
// bytes, the words of rows r % 32 + 32 j, byte kb % 4 of each.
__device__ __forceinline__ size_t scale_offset(unsigned r, unsigned kb, unsigned k_tiles) {
  return (static_cast<size_t>(r / 128) * k_tiles + kb / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + kb % 4;
}

__device__ __forceinline__ float scale_of(const uint8_t* sf, unsigned r, unsigned kk, unsigned k_tiles) {
  return ldexpf(1.0f, static_cast<int>(sf[scale_offset(r, kk / 32, k_tiles)]) - 127);  // exact
}

extern "C" __global__ void mxfp8_gemm_ref(const __nv_fp8_e4m3* a, const __grid_constant__ CUtensorMap, const uint8_t* sfa,
                                          const __nv_fp8_e4m3* b, const __grid_constant__ CUtensorMap, const uint8_t* sfb,
                                          __nv_bfloat16* c, unsigned m, unsigned n, unsigned k) {
  __shared__ float as[16][65], bs[16][65];  // [k][row of A] and [k][row of B], scaled
  const unsigned tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const unsigned row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  const unsigned k_tiles = (k + 127) / 128;
  float s[4][4] = {};
  for (unsigned t = 0; t < k; t += 16) {
    for (unsigned i = threadIdx.x; i < 64 * 16; i += 256) {
      unsigned r = i / 16, kk = i % 16;
      bool in_k = t + kk < k;
      as[kk][r] = row0 + r < m && in_k
                      ? static_cast<float>(a[(size_t)(row0 + r) * k + t + kk]) * scale_of(sfa, row0 + r, t + kk, k_tiles)
                      : 0.0f;
      bs[kk][r] = col0 + r < n && in_k
                      ? static_cast<float>(b[(size_t)(col0 + r) * k + t + kk]) * scale_of(sfb, col0 + r, t + kk, k_tiles)
                      : 0.0f;
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
