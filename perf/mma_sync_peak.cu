// The most mma.sync can do on this GPU: every warp runs 8 independent chains of
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 on registers alone (no memory traffic), so
// the only limit is the tensor cores' issue rate for the warp-level instruction. On Hopper the
// full rate needs wgmma; this is the ceiling of a kernel that keeps to mma.sync (the
// level2/hgemm_mma task), to set against cuBLASLt's fp16 GEMM.
//
// A second kernel is the inner loop of an mma.sync GEMM with nothing else: each warp owns a
// 64x64 tile of f32 accumulators (the most that fits beside the fragments in 255 registers)
// and per k16 step loads its A and B fragments from shared memory with 8 ldmatrix.x4 and runs
// the 32 mma.sync they feed; no global memory, no cp.async, no barrier. No GEMM that keeps to
// mma.sync and ldmatrix can beat it, so it bounds what the hgemm_mma task's solution could reach.
//
// Build and run (GPU machine): nvcc -O3 -arch=sm_90a perf/mma_sync_peak.cu -o /tmp/mma_peak && /tmp/mma_peak
// Method: 4 warm-up launches, then the median of 20 launches timed with CUDA events; flops =
// 2 * 16 * 8 * 16 per mma per warp. Registers alone: blocks of 256 threads, 8 per SM; shared
// memory: blocks of 128 threads, as many per SM as the registers allow.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

constexpr int kChains = 8, kIters = 4096;

__global__ void mma_peak(float* out) {
  unsigned a0 = 0x3c003c00u ^ threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, b0 = a0 + 5, b1 = a0 + 7;
  float d[kChains][4] = {};
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
          "{%0, %1, %2, %3};"
          : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float s = 0;
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 1234.5f) out[threadIdx.x] = s;  // keeps the chains alive
}

constexpr int kSteps = 2048;  // k16 steps of the shared-memory loop

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__global__ void __launch_bounds__(128) mma_smem(float* out) {
  // 16 KiB of f16 the fragments cycle through: 8 ldmatrix.x4 per step read 4 KiB, each phase of
  // 8 lanes 128 contiguous bytes (no bank conflicts).
  __shared__ __align__(128) unsigned short tile[8192];
  for (int i = threadIdx.x; i < 8192; i += blockDim.x) tile[i] = 0x3c00 ^ (i & 0x3ff);  // non-zero halves
  __syncthreads();
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(tile)) + (threadIdx.x % 32) * 16;
  float acc[4][8][4] = {};
  for (int step = 0; step < kSteps; ++step) {
    const unsigned at = base + (step % 4) * 4096;
    unsigned a[4][4], b[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) ldmatrix_x4(a[i], at + i * 512);
#pragma unroll
    for (int j = 0; j < 4; ++j) ldmatrix_x4(b[j], at + 2048 + j * 512);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int n = 0; n < 8; ++n)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(acc[i][n][0]), "+f"(acc[i][n][1]), "+f"(acc[i][n][2]), "+f"(acc[i][n][3])
            : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[n / 2][(n % 2) * 2]),
              "r"(b[n / 2][(n % 2) * 2 + 1]));
  }
  float s = 0;
  for (int i = 0; i < 4; ++i)
    for (int n = 0; n < 8; ++n) s += acc[i][n][0] + acc[i][n][1] + acc[i][n][2] + acc[i][n][3];
  if (s == 1234.5f) out[threadIdx.x] = s;
}

// Median milliseconds of 20 launches after 4 warm-ups.
template <typename Launch>
double median_ms(Launch launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 4; ++i) launch();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out = nullptr;
  cudaMalloc(&out, 1024 * sizeof(float));
  const int blocks = sms * 8, threads = 256;
  const double regs_ms = median_ms([&] { mma_peak<<<blocks, threads>>>(out); });
  const double regs_flops = 2.0 * 16 * 8 * 16 * kChains * kIters * (double(blocks) * threads / 32);
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mma_smem, 128, 0);
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, mma_smem);
  const int smem_blocks = sms * per_sm;
  const double smem_ms = median_ms([&] { mma_smem<<<smem_blocks, 128>>>(out); });
  const double smem_flops = 2.0 * 16 * 8 * 16 * 32 * kSteps * (double(smem_blocks) * 4);
  if (cudaGetLastError() != cudaSuccess) {
    std::printf("launch failed\n");
    return 1;
  }
  std::printf("mma.sync m16n8k16 f16->f32, registers alone: %d SMs, median %.3f ms, %.1f TFLOP/s\n", sms, regs_ms,
              regs_flops / (regs_ms * 1e-3) / 1e12);
  std::printf(
      "mma.sync fed by ldmatrix from shared memory, 64x64 per warp: %d registers, %zu bytes of local memory "
      "(spills), %d blocks of 4 warps per SM, median %.3f ms, %.1f TFLOP/s\n",
      attr.numRegs, attr.localSizeBytes, per_sm, smem_ms, smem_flops / (smem_ms * 1e-3) / 1e12);
  return 0;
}
