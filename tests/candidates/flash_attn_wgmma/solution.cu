// @launch grid=(ceil_div(s, 128), b * h, 1) block=(256, 1, 1) smem=164864
//
// Attention forward (FlashAttention-3 style products on Hopper's wgmma), bf16 in / bf16 out, head
// dim 128, f32 online softmax, plus the natural-log log-sum-exp of every row. q, k, v, o are
// [b][h][s][128]; (batch, head) pair bh is the s x 128 slab starting at element bh * s * 128. sm_90a.
// solution.ptx is this file through nvcc 13: `nvcc -arch=sm_90a -ptx -O3 solution.cu`, with the
// @launch line above copied to its top.
//
// Design
//   * One block = 128 query rows of one (batch, head) pair, 2 warpgroups (256 threads); warpgroup
//     w owns rows 64w .. 64w+63 of the block (one wgmma M = 64). Grid = (ceil_div(s, 128), b * h),
//     remapped under the causal mask so the heaviest query blocks (most keys) go first (as in the
//     mma.sync solution of the task).
//   * Keys go by tiles of BC = 128. Per tile and warpgroup:
//       S (64 x 128, f32, 64 registers a thread) = Q Kᵀ: 8 wgmma m64n128k16, A = Q and B = K both
//         from shared memory, K-major (d contiguous), 128-byte swizzle;
//       masking (only a tile crossing s or the causal diagonal), online softmax in the exp2
//         domain (row max over the thread's 32 values + the 4 lanes of a quad);
//       P converted to bf16 straight from the S registers into wgmma's register A fragments;
//       O (64 x 128, f32, 64 registers) += P V: 8 wgmma m64n128k16 with A from registers and
//         B = V from shared memory, N-major (imm-trans-b = 1, d contiguous, 128-byte swizzle).
//   * Overlap inside a warpgroup (FlashAttention-3's intra-warpgroup pipelining): iteration j
//     issues S_j = Q K_jᵀ and then O += P_{j-1} V_{j-1} as two wgmma commit groups, waits for the
//     first only (wait_group 1) and runs the softmax of S_j while the tensor cores do P V; then
//     wait_group 0, O *= alpha_j and P_j is packed for the next iteration. Tile 0 does S_0 alone;
//     P_{nt-1} V_{nt-1} runs after the loop.
//   * Loads: all 256 threads copy with cp.async.cg 16-byte pieces (rows at or past s zero-filled:
//     src-size 0) into two stages of K and two of V. Prologue: group [Q + K_0]. Barrier X_j (one
//     per iteration): cp.async.wait_group 0 (K_j and V_{j-1}), fence.proxy.async (cp.async writes
//     through the generic proxy, wgmma reads through the async proxy: every thread fences its own
//     landed copies), bar.sync; then group [V_j, K_{j+1}] is issued into V stage j & 1 (last read
//     by P V_{j-2}) and K stage (j+1) & 1 (last read by S_{j-1}), both finished before X_j. Every
//     wgmma group is waited for before its registers or its shared memory are reused.
//   * Shared memory (dynamic, 1024-byte aligned base, 160 KiB + 1 KiB slack): Q 128 x 128 at 0,
//     K stages at 32 KiB and 64 KiB, V stages at 96 KiB and 128 KiB. Every tile of R rows x 128
//     dims is 2 panels (dims 0-63, 64-127) of R rows x 128 bytes; 16-byte chunk c of row r of a
//     panel is at r * 128 + ((c ^ (r & 7)) << 4): the 128B-swizzle atom (8 rows x 128 bytes, 1024
//     bytes, 1024-aligned) of wgmma and TMA.
//   * Epilogue: O / l rounded to bf16, staged per warp (16 rows x 256 bytes, XOR-swizzled by chunk)
//     in the Q area (no wgmma reads Q any more by then), then 16-byte global stores; rows >= s
//     skipped. lse = (m c + log2 l) ln 2 by lane t == 0 of each quad.
//   * Earlier versions (NOTES.md has their numbers): the same tiles without the overlap (S,
//     softmax and P V in sequence), 0.666 ms noncausal; this file, 0.644 ms; a warp-specialised
//     one (a producer warp with cp.async + mbarriers, 3 stages, setmaxnreg), 0.91-0.94 ms: one
//     producer warp cannot issue the copies fast enough.
//
// ---------------------------------------------------------------------------------------------
// wgmma descriptors (PTX ISA "Matrix Descriptor Format"): start address >> 4 in bits 0-13, leading
// byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, swizzle mode 1 (128B) in 62-63.
//   K-major (Q as A, K as B of S): rows of 128 bytes, 8-row groups 1024 bytes apart: SBO = 1024,
//     LBO unused (1). k16 step kk: panel kk / 4, + 32 bytes per step inside the panel.
//   N-major (V as B of P V, B[k = key][n = dim]): the swizzle atom is 64 dims (128 bytes) x 8
//     keys; SBO = 1024 (from 8 keys to the next 8), LBO = the panel size (from dims 0-63 to dims
//     64-127) = 128 rows x 128 bytes = 16 KiB. k16 step kk (keys 16kk ..): + 16 rows = 2048 bytes.
//     (Build with -DPV_N64 for the variant with two m64n64k16 per step, one per panel, where
//     LBO does not matter.)
// Fragments (g = lane >> 2, t = lane & 3, warp w4 = warp within the warpgroup):
//   D of m64nNk16 (f32): rows 16 w4 + g and + 8; for each 8-column slice j, columns 8j + 2t, +1:
//     d[4j], d[4j+1] on row g, d[4j+2], d[4j+3] on row g + 8.
//   A from registers (m64nNk16, bf16): warp w4 holds rows 16 w4 .. +15 as mma.m16n8k16's A:
//     a0 = (row g, k 2t, 2t+1), a1 = (row g+8, same k), a2 = (row g, k 2t+8, +9), a3 = (row g+8,
//     k 2t+8, +9). So for the k16 step kk of P V (keys 16kk .. +15 = S slices 2kk, 2kk+1):
//     a0 = S[8kk], S[8kk+1]; a1 = S[8kk+2], S[8kk+3]; a2 = S[8kk+4], S[8kk+5]; a3 = S[8kk+6], +7.
// ---------------------------------------------------------------------------------------------
#include <cuda_bf16.h>
#include <stdint.h>

