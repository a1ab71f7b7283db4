// Corpus source for the front-end tests: compiled by nvcc during the test.
#include <cuda_fp16.h>
__global__ void mma16816(const unsigned* a, const unsigned* b, float* c) {
  unsigned a0 = a[threadIdx.x * 4], a1 = a[threadIdx.x * 4 + 1], a2 = a[threadIdx.x * 4 + 2], a3 = a[threadIdx.x * 4 + 3];
  unsigned b0 = b[threadIdx.x * 2], b1 = b[threadIdx.x * 2 + 1];
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  c[threadIdx.x * 4] = d0; c[threadIdx.x * 4 + 1] = d1; c[threadIdx.x * 4 + 2] = d2; c[threadIdx.x * 4 + 3] = d3;
}
