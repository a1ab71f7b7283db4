// The nvcc baseline: one thread per element.
extern "C" __global__ void vector_add_ref(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