#define WG_D64 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define WG_D32(OFF) "+f"(d[(OFF) + 0]), "+f"(d[(OFF) + 1]), "+f"(d[(OFF) + 2]), "+f"(d[(OFF) + 3]), "+f"(d[(OFF) + 4]), "+f"(d[(OFF) + 5]), "+f"(d[(OFF) + 6]), "+f"(d[(OFF) + 7]), "+f"(d[(OFF) + 8]), "+f"(d[(OFF) + 9]), "+f"(d[(OFF) + 10]), "+f"(d[(OFF) + 11]), "+f"(d[(OFF) + 12]), "+f"(d[(OFF) + 13]), "+f"(d[(OFF) + 14]), "+f"(d[(OFF) + 15]), "+f"(d[(OFF) + 16]), "+f"(d[(OFF) + 17]), "+f"(d[(OFF) + 18]), "+f"(d[(OFF) + 19]), "+f"(d[(OFF) + 20]), "+f"(d[(OFF) + 21]), "+f"(d[(OFF) + 22]), "+f"(d[(OFF) + 23]), "+f"(d[(OFF) + 24]), "+f"(d[(OFF) + 25]), "+f"(d[(OFF) + 26]), "+f"(d[(OFF) + 27]), "+f"(d[(OFF) + 28]), "+f"(d[(OFF) + 29]), "+f"(d[(OFF) + 30]), "+f"(d[(OFF) + 31])
#define WG_R64 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_R32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"

