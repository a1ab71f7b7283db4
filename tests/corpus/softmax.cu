// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void row_softmax(const float* x, float* y, int cols) {
  extern __shared__ float buf[];
  const float* row = x + blockIdx.x * (long)cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  buf[threadIdx.x] = m; __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + s]); __syncthreads(); }
  m = buf[0]; __syncthreads();
  float sum = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(row[c] - m);
  buf[threadIdx.x] = sum; __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s]; __syncthreads(); }
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * (long)cols + c] = __expf(row[c] - m) / buf[0];
}
