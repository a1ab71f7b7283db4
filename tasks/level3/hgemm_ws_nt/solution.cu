// @launch grid=(min(132, ceil_div(m, 128) * ceil_div(n, 256)), 1, 1) block=(384, 1, 1) smem=214016
// @tensormap name=tm_a box=(64, 128) swizzle=128B l2=256B
// @tensormap name=tm_b box=(64, 256) swizzle=128B l2=256B
//
// C (m x n, f32, row-major) = A (m x k, f16, row-major) * B^T, B stored n x k row-major (f16);
// f32 accumulation on Hopper's tensor cores (wgmma m64n256k16 .f16.f16), operands moved by TMA,
// warp-specialised with setmaxnreg. sm_90a. An adaptation of level3/bgemm_wgmma_nt's kernel:
// f16 operands instead of bf16 and an f32 output, so the epilogue is new.
// solution.ptx is this file through nvcc 13.0: `nvcc -arch=sm_90a -ptx -O3 solution.cu`, with
// the three comment lines above copied to its top.
//
// Design
//   * Block tile 128 (m) x 256 (n), k in steps of BK = 64 f16 (one 128-byte row of each
//     operand, the width of the 128-byte swizzle). One stage = A 128 x 64 (16 KiB) + B 256 x 64
//     (32 KiB); 4 stages = 192 KiB, plus 16 KiB of epilogue staging (2 KiB per consumer warp)
//     and 1 KiB of slack to align the stages to 1024 bytes: 214016 bytes of the 232448 (227 KiB)
//     a block may have. A fifth stage (240 KiB) does not fit.
//   * 384 threads = 3 warpgroups, warp-specialised. The register file (65536) split evenly over
//     384 threads gives 168 registers each (170, rounded down to ptxas's granule of 8), but a
//     consumer holds 128 f32 accumulators (64 x 256 per warpgroup) plus descriptors, addresses
//     and the epilogue's values, and the producer needs a handful. So warpgroup 0, the producer,
//     gives registers back (setmaxnreg.dec 40) and one of its threads issues the TMA loads;
//     warpgroups 1 and 2, the consumers, take them (setmaxnreg.inc 232; 128 x 40 + 256 x 232 =
//     64512 <= 65536): each owns 64 rows of the tile and all 256 columns and runs 4 wgmma
//     m64n256k16 per stage. __launch_bounds__(384, 1) gives the entry .maxntid and
//     .minnctapersm, which fix the register count at launch (ptxas ignores setmaxnreg without
//     a cap, C7508).
//   * Pipeline: per stage a "full" mbarrier (1 arrival: the producer's arrive.expect_tx of the
//     stage's 48 KiB; the two TMA loads complete the transaction bytes) and an "empty" mbarrier
//     (8 arrivals: lane 0 of each consumer warp, once wgmma.wait_group says the wgmma that read
//     the stage are done). The consumers keep one wgmma group in flight (commit, then
//     wait_group 1 releases the previous stage).
//   * Persistent: the grid is at most one CTA per SM (132 on an H100/H200); each CTA walks the
//     tiles with a stride of the grid, in groups of 16 tile rows (consecutive tiles go down a
//     column of the group first) so that the CTAs resident together share A and B panels in
//     L2. The producer runs ahead into the next tile while the consumers write the previous
//     one out.
//   * Edges: TMA zero-fills what lies outside A and B (rows past m or n, k past the end of a
//     k not a multiple of 64), so the products there are zeros and need no special case. The
//     transaction count stays the full box (TMA counts the filled bytes too).
//   * Epilogue (f32): each consumer warp writes its 16 x 256 accumulators through its 2 KiB
//     staging buffer in eight 16 x 32 pieces (16 rows of 128 bytes). A lane holds pairs of
//     consecutive columns (fragment below): it stores each pair to the staging rows as one
//     8-byte shared store, then the warp reads the rows back as 16-byte chunks and stores them
//     with 16-byte global stores, 8 lanes covering the 128 contiguous bytes of a row's piece
//     (4 rows per warp instruction, every 32-byte sector whole). The staging rows are
//     XOR-swizzled by 16-byte chunk, physical chunk = chunk ^ 2 (row & 3): in an 8-byte store
//     each half-warp writes rows g .. g + 3 at two chunks each, which land on 8 distinct chunks,
//     so all 32 banks; in the 16-byte reads 8 lanes read the 8 chunks of one row. Warps whose
//     16 rows all lie past m skip the epilogue; pieces whose columns all lie past n are
//     skipped; rows past m are not stored; where n is not a multiple of 4 (a row then does not
//     start 16-byte aligned) or the 4 columns cross n, the elements are stored one by one.
//
// wgmma operands (PTX ISA, "Matrix Descriptor Format"; K-major, 128-byte swizzle): each
// operand tile is rows of 128 bytes (64 f16 of k) as TMA wrote them with SWIZZLE_128B, in
// 1024-byte atoms of 8 rows at 1024-byte-aligned addresses. Descriptor: start address >> 4 in
// bits 0-13, leading byte offset (unused for swizzled K-major; 1) in 16-29, stride byte offset
// 1024 >> 4 = 64 (from one 8-row group to the next) in 32-45, base offset 0, swizzle mode 1
// (128B) in bits 62-63. The k16 slices of a 64-wide stage are 32 bytes apart: +2 in the start
// address field. f16 and bf16 are both 2 bytes, so all of this is the bf16 kernel's.
//
// Accumulator fragment of m64nNk16 (f32): thread t of the warpgroup holds rows
// 16 (t / 32) + (t % 32) / 4 and 8 more; for each 8-column slice j, columns 8j + 2 (t % 4) and
// the next: d[4j], d[4j+1] on the first row, d[4j+2], d[4j+3] on the second.
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

