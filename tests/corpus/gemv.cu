// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void gemv(const float* A, const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (r >= rows) return;
  float s = 0;
  for (int c = lane; c < cols; c += 32) s += __ldg(&A[(long)r * cols + c]) * __ldg(&x[c]);
  for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
  if (lane == 0) y[r] = s;
}
