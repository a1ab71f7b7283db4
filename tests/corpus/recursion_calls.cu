// Corpus source for the front-end tests: compiled by nvcc during the test.
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ void two_outputs(int a, int* x, float* y) { *x = a * 3; *y = a * 0.5f; }
__global__ void calls(int* out, float* f) { int x; float y; two_outputs(threadIdx.x, &x, &y); out[threadIdx.x] = fib(threadIdx.x % 10) + x; f[threadIdx.x] = y; }
