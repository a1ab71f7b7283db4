// The same partition as the template: launched with 1024 blocks of 256 threads, each thread
// sums its grid-stride elements, then the block adds its threads' sums in shared memory.
extern "C" __global__ void block_sums_ref(const float* x, float* partials, unsigned n) {
  __shared__ float sums[256];
  unsigned t = threadIdx.x, stride = gridDim.x * blockDim.x;
  float s = 0.0f;
  for (unsigned i = blockIdx.x * blockDim.x + t; i < n; i += stride) s += x[i];
  sums[t] = s;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) sums[t] += sums[t + half];
    __syncthreads();
  }
  if (t == 0) partials[blockIdx.x] = sums[0];
}
