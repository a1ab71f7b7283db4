// Corpus source for the front-end tests: compiled by nvcc during the test.
// libcu++ atomics: cuda::atomic_ref and cuda::std::atomic on several widths and types, at
// every thread scope and memory order. They lower to atom/ld/st/fence with .sem and .scope
// qualifiers and, for 16-bit and float min/max, to CAS loops.
#include <cuda/atomic>
#include <cuda/std/atomic>

template <cuda::thread_scope Scope>
__device__ void scoped_ops(int* i, unsigned long long* u, float* f, double* d) {
  cuda::atomic_ref<int, Scope> ri(*i);
  cuda::atomic_ref<unsigned long long, Scope> ru(*u);
  cuda::atomic_ref<float, Scope> rf(*f);
  cuda::atomic_ref<double, Scope> rd(*d);
  ri.fetch_add(1, cuda::std::memory_order_relaxed);
  ri.fetch_sub(2, cuda::std::memory_order_release);
  ri.fetch_min(-3, cuda::std::memory_order_acquire);
  ri.fetch_max(4, cuda::std::memory_order_acq_rel);
  ri.fetch_and(5, cuda::std::memory_order_seq_cst);
  ri.fetch_or(6);
  ri.fetch_xor(7, cuda::std::memory_order_relaxed);
  int expected = 0;
  ri.compare_exchange_strong(expected, 9, cuda::std::memory_order_acq_rel, cuda::std::memory_order_acquire);
  ri.compare_exchange_weak(expected, 10);
  ri.store(expected, cuda::std::memory_order_release);
  ru.fetch_add(1ull, cuda::std::memory_order_relaxed);
  ru.fetch_max(~0ull, cuda::std::memory_order_seq_cst);
  ru.fetch_min(3ull);
  ru.exchange(ru.load(cuda::std::memory_order_acquire) + 1, cuda::std::memory_order_acq_rel);
  rf.fetch_add(0.5f, cuda::std::memory_order_relaxed);
  rf.fetch_sub(0.25f);
  rf.fetch_min(-1.0f);
  rf.fetch_max(1.0f, cuda::std::memory_order_release);
  rd.fetch_add(1.0, cuda::std::memory_order_acq_rel);
  float fe = 1.0f;
  rf.compare_exchange_strong(fe, 2.0f);
}

__global__ void atomic_ref_scopes(int* i, unsigned long long* u, float* f, double* d) {
  scoped_ops<cuda::thread_scope_thread>(i, u, f, d);
  scoped_ops<cuda::thread_scope_block>(i + 1, u + 1, f + 1, d + 1);
  scoped_ops<cuda::thread_scope_device>(i + 2, u + 2, f + 2, d + 2);
  scoped_ops<cuda::thread_scope_system>(i + 3, u + 3, f + 3, d + 3);
}

__global__ void atomic_ref_small(short* s, unsigned short* us, signed char* c) {
  cuda::atomic_ref<short, cuda::thread_scope_device> rs(s[threadIdx.x % 4]);
  cuda::atomic_ref<unsigned short, cuda::thread_scope_block> rus(us[threadIdx.x % 4]);
  cuda::atomic_ref<signed char, cuda::thread_scope_system> rc(c[threadIdx.x % 4]);
  rs.fetch_add(1);
  rs.fetch_min(-5, cuda::std::memory_order_relaxed);
  unsigned short e = 0;
  rus.compare_exchange_strong(e, 3);
  rus.exchange(7, cuda::std::memory_order_release);
  rc.fetch_or(1);
  rc.store(rc.load() + 1);
}

__global__ void std_atomic_shared(int* out) {
  __shared__ cuda::std::atomic<int> counter;
  __shared__ cuda::atomic<unsigned, cuda::thread_scope_block> flag;
  if (threadIdx.x == 0) {
    new (&counter) cuda::std::atomic<int>(0);
    new (&flag) cuda::atomic<unsigned, cuda::thread_scope_block>(0);
  }
  __syncthreads();
  int mine = counter.fetch_add(1, cuda::std::memory_order_relaxed);
  if (mine == static_cast<int>(blockDim.x) - 1) flag.store(1, cuda::std::memory_order_release);
  while (flag.load(cuda::std::memory_order_acquire) == 0) {
  }
  cuda::std::atomic_thread_fence(cuda::std::memory_order_seq_cst);
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_block);
  out[blockIdx.x * blockDim.x + threadIdx.x] = mine + counter.load();
}
