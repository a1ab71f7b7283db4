#include <cuda.h>
// The reference ignores the tensor map (it is passed by value all the same).
extern "C" __global__ void copy_ref(const float* in, const __grid_constant__ CUtensorMap, float* out, unsigned rows, unsigned cols) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (size_t)rows * cols) out[i] = in[i];
}
