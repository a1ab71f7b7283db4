// Corpus source for the front-end tests: compiled by nvcc during the test.
// CUB's device-wide algorithms: calling them from host code makes nvcc emit their kernels
// (single-tile and multi-pass reductions, decoupled look-back scans with their tile-state
// atomics and spin loops, the onesweep radix sort), as a library user's module contains.
#include <cub/cub.cuh>

void device_algorithms(const float* in, float* sum, int* ikeys, int* iout, unsigned* keys,
                       unsigned* keys_out, int* vals, int* vals_out, int n, cudaStream_t s) {
  void* tmp = nullptr;
  size_t bytes = 0;
  cub::DeviceReduce::Sum(tmp, bytes, in, sum, n, s);
  cub::DeviceReduce::Max(tmp, bytes, ikeys, iout, n, s);
  cub::DeviceScan::ExclusiveSum(tmp, bytes, ikeys, iout, n, s);
  cub::DeviceScan::InclusiveScan(tmp, bytes, in, sum, cuda::minimum<>{}, n, s);
  cub::DeviceRadixSort::SortPairs(tmp, bytes, keys, keys_out, vals, vals_out, n, 0, 32, s);
}
