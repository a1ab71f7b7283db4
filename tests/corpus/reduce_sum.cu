// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void reduce_sum(const float* in, float* out, long n) {
  __shared__ float s[32];
  float v = 0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) v += in[i];
  for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(~0u, v, o);
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) { v = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : 0;
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(~0u, v, o);
    if (threadIdx.x == 0) atomicAdd(out, v); }
}
