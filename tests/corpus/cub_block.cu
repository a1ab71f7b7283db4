// Corpus source for the front-end tests: compiled by nvcc during the test.
#include <cub/cub.cuh>
__global__ void block_sum(const float* in, float* out) {
  using BR = cub::BlockReduce<float, 128>;
  __shared__ typename BR::TempStorage tmp;
  float v = in[blockIdx.x * 128 + threadIdx.x];
  float s = BR(tmp).Sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}
__global__ void block_scan(const int* in, int* out) {
  using BS = cub::BlockScan<int, 128>;
  __shared__ typename BS::TempStorage tmp;
  int v = in[blockIdx.x * 128 + threadIdx.x];
  BS(tmp).InclusiveSum(v, v);
  out[blockIdx.x * 128 + threadIdx.x] = v;
}
