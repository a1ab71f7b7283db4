// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void copy_async(const float4* in, float4* out) {
  __shared__ __align__(16) float4 buf[128];
  unsigned s = (unsigned)__cvta_generic_to_shared(&buf[threadIdx.x]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(in + blockIdx.x * 128 + threadIdx.x));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  out[blockIdx.x * 128 + threadIdx.x] = buf[127 - threadIdx.x];
}
