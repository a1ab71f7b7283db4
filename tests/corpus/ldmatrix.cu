// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void ldm(unsigned* out) {
  __shared__ __align__(16) unsigned short tile[16 * 16];
  for (int i = threadIdx.x; i < 256; i += 32) tile[i] = i;
  __syncwarp();
  unsigned r0, r1, r2, r3;
  unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[(threadIdx.x % 16) * 16 + (threadIdx.x / 16) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  out[threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}
