// Corpus source for the front-end tests: compiled by nvcc during the test.
// libcu++ access properties: cuda::annotated_ptr with streaming, persisting and normal
// properties makes nvcc emit createpolicy and loads/stores carrying .L2::cache_hint;
// cuda::apply_access_property and cuda::discard_memory emit applypriority and discard.
#include <cuda/annotated_ptr>

__global__ void annotated(const float* in, float* out, int n) {
  cuda::annotated_ptr<const float, cuda::access_property::streaming> src(in);
  cuda::annotated_ptr<float, cuda::access_property::persisting> dst(out);
  cuda::access_property frac(static_cast<void*>(out), 4096, 0.5f, cuda::access_property::persisting{},
                             cuda::access_property::streaming{});
  cuda::annotated_ptr<float, cuda::access_property> mixed(out + n, frac);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = src[i];
    dst[i] = v * 2.0f;
    mixed[i] = v + 1.0f;
  }
}

__global__ void properties(float* data, int n) {
  cuda::apply_access_property(data, n * sizeof(float), cuda::access_property::persisting{});
  cuda::apply_access_property(data, n * sizeof(float), cuda::access_property::normal{});
  __syncthreads();
  if (threadIdx.x == 0) cuda::discard_memory(data + n, 128 * sizeof(float));
}
