// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void hist(const unsigned char* in, unsigned* bins, int n) {
  __shared__ unsigned local[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[in[i]], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}
__global__ void atom_misc(int* p, float* f, double* d, unsigned long long* u) {
  atomicMax(p, threadIdx.x); atomicCAS(p + 1, 0, 1); atomicExch(p + 2, 5); atomicAdd(f, 1.0f); atomicAdd(d, 2.0);
  atomicAdd(u, 3ull); atomicInc((unsigned*)p + 3, 10u); atomicAnd(p + 4, 7); atomicOr(p + 5, 8); atomicXor(p + 6, 9);
}
