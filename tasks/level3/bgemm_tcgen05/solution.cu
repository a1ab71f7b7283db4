// @launch grid=(ceil_div(n, 256), ceil_div(m, 128), 1) block=(128, 1, 1) smem=197632
// @tensormap name=tm_a box=(64, 128) swizzle=128B l2=256B
// @tensormap name=tm_b box=(64, 256) swizzle=128B l2=256B
//
// C (m x n, bf16, row-major) = A (m x k, bf16, row-major) * B^T, B stored n x k row-major (bf16);
// f32 accumulation in tensor memory on Blackwell's 5th-generation tensor cores (tcgen05.mma),
// operands moved by TMA. sm_100a. solution.ptx is this file through nvcc 13.0:
// `nvcc -arch=sm_100a -ptx -O3 solution.cu`, with the three comment lines above copied to its top.
// Written from the PTX ISA manual (tcgen05 chapter) and checked by ptxas for sm_100a; it has not
// run on a Blackwell GPU here.
//
// Design (one CTA per 128 x 256 tile of C, 4 warps)
//   * k in steps of BK = 64 bf16 (one 128-byte row of each operand, the width of the 128-byte
//     swizzle). One stage = A 128 x 64 (16 KiB) + B 256 x 64 (32 KiB); 4 stages = 192 KiB.
//   * Warp 0 allocates 256 columns of tensor memory (tcgen05.alloc: a power of two >= 32) for
//     the 128 x 256 f32 accumulator (row i in lane i, column j in column j) and gives up its
//     allocation permit; its lane 0 is the producer, issuing the TMA loads of each stage on a
//     "full" mbarrier (arrive.expect_tx of the stage's 48 KiB).
//   * Warp 1, lane 0 issues the MMAs: per stage four tcgen05.mma.cta_group::1.kind::f16 of
//     M = 128, N = 256, K = 16, then tcgen05.commit to the stage's "empty" mbarrier, which
//     arrives once those MMAs (and the smem reads they make) are complete, releasing the stage
//     to the producer. After the last stage a commit to the "done" mbarrier.
//   * Epilogue: all 4 warps wait on "done", then warp w reads lanes 32w .. 32w + 31 (the lanes a
//     warp may access are fixed by its rank in the warpgroup) with tcgen05.ld.32x32b.x32: each
//     thread gets 32 consecutive f32 columns of its row, converts them to bf16 and stores them.
//   * Edges: TMA zero-fills what lies outside A and B (rows past m or n, k past a k that is not
//     a multiple of 64), so the products there are zeros; rows and columns past m and n are not
//     stored.
//
// Operand descriptors (PTX ISA, "Shared memory descriptor", tcgen05): K-major, 128-byte swizzle,
// rows of 128 bytes as TMA wrote them with SWIZZLE_128B, 1024-byte atoms of 8 rows at
// 1024-byte-aligned addresses. Start address >> 4 in bits 0-13; leading byte offset (unused for
// swizzled K-major; 1) in 16-29; stride byte offset 1024 >> 4 = 64 in 32-45; the fixed value
// 0b001 in bits 46-48; base offset 0 (49-51); swizzle mode 2 (128-byte) in bits 61-63. The
// four k16 slices of a stage are 32 bytes apart: +2 in the start address field.
// Instruction descriptor (kind::f16): D f32 (1 in bits 4-5), A and B bf16 (1 in bits 7-9 and
// 10-12), both K-major (bits 15, 16 clear), N >> 3 = 32 in bits 17-22, M >> 4 = 8 in bits 24-28.
#include <cuda.h>
#include <cuda_bf16.h>
#include <stdint.h>

namespace bgemm {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr uint32_t A_BYTES = BM * BK * 2;            // 16 KiB
constexpr uint32_t B_BYTES = BN * BK * 2;            // 32 KiB
constexpr uint32_t STAGE_BYTES = A_BYTES + B_BYTES;  // 48 KiB
constexpr uint32_t SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + 1024-byte alignment slack
static_assert(SMEM_BYTES == 197632, "the @launch smem=");
constexpr uint32_t TMEM_COLS = 256;  // the f32 accumulator, one column per column of the tile

constexpr uint32_t IDESC = (1u << 4) | (1u << 7) | (1u << 10) | ((BN >> 3) << 17) | ((BM >> 4) << 24);

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

// 2-D TMA load of the box at (x = k, y = row) into this CTA's shared memory.
static __device__ __forceinline__ void tma_load(uint32_t dst, uint64_t map, uint32_t bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

static __device__ __forceinline__ uint64_t desc_128b(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 46) | (2ull << 61);
}

// D (tensor memory) = A * B^T (+ D when accumulate): one MMA of 128 x 256 x 16.
static __device__ __forceinline__ void mma_bf16(uint32_t d_tmem, uint64_t desc_a, uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}" ::"r"(d_tmem),
      "l"(desc_a), "l"(desc_b), "r"(IDESC), "r"(accumulate)
      : "memory");
}

