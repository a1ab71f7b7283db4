// Corpus source for the front-end tests: compiled by nvcc during the test.
// libcu++ synchronisation: cuda::barrier arrive/wait (mbarrier underneath on sm_80+),
// cuda::pipeline with cuda::memcpy_async double buffering (cp.async with zero-fill and
// commit/wait groups), and cuda::latch.
// The shared barriers are initialised by init() as the libcu++ documentation shows.
#pragma nv_diag_suppress static_var_with_dynamic_init
#include <cuda/barrier>
#include <cuda/latch>
#include <cuda/pipeline>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void barrier_phases(float* data, int iters) {
  using barrier_t = cuda::barrier<cuda::thread_scope_block>;
  __shared__ barrier_t bar;
  __shared__ float buf[256];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  float acc = 0.0f;
  for (int it = 0; it < iters; ++it) {
    buf[threadIdx.x] = data[it * 256 + threadIdx.x];
    bar.arrive_and_wait();
    acc += buf[(threadIdx.x + 1) % 256];
    auto token = bar.arrive();
    bar.wait(std::move(token));
  }
  if (threadIdx.x < 32) bar.arrive_and_drop();
  data[threadIdx.x] = acc;
}

__global__ void memcpy_async_barrier(const float4* in, float4* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ float4 tile[128];
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, in + blockIdx.x * 128, cuda::aligned_size_t<16>(sizeof(tile)), bar);
  bar.arrive_and_wait();
  float4 v = tile[127 - threadIdx.x];
  out[blockIdx.x * 128 + threadIdx.x] = make_float4(v.w, v.z, v.y, v.x);
}

__global__ void pipeline_double_buffer(const float* in, float* out, int tiles) {
  constexpr int stages = 2;
  __shared__ float smem[stages][256];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  float acc = 0.0f;
  for (int fetch = 0, use = 0; use < tiles; ++use) {
    for (; fetch < tiles && fetch < use + stages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, smem[fetch % stages], in + fetch * 256, sizeof(float) * 256, pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    acc += smem[use % stages][threadIdx.x];
    pipe.consumer_release();
  }
  out[blockIdx.x * 256 + threadIdx.x] = acc;
}

__global__ void per_thread_pipeline(const int* in, int* out) {
  __shared__ int stage[128];
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  pipe.producer_acquire();
  cuda::memcpy_async(&stage[threadIdx.x], &in[blockIdx.x * 128 + threadIdx.x], sizeof(int), pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  __syncthreads();
  out[blockIdx.x * 128 + threadIdx.x] = stage[127 - threadIdx.x];
}

__global__ void latch_count(int* out) {
  using latch_t = cuda::latch<cuda::thread_scope_block>;
  __shared__ alignas(latch_t) unsigned char storage[sizeof(latch_t)];
  latch_t& l = *reinterpret_cast<latch_t*>(storage);
  if (threadIdx.x == 0) new (&l) latch_t(blockDim.x);
  __syncthreads();
  l.count_down();
  l.wait();
  out[threadIdx.x] = 1;
}
