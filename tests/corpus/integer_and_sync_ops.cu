// Corpus source for the front-end tests: compiled by nvcc during the test.
// Less common integer and synchronisation instructions: dp4a/dp2a, prmt with its modes,
// bfe/bfi/bfind/brev/fns, mul24/sad, funnel shifts, cvt with every rounding mode, named
// barriers (bar.arrive/bar.sync with counts, barrier.sync.aligned), __syncthreads_count/
// and/or, match.any/all, redux on integers, special registers (%lanemask_*, %dynamic_smem_size,
// %nsmid), and griddepcontrol on sm_90 (programmatic dependent launch).
#include <cstdint>
#include <cooperative_groups.h>

__global__ void int_ops(const unsigned* a, const unsigned* b, unsigned* out, long long* wide, double* d) {
  unsigned x = a[threadIdx.x], y = b[threadIdx.x], r[10];
  r[0] = __dp4a(x, y, 3u) + static_cast<unsigned>(__dp4a(static_cast<int>(x), static_cast<int>(y), -1));
  r[1] = __dp2a_lo(x, y, 1u) + __dp2a_hi(static_cast<int>(x), static_cast<int>(y), 2);
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r[2]) : "r"(x), "r"(y), "r"(threadIdx.x));
  asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r[3]) : "r"(x), "r"(y), "r"(1u));
  r[4] = __byte_perm(x, y, 0x3210 + threadIdx.x);
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r[5]) : "r"(x), "r"(4u), "r"(y & 15));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r[6]) : "r"(x), "r"(y), "r"(8u), "r"(5u));
  r[7] = __brev(x) ^ __clz(y) ^ __ffs(x) ^ __popc(y) ^ __fns(x, 0, 3) ^ __funnelshift_l(x, y, 7) ^ __funnelshift_rc(x, y, 40);
  r[8] = __umul24(x, y) + __usad(x, y, 5u) + __umulhi(x, y) + __mul24(static_cast<int>(x), 3);
  int64_t sx = static_cast<int64_t>(x) << 20;
  asm("bfind.shiftamt.s64 %0, %1;" : "=r"(r[9]) : "l"(sx));
  wide[threadIdx.x] = __mul64hi(sx, static_cast<long long>(y)) + static_cast<long long>(__umul64hi(sx, 77ull)) + __brevll(sx) +
                      __popcll(sx);
  double v = __uint_as_float(x);
  out[threadIdx.x] = r[0] ^ r[1] ^ r[2] ^ r[3] ^ r[4] ^ r[5] ^ r[6] ^ r[7] ^ r[8] ^ r[9] ^ __double2uint_rz(v) ^
                     __double2int_rd(v) ^ __double2int_ru(v) ^ __float2int_rn(static_cast<float>(v)) ^ __float2uint_rd(1.5f) ^
                     static_cast<unsigned>(__double2ll_rz(v)) ^ static_cast<unsigned>(__float2ll_ru(2.5f));
  d[threadIdx.x] = __ll2double_rd(sx) + __uint2double_rn(x) + __int2float_rz(static_cast<int>(y)) + __ull2float_ru(sx) +
                   __fdiv_rd(1.0f, v) + __dsqrt_ru(v) + __fmaf_rz(1.0f, 2.0f, v) + __frcp_rn(v) + __dadd_rz(v, 1.0);
}

__global__ void __launch_bounds__(256) named_barriers(const float* in, float* out) {
  __shared__ float stage[128];
  int warp = threadIdx.x / 32;
  if (warp < 4) {
    stage[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x] * 2.0f;
    asm volatile("bar.arrive 1, 256;" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 256;" ::: "memory");
    out[blockIdx.x * 128 + threadIdx.x - 128] = stage[255 - threadIdx.x];
  }
  asm volatile("barrier.sync.aligned 2;" ::: "memory");
  int cnt = __syncthreads_count(in[threadIdx.x] > 0.0f);
  int all = __syncthreads_and(in[threadIdx.x] > -1.0f);
  int any = __syncthreads_or(in[threadIdx.x] > 1.0f);
  unsigned mask = __match_any_sync(0xffffffffu, static_cast<unsigned>(cnt + threadIdx.x / 8));
  int pred;
  unsigned same = __match_all_sync(0xffffffffu, all + any, &pred);
  unsigned sum = __reduce_add_sync(0xffffffffu, mask) + __reduce_max_sync(0xffffffffu, same) + __reduce_or_sync(__activemask(), mask);
  unsigned lt, ge, dsmem, nsm;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsmem));
  asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
  __syncwarp(0x0000ffffu);
  out[4096 + threadIdx.x] = static_cast<float>(sum + pred + lt + ge + dsmem + nsm);
}

__global__ void dependent_launch(const float* in, float* out) {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  float v = in[threadIdx.x] * 3.0f;
#if __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  out[threadIdx.x] = v;
}
