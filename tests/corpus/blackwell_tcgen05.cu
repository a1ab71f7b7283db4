// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_100a
// Blackwell (sm_100a) features through inline PTX and the cuda::ptx wrappers: tensor-memory
// allocation, tcgen05.mma with an mbarrier commit, tcgen05.ld/st and their waits and fences,
// cluster launch control (try_cancel / query_cancel on a .b128 response), redux.sync on f32.
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

__global__ void __launch_bounds__(128) tmem_mma(float* out, uint64_t adesc, uint64_t bdesc, uint32_t idesc) {
  __shared__ uint32_t tmem_base;
  __shared__ alignas(8) uint64_t mbar;
  uint32_t warp = threadIdx.x / 32;
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 64;"
                 :: "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&tmem_base))) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  }
  if (threadIdx.x == 0) ptx::mbarrier_init(&mbar, 1);
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;");
  uint32_t taddr = tmem_base;
  if (threadIdx.x == 0) {
    asm volatile("{\n\t.reg .pred acc;\n\tsetp.ne.b32 acc, %4, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, acc;\n\t}"
                 :: "r"(taddr), "l"(adesc), "l"(bdesc), "r"(idesc), "r"(0) : "memory");
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                 :: "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&mbar))) : "memory");
  }
  while (!ptx::mbarrier_try_wait_parity(&mbar, 0u)) {
  }
  asm volatile("tcgen05.fence::after_thread_sync;");
  uint32_t r[4];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(taddr + ((warp * 32) << 16)));
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  asm volatile("tcgen05.st.sync.aligned.16x64b.x1.b32 [%0], {%1};" :: "r"(taddr + 32), "r"(r[0] + 1) : "memory");
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = __uint_as_float(r[i]);
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 64;" :: "r"(taddr) : "memory");
}

__global__ void tcgen05_wrappers(uint32_t* out, uint64_t desc) {
  __shared__ uint32_t slot;
  ptx::tcgen05_alloc(ptx::cta_group_1, &slot, 32);
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::tcgen05_fence_after_thread_sync();
  uint32_t t = slot;
  ptx::tcgen05_cp_128x256b(ptx::cta_group_1, t, desc);
  ptx::tcgen05_shift_down(ptx::cta_group_1, t);
  ptx::tcgen05_wait_st();
  ptx::tcgen05_dealloc(ptx::cta_group_1, t, 32);
  ptx::tcgen05_relinquish_alloc_permit(ptx::cta_group_1);
  out[threadIdx.x] = t;
}

__global__ void work_stealing(int* out, int n) {
  __shared__ alignas(16) uint4 response;
  __shared__ alignas(8) uint64_t mbar;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&mbar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  int tile = blockIdx.x;
  for (int phase = 0;; phase ^= 1) {
    for (int i = tile * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] += 1;
    if (threadIdx.x == 0) {
      asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];"
                   :: "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&response))),
                      "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&mbar))) : "memory");
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &mbar, 16u);
    }
    while (!ptx::mbarrier_try_wait_parity(&mbar, static_cast<uint32_t>(phase))) {
    }
    uint32_t cancelled, next;
    asm volatile("{\n\t.reg .b128 resp;\n\t.reg .pred ok;\n\t"
                 "ld.shared.b128 resp, [%2];\n\t"
                 "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 ok, resp;\n\t"
                 "selp.u32 %0, 1, 0, ok;\n\t"
                 "@ok clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %1, resp;\n\t"
                 "@!ok mov.u32 %1, 0;\n\t}"
                 : "=r"(cancelled), "=r"(next)
                 : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&response))) : "memory");
    __syncthreads();
    if (!cancelled) break;
    tile = static_cast<int>(next);
  }
}

__global__ void redux_float(const float* in, float* out) {
  float v = in[threadIdx.x], mn, mx, amx;
  asm("redux.sync.min.f32 %0, %1, 0xffffffff;" : "=f"(mn) : "f"(v));
  asm("redux.sync.max.NaN.f32 %0, %1, 0xffffffff;" : "=f"(mx) : "f"(v));
  asm("redux.sync.max.abs.f32 %0, %1, %2;" : "=f"(amx) : "f"(v), "r"(__activemask()));
  out[threadIdx.x] = mn + mx + amx;
}
