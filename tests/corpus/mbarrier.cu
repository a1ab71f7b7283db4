// Corpus source for the front-end tests: compiled by nvcc during the test.
#include <cstdint>
__global__ void mbar(int* out) {
  __shared__ __align__(8) uint64_t bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(b), "r"(blockDim.x));
  __syncthreads();
  uint64_t state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(b));
  unsigned done = 0;
  while (!done) asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b), "l"(state));
  out[threadIdx.x] = done;
}
