// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void warp_reduce(const float* x, float* out) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  unsigned b = __ballot_sync(0xffffffff, v > 0);
  int any = __any_sync(0xffffffff, v > 1);
  float up = __shfl_up_sync(0xffffffff, v, 1);
  float dn = __shfl_down_sync(0xffffffff, v, 2);
  float ix = __shfl_sync(0xffffffff, v, 3);
  unsigned m = __match_any_sync(0xffffffff, (int)v);
  if (threadIdx.x % 32 == 0) out[blockIdx.x] = v + b + any + up + dn + ix + m + __activemask();
}
