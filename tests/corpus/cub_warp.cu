// Corpus source for the front-end tests: compiled by nvcc during the test.
#include <cub/cub.cuh>
__global__ void warp_max(const int* in, int* out) {
  using WR = cub::WarpReduce<int>;
  __shared__ typename WR::TempStorage tmp[4];
  int v = in[blockIdx.x * 128 + threadIdx.x];
  int m = WR(tmp[threadIdx.x / 32]).Reduce(v, ::cuda::maximum<int>{});
  if (threadIdx.x % 32 == 0) out[blockIdx.x * 4 + threadIdx.x / 32] = m;
}
