// @launch grid=(ceil_div(n, 256), ceil_div(m, 128), 1) block=(128, 1, 1) smem=203776
// @tensormap name=tm_a box=(128, 128) swizzle=128B l2=256B
// @tensormap name=tm_b box=(128, 256) swizzle=128B l2=256B
//
// C (m x n, bf16, row-major) = (A * 2^(sfa - 127)) (B * 2^(sfb - 127))^T with A m x k and B n x k
// row-major e4m3 and one UE8M0 scale per 32 elements of k of each row, in the tiled layout of
// the task (that of tcgen05's scale-factor matrices and of cuBLASLt's VEC32_UE8M0); f32
// accumulation in tensor memory on Blackwell's block-scaled MMA (tcgen05.mma
// .kind::mxf8f6f4.block_scale), operands moved by TMA. sm_100a. solution.ptx is this file
// through nvcc 13.0: `nvcc -arch=sm_100a -ptx -O3 solution.cu`, with the three comment lines
// above copied to its top. Written from the PTX ISA manual (tcgen05 chapter) and checked by
// ptxas for sm_100a; it has not run on a Blackwell GPU here.
//
// Design (one CTA per 128 x 256 tile of C, 4 warps)
//   * k in steps of BK = 128 e4m3 (one 128-byte row of each operand, the width of the 128-byte
//     swizzle), which is 4 scale blocks of 32: exactly one 512-byte tile of the scale layout per
//     128 rows. One stage = A 128 x 128 (16 KiB) + B 256 x 128 (32 KiB) by TMA, and the scale
//     tiles: A's one (512 bytes), B's two (rows tn * 256 .. + 127 and + 128 .. + 255) by
//     cp.async.bulk (kept after the operand stages, which stay 1024-byte aligned), all completing
//     on the stage's "full" mbarrier. 4 stages = 198 KiB.
//   * Warp 0 allocates 512 columns of tensor memory (a power of two; 256 would not leave room for
//     the scales): columns 0-255 the 128 x 256 f32 accumulator, then per stage 16 columns for the
//     scale factors (A: 4, B: 8). Its lane 0 is the producer.
//   * Warp 1, lane 0 issues per stage: tcgen05.cp .32x128b.warpx4 of each 512-byte scale tile
//     into 4 columns (32 lanes x 16 bytes, copied to all four 32-lane quarters, as block scaling
//     needs); then four tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X of
//     M = 128, N = 256, K = 32, the i-th selecting byte i of each scale word (the scale-factor
//     ids in its instruction descriptor); then tcgen05.commit to the stage's "empty" mbarrier.
//     tcgen05.cp -> tcgen05.mma is a tcgen05 pipeline (executed in order), and the next copy
//     into a stage's columns is issued only after the commit that freed the stage, so no MMA
//     reads scale columns being overwritten.
//   * Epilogue as in bgemm_tcgen05: warp w reads lanes 32w .. 32w + 31 with tcgen05.ld.32x32b.x32.
//   * Edges: TMA zero-fills A and B outside the matrices (rows past m or n, k past the end), so
//     those products are zero whatever their scale (the scale buffers hold finite scales in their
//     padding); a B scale tile past the last one that exists (n not a multiple of 256) is not
//     loaded, and the columns it would scale are past n, never stored.
//
// Scale layout in tensor memory (PTX ISA, "Layout of the Scale Factor A/B Matrix for
// scale_vec::1X"): row r of A (column r of B) at lane r % 32 of every quarter, column r / 32,
// byte = the scale-factor id. A 512-byte tile of the task's layout is 32 rows of 16 bytes,
// row j holding the words of rows j, j + 32, j + 64, j + 96, byte i of each the scale of k block
// i: tcgen05.cp .32x128b.warpx4 puts it there unchanged. Its source descriptor: no swizzle, the
// 8-row x 16-byte core matrices 128 bytes apart (stride byte offset 128), one in the leading
// dimension (leading byte offset 0), the fixed 0b001 in bits 46-48.
// Operand descriptors as bgemm_tcgen05 (K-major, 128-byte swizzle, stride 1024); a K = 32 step
// of e4m3 is 32 bytes, +2 in the start address field.
// Instruction descriptor (kind::mxf8f6f4): B scale id in bits 4-5, A and B E4M3 (0 in bits 7-9
// and 10-12), both K-major, N >> 3 = 32 in bits 17-22, scale type UE8M0 (1 in bit 23),
// M >> 7 = 1 in bits 27-28, A scale id in bits 29-30.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace mxgemm {
constexpr int BM = 128, BN = 256, BK = 128, STAGES = 4;
constexpr uint32_t A_BYTES = BM * BK;                 // 16 KiB
constexpr uint32_t B_BYTES = BN * BK;                 // 32 KiB
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;  // 48 KiB: stages stay 1024-byte aligned
constexpr uint32_t SF_TILE = 512;                     // 128 rows x 4 scale blocks
constexpr uint32_t SF_STAGE = 3 * SF_TILE;            // A's tile, then B's two
constexpr uint32_t SF_OFFSET = STAGES * STAGE_BYTES;  // the scale tiles of every stage, after the operands
constexpr uint32_t SMEM_BYTES = SF_OFFSET + STAGES * SF_STAGE + 1024;  // + 1024-byte alignment slack
static_assert(SMEM_BYTES == 203776, "the @launch smem=");
constexpr uint32_t TMEM_COLS = 512;
constexpr uint32_t SF_COL0 = 256, SF_COLS_PER_STAGE = 16;  // A at +0 (4 columns), B at +4 (8)