// One arrival on `bar` once every tcgen05 operation this thread issued before has completed.
static __device__ __forceinline__ void mma_commit(uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
}

// 32 lanes x 32 columns of 32 bits: thread t gets lane (taddr's lane + t), columns col .. col + 31.
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
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (the lower address) = lo
  return *reinterpret_cast<uint32_t*>(&v);
}

}  // namespace bgemm

extern "C" __global__ void __launch_bounds__(128, 1)
    bgemm_tc(const __nv_bfloat16* __restrict__ a, const __grid_constant__ CUtensorMap tm_a,
             const __nv_bfloat16* __restrict__ b, const __grid_constant__ CUtensorMap tm_b, __nv_bfloat16* __restrict__ c,
             unsigned m, unsigned n, unsigned k) {
  using namespace bgemm;
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[STAGES], empty_bar[STAGES], done_bar;
  __shared__ uint32_t tmem_slot;

  const uint32_t raw = smem_u32(smem_raw);
  const uint32_t base = raw + ((1024 - (raw & 1023)) & 1023);  // stage 0, 1024-byte aligned
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tm = blockIdx.y, tn = blockIdx.x;
  const int KT = (k + BK - 1) / BK;

  if (warp == 0) {
    // The whole warp allocates (.sync.aligned); the address lands in tmem_slot.
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
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // the inits, seen by TMA and tcgen05
  }
  // The allocation's result crosses a thread barrier: fenced on both sides (tcgen05 memory model).
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t tmem = tmem_slot;  // lane 0, the first allocated column

  if (warp == 0 && lane == 0) {
    // Producer.
    const uint64_t map_a = reinterpret_cast<uint64_t>(&tm_a), map_b = reinterpret_cast<uint64_t>(&tm_b);
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % STAGES;
      const uint32_t phase = (kt / STAGES) & 1;
      mbar_wait(smem_u32(&empty_bar[s]), phase ^ 1);  // the first round passes at once
      const uint32_t fb = smem_u32(&full_bar[s]);
      const uint32_t sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
      mbar_arrive_expect_tx(fb, STAGE_BYTES);
      tma_load(sa, map_a, fb, kt * BK, tm * BM);
      tma_load(sb, map_b, fb, kt * BK, tn * BN);
    }
  } else if (warp == 1 && lane == 0) {
    // MMA issuer.
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % STAGES;
      mbar_wait(smem_u32(&full_bar[s]), (kt / STAGES) & 1);
      asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
      const uint32_t sa = base + s * STAGE_BYTES;
      const uint64_t da = desc_128b(sa), db = desc_128b(sa + A_BYTES);
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) mma_bf16(tmem, da + 2 * kk, db + 2 * kk, (kt | kk) != 0);
      mma_commit(smem_u32(&empty_bar[s]));  // the stage is free once these MMAs have read it
    }
    mma_commit(smem_u32(&done_bar));  // the accumulator is complete
  }
  __syncwarp();

  // Epilogue: every thread waits for the accumulator, then warp w reads its 32 lanes (rows).
  mbar_wait(smem_u32(&done_bar), 0);
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const unsigned row = tm * BM + warp * 32 + lane;
  __nv_bfloat16* const dst_row = c + static_cast<size_t>(row) * n;
#pragma unroll 1
  for (int col = 0; col < BN; col += 32) {
    uint32_t v[32];
    __syncwarp();  // the lanes that skipped the last store rejoin before the .sync.aligned load
    tmem_ld_32x32b_x32(tmem + (static_cast<uint32_t>(warp * 32) << 16) + col, v);  // every lane: .sync.aligned
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
      for (int x = 0; x < 32; ++x)  // unrolled: packed[] stays in registers
        if (gc + x < n) dst_row[gc + x] = __ushort_as_bfloat16(static_cast<unsigned short>(packed[x / 2] >> (16 * (x % 2))));
    }
  }

  // Free the tensor memory once every warp has read it (the allocating warp deallocates).
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(tmem), "n"(TMEM_COLS) : "memory");
  }
}
