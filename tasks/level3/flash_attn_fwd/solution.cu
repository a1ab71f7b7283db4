// @launch grid=(ceil_div(s, 128), b * h, 1) block=(256, 1, 1) smem=98304
//
// Attention forward (FlashAttention-2 style), bf16 in / bf16 out, head dim 128, f32 softmax, plus
// the log-sum-exp of every row. q, k, v, o are [b][h][s][128]; (batch, head) pair bh is the s x 128
// slab starting at element bh * s * 128. Both products run on mma.sync m16n8k16 (bf16, f32 acc).
//
// Design
//   * One block = 128 query rows of one (batch, head), 8 warps (256 threads), warp w owning rows
//     16w .. 16w+15 of the block (one m16 tile). Grid = (ceil_div(s, 128), b * h). Without the mask
//     blockIdx.x is the query block and blockIdx.y the pair (the blocks resident together share a
//     pair's K and V in L2). Under the causal mask the linear block id is remapped so that the
//     pair varies fastest and the query blocks go from the last (heaviest: most keys) to the first:
//     the longest blocks are dispatched first and the light ones fill the tail.
//   * The warp's Q fragment (16 rows x 128 dims = 8 k16 steps x 4 registers) is loaded once from
//     shared memory with ldmatrix and kept in registers. The O accumulator is 16 x 128 f32 per warp
//     = 16 n8 tiles x 4 = 64 registers a thread.
//   * Keys go by tiles of Bc = 64. Per tile: S = Q Kᵀ (16 x 64 per warp: 8 n8 tiles, 64 mma),
//     masking (only in a tile that crosses s, or the causal diagonal), the online softmax in the
//     exp2 domain (running max m of the raw dot products; p = 2^(dot * c - m * c), c = log2(e) /
//     sqrt(128); row maxima reduced over the 4 lanes of a quad, row sums kept per thread and
//     reduced once at the end), O rescaled by 2^((m_old - m_new) c), P converted to bf16 straight
//     from the S accumulators into A fragments (below), then O += P V (64 mma).
//   * Causal: the tile loop ends with the tile holding the block's last row; a warp whose 16 rows
//     all lie before a tile's first key skips that tile's arithmetic (it still takes part in the
//     barriers and the copies).
//   * Shared memory (dynamic, 96 KiB): Q 128 x 128 bf16 (32 KiB) at 0; K at 32 KiB and V at
//     64 KiB, two stages of 64 x 128 bf16 (16 KiB) each. Every tile is rows of 256 bytes = 16
//     chunks of 16 bytes, chunk c of row r stored at r * 256 + ((c ^ (r & 7)) << 4): the 8 row
//     addresses of every 8x8 ldmatrix matrix (8 consecutive rows from a multiple of 8, one
//     logical chunk) land in 8 different 16-byte bank groups, and the cp.async stores of a warp
//     (2 whole rows) cover all banks evenly: no conflicts.
//   * cp.async.cg 16-byte copies; rows at or past s are zero-filled (src-size 0, the source
//     address is then the slab start and nothing is read). K and V of a tile are separate commit
//     groups, committed in the order K0 V0 K1 V1 K2 ... (a group is committed even when empty so
//     the counting stays uniform). Tile j: [A] wait_group 2 (K_j landed; V_j and K_{j+1} may
//     still fly) + barrier, then V_{j+1} is issued into the other V stage (last read by P V of
//     tile j-1, which every warp finished before A); S and the softmax; [B] wait_group 2 (V_j
//     landed; K_{j+1} and V_{j+1} may fly) + barrier, then K_{j+2} is issued into K stage j & 1
//     (last read by S of tile j, which every warp finished before B); O += P V.
//   * Epilogue: O / l rounded to bf16, staged in the warp's own 16 rows of the Q area (only this
//     warp ever read them) with the same swizzle, read back as 16-byte chunks and stored with
//     16-byte global stores (two full 256-byte rows per warp instruction), rows >= s skipped.
//     lse = (m c + log2 l) ln 2, written by lane t == 0 of each quad for its two rows.
//
// ---------------------------------------------------------------------------------------------
// Fragment layouts (PTX ISA, mma.m16n8k16 with .bf16; g = lane >> 2, t = lane & 3):
//   A (16 x 16, row): a0 = A[g][2t, 2t+1]  a1 = A[g+8][2t, 2t+1]  a2 = A[g][2t+8, 2t+9]
//                     a3 = A[g+8][2t+8, 2t+9]    (two bf16 per register, lower column in the low half)
//   B (16 x 8, col):  b0 = B[2t, 2t+1][g]   b1 = B[2t+8, 2t+9][g]          (B[k][n])
//   C (16 x 8, f32):  c0, c1 = C[g][2t, 2t+1]   c2, c3 = C[g+8][2t, 2t+1]
// ldmatrix.m8n8.x4: lane L gives the address of row (L & 7) of matrix (L >> 3); matrix j lands
//   in rj. Without .trans lane L gets M[g][2t], M[g][2t+1]; with .trans M[2t][g], M[2t+1][g].
//
// Q (A of S = Q Kᵀ), k16 step kk: lane L points at Q[16w + (L & 15)][16kk + 8 (L >> 4)]:
//   matrices = (rows 0-7, k lo), (rows 8-15, k lo), (rows 0-7, k hi), (rows 8-15, k hi) = a0..a3.
// K (B of S, B[k = dim][n = key] = K[key][dim], "col" = K's rows): for keys 16np .. 16np+15 and
//   dims 16kk .. +15, lane L points at K[16np + (L & 7) + 8 (L >> 4)][16kk + 8 ((L >> 3) & 1)].
//   Non-transposed, matrix 0 (keys +0-7, dims lo) gives lane L K[16np+g][16kk+2t, +1] = b0 of
//   n-tile 2np; matrix 1 (same keys, dims hi) = b1 of 2np; matrices 2, 3 (keys +8-15) = b0, b1
//   of n-tile 2np+1.
// P (A of O += P V), k16 step kk = keys 16kk .. +15 = S n-tiles 2kk and 2kk+1: the C layout of
//   those tiles is exactly the A layout: a0 = S[2kk].c0,c1 (row g, keys 2t, 2t+1), a1 =
//   S[2kk].c2,c3 (row g+8), a2 = S[2kk+1].c0,c1 (row g, keys 8+2t, +1), a3 = S[2kk+1].c2,c3.
// V (B of P V, B[k = key][n = dim] = V[key][dim], stored k-major): for keys 16kk .. +15 and dims
//   16dp .. +15, lane L points at V[16kk + (L & 15)][16dp + 8 (L >> 4)]. With .trans, matrix 0
//   (keys 0-7, dims lo) gives lane L V[2t][g], V[2t+1][g] = b0 of n-tile 2dp; matrix 1 (keys
//   8-15, dims lo) = b1 of 2dp; matrices 2, 3 (dims hi) = b0, b1 of n-tile 2dp+1.
// Swizzle shortcuts: every ldmatrix row above has (row & 7) == (L & 7) and a logical chunk
//   2x + bit with bit in {0, 1}, so its swizzled byte offset is (offset for x = 0) ^ (x * 32):
//   the XOR touches only bits 5-7 of the chunk field, never the row part.
// ---------------------------------------------------------------------------------------------
#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr unsigned D = 128;                        // head dimension
constexpr unsigned BR = 128;                       // query rows per block (8 warps x 16)
constexpr unsigned BC = 64;                        // keys per tile
constexpr unsigned NTHREADS = 256;
constexpr unsigned ROW_BYTES = D * 2;              // 256: one row of any tile
constexpr unsigned Q_BYTES = BR * ROW_BYTES;       // 32 KiB
constexpr unsigned KV_BYTES = BC * ROW_BYTES;      // 16 KiB: one K or V stage
constexpr unsigned K_OFF = Q_BYTES;                // K stages 0, 1
constexpr unsigned V_OFF = Q_BYTES + 2 * KV_BYTES; // V stages 0, 1
constexpr unsigned SMEM_BYTES = Q_BYTES + 4 * KV_BYTES;
static_assert(SMEM_BYTES == 98304, "keep the launch line's smem= in step");
constexpr float SCALE_LOG2E = 0.08838834764831845f * 1.4426950408889634f;  // log2(e) / sqrt(128)
constexpr float LN2 = 0.6931471805599453f;

