// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void sparse_mma(const unsigned* a, const unsigned* b, const unsigned* meta, float* c) {
  unsigned a0 = a[threadIdx.x * 2], a1 = a[threadIdx.x * 2 + 1], b0 = b[threadIdx.x * 2], b1 = b[threadIdx.x * 2 + 1];
  unsigned e = meta[threadIdx.x];
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%0,%1,%2,%3}, %8, 0x0;"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(e));
  c[threadIdx.x * 4] = d0 + d1 + d2 + d3;
}
