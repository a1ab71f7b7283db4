// The most mma.sync can do on this GPU: every warp runs 8 independent chains of
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 on registers alone (no memory traffic), so
// the only limit is the tensor cores' issue rate for the warp-level instruction. On Hopper the
// full rate needs wgmma; this is the ceiling of a kernel that keeps to mma.sync (the
// level2/hgemm_mma task), to set against cuBLASLt's fp16 GEMM.
//
// Build and run (GPU machine): nvcc -O3 -arch=sm_90a bench/mma_sync_peak.cu -o /tmp/mma_peak && /tmp/mma_peak
// Method: 4 warm-up launches, then the median of 20 launches timed with CUDA events; flops =
// 2 * 16 * 8 * 16 per mma per warp. Blocks of 256 threads, 8 blocks per SM.
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

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out = nullptr;
  cudaMalloc(&out, 1024 * sizeof(float));
  const int blocks = sms * 8, threads = 256;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 4; ++i) mma_peak<<<blocks, threads>>>(out);
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(e0);
    mma_peak<<<blocks, threads>>>(out);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  if (cudaGetLastError() != cudaSuccess) {
    std::printf("launch failed\n");
    return 1;
  }
  std::sort(ms.begin(), ms.end());
  const double flops = 2.0 * 16 * 8 * 16 * kChains * kIters * (double(blocks) * threads / 32);
  std::printf("mma.sync m16n8k16 f16->f32: %d SMs, median %.3f ms, %.1f TFLOP/s\n", sms, ms[ms.size() / 2],
              flops / (ms[ms.size() / 2] * 1e-3) / 1e12);
  return 0;
}
