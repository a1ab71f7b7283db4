// The nvcc baseline: one warp per row, lanes stride along the row, a shuffle reduction.
extern "C" __global__ void gemv_ref(const float* a, const float* x, float* y, unsigned rows, unsigned cols) {
  unsigned row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  float s = 0.0f;
  for (unsigned c = lane; c < cols; c += 32) s += a[(size_t)row * cols + c] * x[c];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) y[row] = s;
}