namespace {

constexpr unsigned D = 128;                  // head dimension
constexpr unsigned BR = 128;                 // query rows per block (2 warpgroups x 64)
constexpr unsigned BC = 128;                 // keys per tile
constexpr unsigned NTHREADS = 256;
constexpr unsigned PANEL_Q = BR * 128;       // one 64-dim panel of the Q tile (16 KiB)
constexpr unsigned PANEL_KV = BC * 128;      // one 64-dim panel of a K or V stage (16 KiB)
constexpr unsigned Q_BYTES = 2 * PANEL_Q;    // 32 KiB
constexpr unsigned KV_BYTES = 2 * PANEL_KV;  // 32 KiB: one K or V stage
constexpr unsigned K_OFF = Q_BYTES;
constexpr unsigned V_OFF = K_OFF + 2 * KV_BYTES;
constexpr unsigned SMEM_BYTES = V_OFF + 2 * KV_BYTES + 1024;  // + alignment slack
static_assert(SMEM_BYTES == 164864, "keep the launch line's smem= in step");
constexpr float SCALE_LOG2E = 0.08838834764831845f * 1.4426950408889634f;  // log2(e) / sqrt(128)
constexpr float LN2 = 0.6931471805599453f;

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
// This thread's landed cp.async writes, made visible to the async proxy (wgmma's operand reads).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

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

__device__ __forceinline__ uint64_t desc_sw128(unsigned addr, unsigned lbo_bytes, unsigned sbo_bytes) {
  return (uint64_t)((addr & 0x3FFFFu) >> 4) | ((uint64_t)(lbo_bytes >> 4) << 16) | ((uint64_t)(sbo_bytes >> 4) << 32) |
         (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// The accumulators change asynchronously: no read of them may move above the wait before this.
__device__ __forceinline__ void fence_regs(float (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d (64 x 128) (+)= A (64 x 16, desc_a, K-major) * B (128 x 16, desc_b, K-major)ᵀ.
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %66, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WG_R64 "}, %64, %65, p, 1, 1, 0, 0;\n\t}\n"
      : WG_D64
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
// d (64 x 128) += A (64 x 16, registers) * B (16 x 128, desc_b, N-major).
[[maybe_unused]] __device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], const unsigned (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 1, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WG_R64 "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n\t}\n"
      : WG_D64
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}
// d[OFF .. OFF+31] (64 x 64) += A (64 x 16, registers) * B (16 x 64, desc_b, N-major).
template <int OFF>
[[maybe_unused]] __device__ __forceinline__ void wgmma_rs_n64(float (&d)[64], const unsigned (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 1, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" WG_R32 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n\t}\n"
      : WG_D32(OFF)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

// Copies rows row0 .. row0 + ROWS - 1 of an s x 128 slab into the 2-panel swizzled tile at dst
// (shared address); rows >= s become zeros. Thread tid moves chunk tid & 15 of rows (tid >> 4) + 16 i.
template <unsigned ROWS>
__device__ __forceinline__ void load_tile(unsigned dst, const __nv_bfloat16* slab, unsigned row0, unsigned s,
                                          unsigned tid) {
  const unsigned chunk = tid & 15u, r = tid >> 4;
  // (r + 16 i) & 7 == r & 7: row r + 16 i is + i * 2048 bytes.
  const unsigned dst0 = dst + (chunk >> 3) * (ROWS * 128u) + r * 128u + (((chunk & 7u) ^ (r & 7u)) << 4);
#pragma unroll
  for (unsigned i = 0; i < ROWS / 16; ++i) {
    const unsigned grow = row0 + r + 16u * i;
    const bool ok = grow < s;
    const __nv_bfloat16* src = ok ? slab + (size_t)grow * D + chunk * 8u : slab;
    cp_async_16(dst0 + i * 2048u, src, ok ? 16u : 0u);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(NTHREADS, 1)
    flash_attn_fwd(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                   float* lse, unsigned b, unsigned h, unsigned s, unsigned causal) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const unsigned raw = (unsigned)__cvta_generic_to_shared(smem_raw);
  const unsigned pad = (1024u - (raw & 1023u)) & 1023u;
  const unsigned sbase = raw + pad;  // 1024-byte aligned
  unsigned char* const smem = smem_raw + pad;
  const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5, wg = tid >> 7;
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

  const unsigned kv_end = causal ? min(s, q0 + BR) : s;
  const unsigned nt = (kv_end + BC - 1u) / BC;

  // ---- prologue: group [Q + K0] ----
  load_tile<BR>(sbase, qg, q0, s, tid);
  load_tile<BC>(sbase + K_OFF, kg, 0, s, tid);
  cp_async_commit();

  const unsigned q_desc_addr = sbase + wg * 64u * 128u;  // this warpgroup's 64 rows of panel 0

  float acc[64];  // O: slice j covers dims 8j .. 8j+7
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  float m_run[2] = {-INFINITY, -INFINITY};  // running max of the raw dot products, rows g, g+8
  float l_run[2] = {0.0f, 0.0f};            // this thread's part of the running sum (scaled to m_run)
  const unsigned row_wg = q0 + wg * 64u;    // first query row of this warpgroup
  const unsigned row_lo = q0 + warp * 16u;  // first query row of this warp
  const unsigned row_of[2] = {row_lo + g, row_lo + g + 8u};
  float sacc[64];     // S of one tile: slice n covers keys key0 + 8n .. +7; then P (f32) in place
  unsigned pf[8][4];  // P of the previous tile, bf16 register A fragments, k16 steps over keys 16kk ..
  float alpha[2];     // rescale of O for the tile just softmaxed, rows g, g + 8

  // [X_j] K_j and V_{j-1} have landed (everyone's copies, fenced for the async proxy), and every
  // warpgroup is done with S_{j-1} (K stage (j-1) & 1) and P V_{j-2} (V stage j & 1): issue V_j and
  // K_{j+1} into those stages, as one commit group.
  auto barrier_and_issue = [&](unsigned j) {
    cp_async_wait<0>();
    fence_proxy_async();
    __syncthreads();
    if (j < nt) load_tile<BC>(sbase + V_OFF + (j & 1u) * KV_BYTES, vg, j * BC, s, tid);
    if (j + 1u < nt) load_tile<BC>(sbase + K_OFF + ((j + 1u) & 1u) * KV_BYTES, kg, (j + 1u) * BC, s, tid);
    cp_async_commit();
  };
  auto issue_s = [&](unsigned j) {  // sacc = Q K_jᵀ (8 wgmma, not committed)
    const unsigned kb = sbase + K_OFF + (j & 1u) * KV_BYTES;
#pragma unroll
    for (unsigned kk = 0; kk < 8; ++kk) {
      const unsigned off = (kk >> 2) * PANEL_Q + (kk & 3u) * 32u;
      const unsigned offk = (kk >> 2) * PANEL_KV + (kk & 3u) * 32u;
      wgmma_ss_n128(sacc, desc_sw128(q_desc_addr + off, 16, 1024), desc_sw128(kb + offk, 16, 1024), kk != 0);
    }
  };
  auto issue_pv = [&](unsigned j) {  // acc += P_j V_j (8 wgmma, or 16 with PV_N64; not committed)
    const unsigned vb = sbase + V_OFF + (j & 1u) * KV_BYTES;
#pragma unroll
    for (unsigned kk = 0; kk < 8; ++kk) {
#ifdef PV_N64
      wgmma_rs_n64<0>(acc, pf[kk], desc_sw128(vb + kk * 2048u, 1024, 1024));
      wgmma_rs_n64<32>(acc, pf[kk], desc_sw128(vb + PANEL_KV + kk * 2048u, 1024, 1024));
#else
      wgmma_rs_n128(acc, pf[kk], desc_sw128(vb + kk * 2048u, PANEL_KV, 1024));
#endif
    }
  };
  // Online softmax of S_j (complete in sacc): mask, new running max, P = 2^(S c - m c) in place,
  // running sum; alpha = the factor O must be rescaled by before P_j V_j is added.
  auto softmax = [&](unsigned j) {
    const unsigned key0 = j * BC;
    // Mask keys >= s and (causal) keys > row. Only tiles crossing s or the diagonal need it.
    if (key0 + BC > s || (causal && key0 + BC - 1u > row_wg)) {
#pragma unroll
      for (unsigned n = 0; n < 16; ++n)
#pragma unroll
        for (unsigned e = 0; e < 4; ++e) {
          const unsigned key = key0 + 8u * n + 2u * t + (e & 1u);
          if (key >= s || (causal && key > row_of[e >> 1])) sacc[4 * n + e] = -INFINITY;
        }
    }
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {  // row g: elements 0, 1; row g + 8: elements 2, 3
      float mx = m_run[hh];
#pragma unroll
      for (int n = 0; n < 16; ++n) mx = fmaxf(mx, fmaxf(sacc[4 * n + 2 * hh], sacc[4 * n + 2 * hh + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // mx is finite (every tile has a visible key for every row); the guard keeps -inf - -inf out.
      const float mc = (mx == -INFINITY) ? 0.0f : mx * SCALE_LOG2E;
      alpha[hh] = ex2(m_run[hh] * SCALE_LOG2E - mc);  // 0 on the first tile
      m_run[hh] = mx;
      float rs = 0.0f;
#pragma unroll
      for (int n = 0; n < 16; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = ex2(fmaf(sacc[4 * n + 2 * hh + e], SCALE_LOG2E, -mc));
          sacc[4 * n + 2 * hh + e] = p;
          rs += p;
        }
      l_run[hh] = l_run[hh] * alpha[hh] + rs;
    }
  };
  auto rescale_and_pack = [&]() {  // O *= alpha; P (sacc) to the bf16 A fragments
#pragma unroll
    for (int d = 0; d < 16; ++d) {
      acc[4 * d] *= alpha[0];
      acc[4 * d + 1] *= alpha[0];
      acc[4 * d + 2] *= alpha[1];
      acc[4 * d + 3] *= alpha[1];
    }
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      pf[kk][0] = pack_bf16(sacc[8 * kk + 0], sacc[8 * kk + 1]);
      pf[kk][1] = pack_bf16(sacc[8 * kk + 2], sacc[8 * kk + 3]);
      pf[kk][2] = pack_bf16(sacc[8 * kk + 4], sacc[8 * kk + 5]);
      pf[kk][3] = pack_bf16(sacc[8 * kk + 6], sacc[8 * kk + 7]);
    }
  };

  // Tile 0: S_0 alone.
  barrier_and_issue(0);
  wgmma_fence();
  issue_s(0);
  wgmma_commit();
  wgmma_wait<0>();
  fence_regs(sacc);
  softmax(0);
  rescale_and_pack();
  // Tile j: S_j and P_{j-1} V_{j-1} go to the tensor cores together; the softmax of S_j runs
  // while P V does; O is rescaled once P V is done.
#pragma unroll 1
  for (unsigned j = 1; j < nt; ++j) {
    barrier_and_issue(j);
    wgmma_fence();
    issue_s(j);
    wgmma_commit();
    issue_pv(j - 1u);
    wgmma_commit();
    wgmma_wait<1>();  // S_j done (P V may still run)
    fence_regs(sacc);
    softmax(j);
    wgmma_wait<0>();  // P_{j-1} V_{j-1} done: acc and pf are free
    fence_regs(acc);
    rescale_and_pack();
  }
  barrier_and_issue(nt);  // V_{nt-1} landed; issues nothing
  wgmma_fence();
  issue_pv(nt - 1u);
  wgmma_commit();
  wgmma_wait<0>();
  fence_regs(acc);

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
  // Stage the warp's 16 x 128 bf16 rows (256 bytes each, chunk-swizzled) in its own 4 KiB of the
  // Q area: after the last barrier [B] no wgmma reads Q any more.
  unsigned char* stage = smem + warp * 4096u;
#pragma unroll
  for (unsigned d = 0; d < 16; ++d) {
    *reinterpret_cast<unsigned*>(stage + g * 256u + ((d ^ g) << 4) + 4u * t) =
        pack_bf16(acc[4 * d] * inv[0], acc[4 * d + 1] * inv[0]);
    *reinterpret_cast<unsigned*>(stage + (g + 8u) * 256u + ((d ^ g) << 4) + 4u * t) =
        pack_bf16(acc[4 * d + 2] * inv[1], acc[4 * d + 3] * inv[1]);
  }
  __syncwarp();
#pragma unroll
  for (unsigned i = 0; i < 8; ++i) {
    const unsigned idx = lane + 32u * i, r = idx >> 4, chunk = idx & 15u;
    const uint4 val = *reinterpret_cast<const uint4*>(stage + r * 256u + ((chunk ^ (r & 7u)) << 4));
    if (row_lo + r < s) *reinterpret_cast<uint4*>(o + slab + (size_t)(row_lo + r) * D + chunk * 8u) = val;
  }
}
