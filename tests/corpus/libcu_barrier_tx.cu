// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90 sm_90a sm_100a
// Hopper transaction barriers through libcu++: cuda::device::barrier_arrive_tx with a bulk
// copy (cp.async.bulk through cuda::device::memcpy_async_tx), cluster-scope barrier.
// The shared barriers are initialised by init() as the libcu++ documentation shows.
#pragma nv_diag_suppress static_var_with_dynamic_init
#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda/std/utility>

__global__ void arrive_tx(const int* in, int* out) {
  using barrier_t = cuda::barrier<cuda::thread_scope_block>;
  __shared__ alignas(16) int smem[1024];
  __shared__ barrier_t bar;
  if (threadIdx.x == 0) {
    init(&bar, blockDim.x);
    cuda::device::experimental::fence_proxy_async_shared_cta();
  }
  __syncthreads();
  barrier_t::arrival_token token;
  if (threadIdx.x == 0) {
    cuda::device::memcpy_async_tx(smem, in + blockIdx.x * 1024, cuda::aligned_size_t<16>(sizeof(smem)), bar);
    token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem));
  } else {
    token = bar.arrive();
  }
  bar.wait(cuda::std::move(token));
  int s = 0;
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) s += smem[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void expect_tx(uint64_t* unused) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::device::barrier_expect_tx(bar, 0);
    auto t = bar.arrive();
    bar.wait(cuda::std::move(t));
  }
  (void)unused;
}
