// Corpus source for the front-end tests: compiled by nvcc during the test.
__constant__ float coeffs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__device__ int counter = 5;
__device__ float table2d[4][4];
__global__ void use_globals(float* out) {
  int i = threadIdx.x;
  out[i] = coeffs[i & 7] * table2d[i & 3][(i >> 2) & 3] + atomicAdd(&counter, 1);
}
