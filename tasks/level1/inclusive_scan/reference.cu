// The nvcc baseline: a single block walks the array in chunks of 1024, scanning each chunk
// in shared memory (Hillis-Steele) and carrying the running total. Simple and obviously
// correct; it uses one SM, so it is slow on large inputs.
extern "C" __global__ void inclusive_scan_ref(const float* x, float* out, unsigned n) {
  __shared__ float buf[1024];
  __shared__ float carry;
  if (threadIdx.x == 0) carry = 0.0f;
  for (unsigned base = 0; base < n; base += 1024) {
    unsigned i = base + threadIdx.x;
    buf[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned off = 1; off < 1024; off *= 2) {
      float add = threadIdx.x >= off ? buf[threadIdx.x - off] : 0.0f;
      __syncthreads();
      buf[threadIdx.x] += add;
      __syncthreads();
    }
    if (i < n) out[i] = buf[threadIdx.x] + carry;
    __syncthreads();
    if (threadIdx.x == 1023) carry += buf[1023];
    __syncthreads();
  }
}
