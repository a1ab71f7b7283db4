// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90a
// The CUDA toolkit's cuda::ptx wrappers emit a wide range of modern PTX (fences, mbarrier,
// bulk copies, cluster operations, special registers); the front end must accept all of it.
#include <cuda/ptx>
#include <cstdint>
namespace ptx = cuda::ptx;

__global__ void __cluster_dims__(2, 1, 1) wrappers(float* gmem, uint32_t* out, const void* tmap) {
  __shared__ alignas(128) float smem[1024];
  __shared__ alignas(8) uint64_t bar;
  ptx::fence(ptx::sem_sc, ptx::scope_cta);
  ptx::fence(ptx::sem_acq_rel, ptx::scope_gpu);
  ptx::fence(ptx::sem_sc, ptx::scope_cluster);
  ptx::fence_proxy_async();
  ptx::fence_proxy_async(ptx::space_shared);
  ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  ptx::mbarrier_init(&bar, 1);
  uint64_t st = ptx::mbarrier_arrive(&bar);
  st ^= ptx::mbarrier_arrive(&bar, 1u);
  st ^= ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, 4096u);
  ptx::mbarrier_expect_tx(ptx::sem_relaxed, ptx::scope_cta, ptx::space_shared, &bar, 16u);
  bool done = ptx::mbarrier_try_wait(&bar, st);
  done &= ptx::mbarrier_try_wait_parity(&bar, 0u);
  done &= ptx::mbarrier_test_wait(&bar, st);
  ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, smem, gmem, 4096u, &bar);
  ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, gmem, smem, 4096u);
  ptx::cp_async_bulk_commit_group();
  ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  ptx::cp_async_bulk_wait_group(ptx::n32_t<1>{});
  int32_t c2[2] = {0, 0};
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, smem, tmap, c2, &bar);
  ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, tmap, c2, smem);
  ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, ptx::op_add, gmem, smem, 4096u);
  ptx::barrier_cluster_arrive();
  ptx::barrier_cluster_wait();
  ptx::barrier_cluster_arrive(ptx::sem_relaxed);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
  ptx::st_async(reinterpret_cast<uint32_t*>(smem), 7u, &bar);
  ptx::red_async(ptx::op_add, reinterpret_cast<uint32_t*>(smem), 1u, &bar);
  uint32_t r = ptx::getctarank(ptx::space_cluster, smem);
  r += ptx::get_sreg_tid_x() + ptx::get_sreg_laneid() + ptx::get_sreg_warpid() + ptx::get_sreg_nwarpid();
  r += ptx::get_sreg_smid() + ptx::get_sreg_nsmid() + (uint32_t)ptx::get_sreg_gridid();
  r += ptx::get_sreg_is_explicit_cluster() + ptx::get_sreg_clusterid_x() + ptx::get_sreg_nclusterid_y();
  r += ptx::get_sreg_cluster_ctaid_x() + ptx::get_sreg_cluster_nctaid_z() + ptx::get_sreg_cluster_ctarank();
  r += ptx::get_sreg_cluster_nctarank() + ptx::get_sreg_lanemask_eq() + ptx::get_sreg_lanemask_lt();
  r += ptx::get_sreg_clock() + ptx::get_sreg_clock_hi() + (uint32_t)ptx::get_sreg_clock64();
  r += (uint32_t)ptx::get_sreg_globaltimer() + ptx::get_sreg_globaltimer_lo() + ptx::get_sreg_total_smem_size();
  r += ptx::get_sreg_aggr_smem_size() + ptx::get_sreg_dynamic_smem_size();
  r += ptx::prmt(r, r + 1, 0x3210u) + ptx::prmt_f4e(r, r, 1u) + ptx::bmsk_clamp(r, 4u) + ptx::bfind(r);
  r += ptx::shl(r, 3u) + ptx::shr(r, 2u);
  out[threadIdx.x] = r + done;
  if (r == 12345) ptx::trap();
}
