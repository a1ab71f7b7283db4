// Corpus source for the front-end tests: compiled by nvcc during the test.
typedef float (*op_t)(float);
__device__ float twice(float x) { return 2 * x; }
__device__ float square(float x) { return x * x; }
__device__ op_t table[2] = {twice, square};
__global__ void apply(float* v, int which, int n) { int i = threadIdx.x; if (i < n) v[i] = table[which & 1](v[i]); }
