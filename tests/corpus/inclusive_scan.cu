// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void scan(const int* in, int* out, int n) {
  __shared__ int warp_sums[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 1; o < 32; o <<= 1) { int t = __shfl_up_sync(~0u, v, o); if (lane >= o) v += t; }
  if (lane == 31) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) { int s = lane < blockDim.x / 32 ? warp_sums[lane] : 0;
    for (int o = 1; o < 32; o <<= 1) { int t = __shfl_up_sync(~0u, s, o); if (lane >= o) s += t; } warp_sums[lane] = s; }
  __syncthreads();
  if (warp > 0) v += warp_sums[warp - 1];
  if (i < n) out[i] = v;
}
