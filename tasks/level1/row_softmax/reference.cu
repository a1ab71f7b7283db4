// The nvcc baseline: one block per row; a block-wide max, then a block-wide sum of
// exponentials, then the normalised outputs. Accurate expf.
__device__ float block_reduce(float v, bool is_max) {
  __shared__ float part[256];
  part[threadIdx.x] = v;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      float o = part[threadIdx.x + w];
      part[threadIdx.x] = is_max ? fmaxf(part[threadIdx.x], o) : part[threadIdx.x] + o;
    }
    __syncthreads();
  }
  float r = part[0];
  __syncthreads();
  return r;
}
extern "C" __global__ void row_softmax_ref(const float* x, float* y, unsigned rows, unsigned cols) {
  const float* in = x + (size_t)blockIdx.x * cols;
  float* out = y + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
  m = block_reduce(m, true);
  float s = 0.0f;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) s += expf(in[c] - m);
  s = block_reduce(s, false);
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - m) / s;
}
