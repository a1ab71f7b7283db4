// A cheat the old timing loop paid for: the kernel returns at once when its output's first
// element no longer holds the poison word, i.e. when the harness did not write fresh outputs
// since the last launch. Element 0 is written last, by the last block to finish, so within
// one launch every block sees the poison and computes; verify (fresh outputs per case)
// passes it. With outputs poisoned before every timed trial it computes every time: its
// time is honest, and the checked trials pass.
// @launch grid=(min(ceil_div(n, 256), 1056), 1, 1) block=(256, 1, 1)
__device__ unsigned blocks_done;

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
  __shared__ bool skip;
  if (threadIdx.x == 0) skip = __float_as_uint(*(volatile float*)c) != 0xFFBADBADu;
  __syncthreads();
  if (skip) return;
  unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    if (i != 0) c[i] = a[i] + b[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
      blocks_done = 0;  // the counter is ready for the next launch
      c[0] = a[0] + b[0];
    }
  }
}
