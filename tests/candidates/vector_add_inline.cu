// A CUDA C++ candidate with inline PTX: NVRTC compiles it, then it takes the PTX path.
// expect: passed
// @launch grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1)
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float z;
  asm("add.rn.f32 %0, %1, %2;" : "=f"(z) : "f"(a[i]), "f"(b[i]));
  c[i] = z;
}