__device__ __forceinline__ unsigned swz(unsigned row, unsigned chunk) {
  return row * ROW_BYTES + ((chunk ^ (row & 7u)) << 4);
}
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, unsigned src_size) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src)),
               "r"(src_size)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
__device__ __forceinline__ void ldsm_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ float ex2(float x) {  // 2^x; ex2(-inf) = +0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {  // lo -> low half (lower column)
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Copies rows row0 .. row0 + ROWS - 1 of an s x 128 slab into a swizzled tile at dst (shared
// address); rows >= s become zeros. Thread tid moves chunk tid & 15 of tile rows (tid >> 4) + 16 i.
template <unsigned ROWS>
__device__ __forceinline__ void load_tile(unsigned dst, const __nv_bfloat16* slab, unsigned row0, unsigned s,
                                          unsigned tid) {
  const unsigned chunk = tid & 15u, r = tid >> 4;
  const unsigned dst0 = dst + swz(r, chunk);  // (r + 16 i) & 7 == r & 7: + i * 16 rows
#pragma unroll
  for (unsigned i = 0; i < ROWS / 16; ++i) {
    const unsigned grow = row0 + r + 16u * i;
    const bool ok = grow < s;
    const __nv_bfloat16* src = ok ? slab + (size_t)grow * D + chunk * 8u : slab;
    cp_async_16(dst0 + i * 16u * ROW_BYTES, src, ok ? 16u : 0u);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(NTHREADS, 1)
    flash_attn_fwd(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                   float* lse, unsigned b, unsigned h, unsigned s, unsigned causal) {
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
  const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  const unsigned g = lane >> 2, t = lane & 3u;

  // ---- which (query block, pair) this block computes ----
  unsigned qb, bh;
  if (causal) {  // pair fastest, query blocks from the last (most keys) to the first
    const unsigned lin = blockIdx.y * gridDim.x + blockIdx.x;
    qb = gridDim.x - 1u - lin / gridDim.y;
    bh = lin % gridDim.y;
  } else {
    qb = blockIdx.x;
    bh = blockIdx.y;
  }
  const unsigned q0 = qb * BR;
  if (bh >= b * h || q0 >= s) return;  // not with the launch line's grid; whole block leaves
  const size_t slab = (size_t)bh * s * D;
  const __nv_bfloat16* qg = q + slab;
  const __nv_bfloat16* kg = k + slab;
  const __nv_bfloat16* vg = v + slab;

  // Key tiles: all of s, or (causal) up to the block's last row.
  const unsigned kv_end = causal ? min(s, q0 + BR) : s;
  const unsigned nt = (kv_end + BC - 1u) / BC;

  // ---- prologue: groups [Q + K0], [V0], [K1] ----
  load_tile<BR>(sbase, qg, q0, s, tid);
  load_tile<BC>(sbase + K_OFF, kg, 0, s, tid);
  cp_async_commit();
  load_tile<BC>(sbase + V_OFF, vg, 0, s, tid);
  cp_async_commit();
  if (nt > 1u) load_tile<BC>(sbase + K_OFF + KV_BYTES, kg, BC, s, tid);
  cp_async_commit();
  cp_async_wait<2>();  // Q and K0 (this thread's copies)
  __syncthreads();     // everyone's copies

  unsigned qf[8][4];  // Q A-fragments, k16 steps kk = 0..7
  {
    const unsigned q_ld = swz(warp * 16u + (lane & 15u), lane >> 4);
#pragma unroll
    for (unsigned kk = 0; kk < 8; ++kk) ldsm_x4(qf[kk], sbase + (q_ld ^ (kk * 32u)));
  }
  const unsigned k_ld = swz((lane & 7u) + ((lane >> 4) << 3), (lane >> 3) & 1u);  // + np * 16 rows, ^ kk * 32
  const unsigned v_ld = swz(lane & 15u, lane >> 4);                               // + kk * 16 rows, ^ dp * 32

  float acc[16][4];  // O: n-tile d covers dims 8d .. 8d+7
#pragma unroll
  for (int d = 0; d < 16; ++d)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[d][e] = 0.0f;
  float m_run[2] = {-INFINITY, -INFINITY};  // running max of the raw dot products, rows g, g+8
  float l_run[2] = {0.0f, 0.0f};            // this thread's part of the running sum (scaled to m_run)
  const unsigned row_lo = q0 + warp * 16u;  // first query row of this warp
  const unsigned row_of[2] = {row_lo + g, row_lo + g + 8u};

#pragma unroll 1
  for (unsigned j = 0; j < nt; ++j) {
    const unsigned st = j & 1u;
    const unsigned key0 = j * BC;

    // [A] K_j has landed (V_j, K_{j+1} may be in flight); every warp is done with P V of tile
    // j-1, so V stage st ^ 1 can be refilled.
    cp_async_wait<2>();
    __syncthreads();
    if (j + 1u < nt) load_tile<BC>(sbase + V_OFF + (st ^ 1u) * KV_BYTES, vg, key0 + BC, s, tid);
    cp_async_commit();

    // Under the mask a warp whose rows all precede key0 has nothing in this tile (warp-uniform).
    const bool active = !causal || key0 <= row_lo + 15u;
    unsigned pf[4][4];  // P A-fragments, k16 steps over keys 16kk .. 16kk+15
    if (active) {
      float sacc[8][4];  // S: n-tile n covers keys key0 + 8n .. +7
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) sacc[n][e] = 0.0f;
      const unsigned kb = sbase + K_OFF + st * KV_BYTES + k_ld;
#pragma unroll
      for (unsigned kk = 0; kk < 8; ++kk)
#pragma unroll
        for (unsigned np = 0; np < 4; ++np) {
          unsigned kf[4];
          ldsm_x4(kf, (kb + np * 16u * ROW_BYTES) ^ (kk * 32u));
          mma_bf16(sacc[2 * np], qf[kk], kf[0], kf[1]);
          mma_bf16(sacc[2 * np + 1], qf[kk], kf[2], kf[3]);
        }

      // Mask keys >= s and (causal) keys > row. Only tiles crossing s or the diagonal need it.
      if (key0 + BC > s || (causal && key0 + BC - 1u > row_lo)) {
#pragma unroll
        for (unsigned n = 0; n < 8; ++n)
#pragma unroll
          for (unsigned e = 0; e < 4; ++e) {
            const unsigned key = key0 + 8u * n + 2u * t + (e & 1u);
            if (key >= s || (causal && key > row_of[e >> 1])) sacc[n][e] = -INFINITY;
          }
      }

      // Online softmax, per row half hh (row g: elements 0, 1; row g + 8: elements 2, 3).
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        float mx = m_run[hh];
#pragma unroll
        for (int n = 0; n < 8; ++n) mx = fmaxf(mx, fmaxf(sacc[n][2 * hh], sacc[n][2 * hh + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        // mx is finite here (key 0 is visible to every row); the guard keeps -inf - -inf out anyway.
        const float mc = (mx == -INFINITY) ? 0.0f : mx * SCALE_LOG2E;
        const float alpha = ex2(m_run[hh] * SCALE_LOG2E - mc);  // 0 on the first tile
        m_run[hh] = mx;
        float rs = 0.0f;
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float p = ex2(fmaf(sacc[n][2 * hh + e], SCALE_LOG2E, -mc));
            sacc[n][2 * hh + e] = p;
            rs += p;
          }
        l_run[hh] = l_run[hh] * alpha + rs;
#pragma unroll
        for (int d = 0; d < 16; ++d) {
          acc[d][2 * hh] *= alpha;
          acc[d][2 * hh + 1] *= alpha;
        }
      }
      // P to bf16 A fragments (C layout of n-tiles 2kk, 2kk+1 == A layout of k16 step kk).
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        pf[kk][0] = pack_bf16(sacc[2 * kk][0], sacc[2 * kk][1]);
        pf[kk][1] = pack_bf16(sacc[2 * kk][2], sacc[2 * kk][3]);
        pf[kk][2] = pack_bf16(sacc[2 * kk + 1][0], sacc[2 * kk + 1][1]);
        pf[kk][3] = pack_bf16(sacc[2 * kk + 1][2], sacc[2 * kk + 1][3]);
      }
    }

    // [B] V_j has landed (K_{j+1}, V_{j+1} may be in flight); every warp is done with S of
    // tile j, so K stage st can take K_{j+2}.
    cp_async_wait<2>();
    __syncthreads();
    if (j + 2u < nt) load_tile<BC>(sbase + K_OFF + st * KV_BYTES, kg, key0 + 2u * BC, s, tid);
    cp_async_commit();

    if (active) {
      const unsigned vb = sbase + V_OFF + st * KV_BYTES + v_ld;
#pragma unroll
      for (unsigned kk = 0; kk < 4; ++kk)
#pragma unroll
        for (unsigned dp = 0; dp < 8; ++dp) {
          unsigned vf[4];
          ldsm_x4_trans(vf, (vb + kk * 16u * ROW_BYTES) ^ (dp * 32u));
          mma_bf16(acc[2 * dp], pf[kk], vf[0], vf[1]);
          mma_bf16(acc[2 * dp + 1], pf[kk], vf[2], vf[3]);
        }
    }
  }
  cp_async_wait<0>();  // only empty groups can remain; drain them

  // ---- epilogue ----
  float inv[2];
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    float l = l_run[hh];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    inv[hh] = 1.0f / l;
    if (t == 0u && row_of[hh] < s)
      lse[(size_t)bh * s + row_of[hh]] = (m_run[hh] * SCALE_LOG2E + __log2f(l)) * LN2;
  }
  // Stage the warp's 16 x 128 bf16 rows in its own (swizzled) rows of the Q area.
  unsigned char* stage = smem + warp * 16u * ROW_BYTES;
  __syncwarp();
#pragma unroll
  for (unsigned d = 0; d < 16; ++d) {
    *reinterpret_cast<unsigned*>(stage + swz(g, d) + 4u * t) = pack_bf16(acc[d][0] * inv[0], acc[d][1] * inv[0]);
    *reinterpret_cast<unsigned*>(stage + swz(g + 8u, d) + 4u * t) =
        pack_bf16(acc[d][2] * inv[1], acc[d][3] * inv[1]);
  }
  __syncwarp();
#pragma unroll
  for (unsigned i = 0; i < 8; ++i) {
    const unsigned idx = lane + 32u * i, r = idx >> 4, chunk = idx & 15u;
    const uint4 val = *reinterpret_cast<const uint4*>(stage + swz(r, chunk));
    if (row_lo + r < s) *reinterpret_cast<uint4*>(o + slab + (size_t)(row_lo + r) * D + chunk * 8u) = val;
  }
}