__host__ __device__ constexpr uint32_t idesc(uint32_t sf_id) {
  return (sf_id << 4) | ((BN >> 3) << 17) | (1u << 23) | ((BM >> 7) << 27) | (sf_id << 29);
}

static __device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

static __device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT;\n\t}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

static __device__ __forceinline__ void tma_load(uint32_t dst, uint64_t map, uint32_t bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// A contiguous copy of `bytes` (a multiple of 16, 16-byte aligned) from global memory.
static __device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile(
      "{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, %1;\n\t"
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [g], %2, [%3];\n\t}" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

static __device__ __forceinline__ uint64_t desc_128b(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 46) | (2ull << 61);
}

// A 512-byte scale tile: 32 rows of 16 bytes, no swizzle, core matrices 128 bytes apart.
static __device__ __forceinline__ uint64_t desc_sf(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(128 >> 4) << 32) | (1ull << 46);
}

static __device__ __forceinline__ void copy_sf(uint32_t taddr, uint64_t sdesc) {
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(sdesc) : "memory");
}

template <uint32_t SF_ID>
static __device__ __forceinline__ void mma_mx(uint32_t d_tmem, uint64_t desc_a, uint64_t desc_b, uint32_t sfa_tmem,
                                              uint32_t sfb_tmem, uint32_t accumulate) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %6, 0;\n\t"
      "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%0], %1, %2, %3, [%4], [%5], p;\n\t}" ::"r"(d_tmem),
      "l"(desc_a), "l"(desc_b), "n"(idesc(SF_ID)), "r"(sfa_tmem), "r"(sfb_tmem), "r"(accumulate)
      : "memory");
}

static __device__ __forceinline__ void mma_commit(uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
}

static __device__ __forceinline__ void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&v)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]), "=r"(v[8]),
        "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15]), "=r"(v[16]),
        "=r"(v[17]), "=r"(v[18]), "=r"(v[19]), "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]), "=r"(v[24]),
        "=r"(v[25]), "=r"(v[26]), "=r"(v[27]), "=r"(v[28]), "=r"(v[29]), "=r"(v[30]), "=r"(v[31])
      : "r"(taddr)
      : "memory");
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

static __device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

}  // namespace mxgemm

