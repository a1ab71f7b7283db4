// The nvcc baseline: one thread per element; reads are coalesced, writes are strided.
extern "C" __global__ void transpose_ref(const float* in, float* out, unsigned rows, unsigned cols) {
  unsigned c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}