#ifndef HGEMM_GROUP
#define HGEMM_GROUP 16  // tile rows per raster group
#endif

namespace hgemm {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int GROUP_M = HGEMM_GROUP;
constexpr uint32_t A_BYTES = BM * BK * 2;                                 // 16 KiB
constexpr uint32_t B_BYTES = BN * BK * 2;                                 // 32 KiB
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;                       // 48 KiB
constexpr uint32_t EPI_WARP_BYTES = 16 * 128;                             // 16 rows x 32 f32
constexpr uint32_t EPI_OFFSET = STAGES * STAGE_BYTES;
constexpr uint32_t SMEM_BYTES = EPI_OFFSET + 8 * EPI_WARP_BYTES + 1024;  // + 1024-byte alignment slack
static_assert(SMEM_BYTES == 214016, "the @launch smem=");
static_assert(SMEM_BYTES + 2 * STAGES * 8 <= 232448, "dynamic + static shared memory within 227 KiB");

static __device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

static __device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// Spins until the phase of parity `parity` has completed.
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT;\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

static __device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// 2-D TMA load of the box at (x = k, y = row) into this CTA's shared memory.
static __device__ __forceinline__ void tma_load(uint32_t dst, uint64_t map, uint32_t bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

static __device__ __forceinline__ uint64_t desc_128b(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

static __device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
static __device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Tells the compiler that the accumulators change here (the wgmma writes them asynchronously):
// no read of them may move above the wait before it.
static __device__ __forceinline__ void fence_accumulators(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// D (64 x 256, f32, the fragment layout below) = A (64 x 16, f16, from desc_a) * B (256 x 16,
// f16, from desc_b)^T + D when accumulate is non-zero. Both operands K-major (no transpose).
static __device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %130, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// Tile t -> (tile row tm, tile column tn), GROUP_M tile rows at a time, down each column first.
static __device__ __forceinline__ void tile_of(int t, int ntm, int ntn, int& tm, int& tn) {
  const int per_group = GROUP_M * ntn;
  const int gid = t / per_group;
  const int first = gid * GROUP_M;
  const int rows = min(ntm - first, GROUP_M);
  const int within = t - gid * per_group;
  tm = first + within % rows;
  tn = within / rows;
}

}  // namespace hgemm

extern "C" __global__ void __launch_bounds__(384, 1)
    hgemm_ws_nt(const __half* __restrict__ a, const __grid_constant__ CUtensorMap tm_a, const __half* __restrict__ b,
                const __grid_constant__ CUtensorMap tm_b, float* __restrict__ c, unsigned m, unsigned n, unsigned k) {
  using namespace hgemm;
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[STAGES], empty_bar[STAGES];

  const uint32_t raw = smem_u32(smem_raw);
  const uint32_t pad = (1024 - (raw & 1023)) & 1023;
  const uint32_t base = raw + pad;  // stage 0, 1024-byte aligned
  uint8_t* const base_ptr = smem_raw + pad;

  const int tid = threadIdx.x;
  const int wg = tid / 128;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_u32(&full_bar[s]), 1);
      mbar_init(smem_u32(&empty_bar[s]), 8);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the inits, seen by the TMA unit
  }
  __syncthreads();

  const int ntm = (m + BM - 1) / BM, ntn = (n + BN - 1) / BN;
  const int total = ntm * ntn;
  const int KT = (k + BK - 1) / BK;

  if (wg == 0) {
    // Producer warpgroup: few registers, one thread issues every TMA load.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (tid == 0) {
      const uint64_t map_a = reinterpret_cast<uint64_t>(&tm_a), map_b = reinterpret_cast<uint64_t>(&tm_b);
      int s = 0;
      uint32_t phase = 0;
      for (int t = blockIdx.x; t < total; t += gridDim.x) {
        int tm, tn;
        tile_of(t, ntm, ntn, tm, tn);
        for (int kt = 0; kt < KT; ++kt) {
          mbar_wait(smem_u32(&empty_bar[s]), phase ^ 1);
          const uint32_t fb = smem_u32(&full_bar[s]);
          const uint32_t sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
          mbar_arrive_expect_tx(fb, STAGE_BYTES);
          tma_load(sa, map_a, fb, kt * BK, tm * BM);
          tma_load(sb, map_b, fb, kt * BK, tn * BN);
          if (++s == STAGES) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    // Consumer warpgroups: the accumulators need the registers the producer gave back.
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int w = wg - 1;           // rows 64w .. 64w + 63 of the tile
    const int cw = tid / 32 - 4;    // consumer warp 0..7
    const int lane = tid & 31;
    uint8_t* const epi_ptr = base_ptr + EPI_OFFSET + cw * EPI_WARP_BYTES;
    // Staging: this lane's column pair of chunk 2jj + half goes to rows g and g + 8 at physical
    // chunk 2 (jj ^ (g & 3)) + half, byte 8 (qd & 1) within it (see the design notes).
    const int g = lane >> 2, qd = lane & 3, half = qd >> 1, sw = g & 3;
    uint8_t* const st_ptr = epi_ptr + g * 128 + (qd & 1) * 8;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    int s = 0;
    uint32_t phase = 0;
    for (int t = blockIdx.x; t < total; t += gridDim.x) {
      int tm, tn;
      tile_of(t, ntm, ntn, tm, tn);
      int prev = 0;
      for (int kt = 0; kt < KT; ++kt) {
        mbar_wait(smem_u32(&full_bar[s]), phase);
        const uint32_t sa = base + s * STAGE_BYTES;
        const uint64_t da = desc_128b(sa + w * 64 * 128), db = desc_128b(sa + A_BYTES);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64n256k16(acc, da + 2 * kk, db + 2 * kk, (kt | kk) != 0);
        wgmma_commit();
        wgmma_wait<1>();  // the previous stage's wgmma are done: release it
        if (kt > 0 && lane == 0) mbar_arrive(smem_u32(&empty_bar[prev]));
        prev = s;
        if (++s == STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (lane == 0) mbar_arrive(smem_u32(&empty_bar[prev]));

      // Epilogue: this warp's rows row0 .. row0 + 15, in eight pieces of 32 columns.
      const unsigned row0 = tm * BM + w * 64 + (cw & 3) * 16;
      if (row0 < m) {  // the same for the whole warp
#pragma unroll
        for (int piece = 0; piece < 8; ++piece) {
          const unsigned col0 = tn * BN + piece * 32;
          if (col0 >= n) break;  // the same for the whole warp
#pragma unroll
          for (int jj = 0; jj < 4; ++jj) {
            const int j = 4 * piece + jj;  // the 8-column slice of the fragment
            uint8_t* const p = st_ptr + ((((jj ^ sw) << 1) + half) << 4);
            *reinterpret_cast<float2*>(p) = make_float2(acc[4 * j], acc[4 * j + 1]);
            *reinterpret_cast<float2*>(p + 8 * 128) = make_float2(acc[4 * j + 2], acc[4 * j + 3]);
          }
          __syncwarp();
#pragma unroll
          for (int it = 0; it < 4; ++it) {
            const int idx = it * 32 + lane;
            const int r = idx >> 3, ch = idx & 7;  // row of the piece, 16-byte chunk (4 columns) of the row
            const float4 v = *reinterpret_cast<const float4*>(epi_ptr + r * 128 + ((ch ^ ((r & 3) << 1)) << 4));
            const unsigned gr = row0 + r, gc = col0 + ch * 4;
            if (gr < m) {
              float* const dst = c + static_cast<size_t>(gr) * n + gc;
              if ((n & 3) == 0 && gc + 4 <= n) {
                *reinterpret_cast<float4*>(dst) = v;
              } else {
                if (gc < n) dst[0] = v.x;
                if (gc + 1 < n) dst[1] = v.y;
                if (gc + 2 < n) dst[2] = v.z;
                if (gc + 3 < n) dst[3] = v.w;
              }
            }
          }
          __syncwarp();
        }
      }
    }
  }
}