extern "C" __global__ void __launch_bounds__(128, 1)
    mxfp8_gemm(const __nv_fp8_e4m3* __restrict__ a, const __grid_constant__ CUtensorMap tm_a, const uint8_t* __restrict__ sfa,
               const __nv_fp8_e4m3* __restrict__ b, const __grid_constant__ CUtensorMap tm_b, const uint8_t* __restrict__ sfb,
               __nv_bfloat16* __restrict__ c, unsigned m, unsigned n, unsigned k) {
  using namespace mxgemm;
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[STAGES], empty_bar[STAGES], done_bar;
  __shared__ uint32_t tmem_slot;

  const uint32_t raw = smem_u32(smem_raw);
  const uint32_t base = raw + ((1024 - (raw & 1023)) & 1023);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tm = blockIdx.y, tn = blockIdx.x;
  const int KT = (k + BK - 1) / BK;  // also the scale tiles per 128 rows (k blocks padded to 4)

  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_u32(&tmem_slot)),
                 "n"(TMEM_COLS)
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  } else if (warp == 1 && lane == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_u32(&full_bar[s]), 1);
      mbar_init(smem_u32(&empty_bar[s]), 1);
    }
    mbar_init(smem_u32(&done_bar), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t tmem = tmem_slot;

  // B's scale tiles of this column of tiles that exist: the second one only below n.
  const int sfb_rows_tiles = (n + 127) / 128;
  const bool second_b_tile = 2 * tn + 1 < sfb_rows_tiles;

  if (warp == 0 && lane == 0) {
    // Producer.
    const uint64_t map_a = reinterpret_cast<uint64_t>(&tm_a), map_b = reinterpret_cast<uint64_t>(&tm_b);
    const uint32_t bytes = STAGE_BYTES + SF_TILE * (second_b_tile ? 3 : 2);
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % STAGES;
      mbar_wait(smem_u32(&empty_bar[s]), ((kt / STAGES) & 1) ^ 1);
      const uint32_t fb = smem_u32(&full_bar[s]);
      const uint32_t st = base + s * STAGE_BYTES, sf = base + SF_OFFSET + s * SF_STAGE;
      mbar_arrive_expect_tx(fb, bytes);
      tma_load(st, map_a, fb, kt * BK, tm * BM);
      tma_load(st + A_BYTES, map_b, fb, kt * BK, tn * BN);
      bulk_load(sf, sfa + (static_cast<size_t>(tm) * KT + kt) * SF_TILE, SF_TILE, fb);
      bulk_load(sf + SF_TILE, sfb + (static_cast<size_t>(2 * tn) * KT + kt) * SF_TILE, SF_TILE, fb);
      if (second_b_tile)
        bulk_load(sf + 2 * SF_TILE, sfb + (static_cast<size_t>(2 * tn + 1) * KT + kt) * SF_TILE, SF_TILE, fb);
    }
  } else if (warp == 1 && lane == 0) {
    // MMA issuer.
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % STAGES;
      mbar_wait(smem_u32(&full_bar[s]), (kt / STAGES) & 1);
      asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
      const uint32_t st = base + s * STAGE_BYTES, sf = base + SF_OFFSET + s * SF_STAGE;
      const uint32_t sfa_t = tmem + SF_COL0 + s * SF_COLS_PER_STAGE, sfb_t = sfa_t + 4;
      copy_sf(sfa_t, desc_sf(sf));
      copy_sf(sfb_t, desc_sf(sf + SF_TILE));
      if (second_b_tile) copy_sf(sfb_t + 4, desc_sf(sf + 2 * SF_TILE));
      const uint64_t da = desc_128b(st), db = desc_128b(st + A_BYTES);
      mma_mx<0>(tmem, da, db, sfa_t, sfb_t, kt != 0);
      mma_mx<1>(tmem, da + 2, db + 2, sfa_t, sfb_t, 1);
      mma_mx<2>(tmem, da + 4, db + 4, sfa_t, sfb_t, 1);
      mma_mx<3>(tmem, da + 6, db + 6, sfa_t, sfb_t, 1);
      mma_commit(smem_u32(&empty_bar[s]));
    }
    mma_commit(smem_u32(&done_bar));
  }
  __syncwarp();

  mbar_wait(smem_u32(&done_bar), 0);
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const unsigned row = tm * BM + warp * 32 + lane;
  __nv_bfloat16* const dst_row = c + static_cast<size_t>(row) * n;
#pragma unroll 1
  for (int col = 0; col < BN; col += 32) {
    uint32_t v[32];
    __syncwarp();
    tmem_ld_32x32b_x32(tmem + (static_cast<uint32_t>(warp * 32) << 16) + col, v);
    const unsigned gc = tn * BN + col;
    if (row >= m || gc >= n) continue;
    uint32_t packed[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) packed[i] = pack_bf16(__uint_as_float(v[2 * i]), __uint_as_float(v[2 * i + 1]));
    if ((n & 7) == 0 && gc + 32 <= n) {
#pragma unroll
      for (int q = 0; q < 4; ++q)
        *reinterpret_cast<uint4*>(dst_row + gc + 8 * q) =
            make_uint4(packed[4 * q], packed[4 * q + 1], packed[4 * q + 2], packed[4 * q + 3]);
    } else {
#pragma unroll
      for (int x = 0; x < 32; ++x)
        if (gc + x < n) dst_row[gc + x] = __ushort_as_bfloat16(static_cast<unsigned short>(packed[x / 2] >> (16 * (x % 2))));
    }
  }

  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(tmem), "n"(TMEM_COLS) : "memory");
  }
}
