// The nvcc baseline: attention row by row on the CUDA cores, with the online softmax. One warp
// per query row, 8 rows per block of 256 threads; the block stages 32 keys and their values at
// a time in shared memory (as f32), and each warp walks them one by one: every lane holds 4 of
// the 128 dimensions of q, of the output and of each key and value, the score is the warp's sum
// of its lanes' 4-term dot products, and the running maximum m, the running sum l and the
// output are rescaled whenever the maximum grows. Everything is f32 (expf, logf); o is rounded
// to bf16 once at the end.
#include <cuda_bf16.h>
#include <math.h>

extern "C" __global__ void flash_attn_ref(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                          __nv_bfloat16* o, float* lse, unsigned b, unsigned h, unsigned s,
                                          unsigned causal) {
  constexpr unsigned D = 128, KEYS = 32, ROWS = 8;
  constexpr float scale = 0.08838834764831845f;  // 1 / sqrt(128)
  __shared__ float ks[KEYS][D], vs[KEYS][D];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned row = blockIdx.x * ROWS + warp;
  const size_t slab = static_cast<size_t>(blockIdx.y) * s * D;  // this (batch, head)'s matrices
  const bool live = row < s;

  float qr[4], acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int i = 0; i < 4; ++i) qr[i] = live ? __bfloat162float(q[slab + static_cast<size_t>(row) * D + lane * 4 + i]) : 0.0f;
  float m = -INFINITY, l = 0.0f;

  // The keys any row of this block may see: all s, or (causal) up to the block's last row.
  const unsigned last = min(s, blockIdx.x * ROWS + ROWS);
  const unsigned keys = causal ? last : s;
  for (unsigned k0 = 0; k0 < keys; k0 += KEYS) {
    __syncthreads();  // the previous tile is no longer read
    for (unsigned i = threadIdx.x; i < KEYS * D; i += blockDim.x) {
      const unsigned key = k0 + i / D;
      const size_t at = slab + static_cast<size_t>(key) * D + i % D;
      ks[i / D][i % D] = key < s ? __bfloat162float(k[at]) : 0.0f;
      vs[i / D][i % D] = key < s ? __bfloat162float(v[at]) : 0.0f;
    }
    __syncthreads();
    if (!live) continue;
    for (unsigned j = 0; j < KEYS; ++j) {
      const unsigned key = k0 + j;
      if (key >= s || (causal && key > row)) break;  // the same for the whole warp
      float dot = 0.0f;
      for (int i = 0; i < 4; ++i) dot += qr[i] * ks[j][lane * 4 + i];
      for (int off = 16; off > 0; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
      const float score = dot * scale;
      const float m_new = fmaxf(m, score);
      const float shrink = expf(m - m_new), p = expf(score - m_new);
      l = l * shrink + p;
      for (int i = 0; i < 4; ++i) acc[i] = acc[i] * shrink + p * vs[j][lane * 4 + i];
      m = m_new;
    }
  }
  if (!live) return;
  for (int i = 0; i < 4; ++i) o[slab + static_cast<size_t>(row) * D + lane * 4 + i] = __float2bfloat16_rn(acc[i] / l);
  if (lane == 0) lse[static_cast<size_t>(blockIdx.y) * s + row] = m + logf(l);
}
