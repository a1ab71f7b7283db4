// Corpus source for the front-end tests: compiled by nvcc during the test.
// Device-runtime features that change a module's shape: printf with many argument types
// (vprintf and its local buffer), alloca (dynamic stack: stacksave/alloca/stackrestore),
// __managed__ and __constant__ variables with initialisers, __device__ arrays of structs,
// malloc/free, assert and __trap.
#include <cassert>
#include <cstdio>

struct Coeffs {
  float scale;
  int offset;
  double bias[2];
};
__constant__ Coeffs k_coeffs = {1.5f, 3, {0.25, -0.5}};
__constant__ float k_table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__managed__ int m_counter = 7;
__managed__ float m_values[64];
__device__ Coeffs d_coeff_array[4] = {{1.0f, 1, {1.0, 2.0}}, {2.0f, 2, {3.0, 4.0}}};
__device__ const char* d_names[] = {"alpha", "beta"};

__global__ void print_things(const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % 97 == 0)
    printf("i=%d v=%f h=%lld u=%u s=%s c=%c p=%p d=%.3e\n", i, in[i], static_cast<long long>(i) << 33, static_cast<unsigned>(n),
           d_names[i & 1], 'a' + (i & 7), in + i, static_cast<double>(in[i]) * k_coeffs.bias[1]);
  printf("done\n");
}

__device__ __noinline__ float sum_dynamic(const float* in, int len) {
  float* tmp = static_cast<float*>(alloca(len * sizeof(float)));
  for (int j = 0; j < len; ++j) tmp[j] = in[j] * k_table[j & 7];
  float s = 0;
  for (int j = len - 1; j >= 0; --j) s += tmp[j];
  return s;
}

__global__ void dynamic_stack(const float* in, float* out, int len) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = sum_dynamic(in + i * len, len) * k_coeffs.scale + k_coeffs.offset + d_coeff_array[i & 3].bias[0];
}

__global__ void managed_and_heap(int n) {
  int i = threadIdx.x;
  atomicAdd(&m_counter, 1);
  m_values[i & 63] += k_table[i & 7];
  int* buf = static_cast<int*>(malloc(n * sizeof(int)));
  if (buf == nullptr) __trap();
  for (int j = 0; j < n; ++j) buf[j] = j * i;
  assert(buf[n - 1] >= 0);
  m_values[(i + 1) & 63] = buf[n - 1];
  free(buf);
}
