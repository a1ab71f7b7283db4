// Corpus source for the front-end tests: compiled by nvcc during the test.
// The atomic intrinsics in their less common forms: 16-bit CAS, half and bfloat16 adds
// (scalar and packed), scoped variants (_block, _system) that emit .cta/.sys, results that are
// unused (red instead of atom), exchange, wrapping inc/dec, 64-bit min/max and bitwise ops.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void atom16(unsigned short* us, __half* h, __half2* h2, __nv_bfloat16* b, __nv_bfloat162* b2, short* out) {
  unsigned short old = atomicCAS(us + threadIdx.x % 8, static_cast<unsigned short>(0), static_cast<unsigned short>(threadIdx.x));
  __half ho = atomicAdd(h + threadIdx.x % 4, __float2half(1.0f));
  __half2 h2o = atomicAdd(h2, __floats2half2_rn(0.5f, 0.25f));
  __nv_bfloat16 bo = atomicAdd(b, __float2bfloat16(2.0f));
  __nv_bfloat162 b2o = atomicAdd(b2, __floats2bfloat162_rn(1.0f, -1.0f));
  atomicAdd(h + 8, __float2half(3.0f));
  atomicAdd(b2 + 1, b2o);
  out[threadIdx.x] = static_cast<short>(old) + __half2float(ho) + __low2float(h2o) + __bfloat162float(bo);
}

__global__ void atom_scoped(int* i, unsigned* u, unsigned long long* ull, long long* ll, float* f, double* d) {
  int r = atomicAdd_block(i, 1) + atomicAdd_system(i + 1, 2);
  atomicAdd_block(f, 1.0f);
  atomicAdd_system(d, 1.0);
  atomicSub(i + 2, 3);
  atomicSub_block(u + 2, 3u);
  r += atomicExch(i + 3, r);
  r += atomicExch_block(u + 3, 4u);
  atomicExch_system(f + 1, 2.0f);
  r += atomicInc(u + 4, 100u) + atomicDec(u + 5, 50u);
  atomicInc_system(u + 6, 7u);
  atomicDec_block(u + 7, 7u);
  r += static_cast<int>(atomicMin(ull, 5ull) + atomicMax(ull + 1, 6ull));
  r += static_cast<int>(atomicMin(ll, -5ll) + atomicMax_block(ll + 1, 6ll));
  atomicMin_system(ll + 2, -1ll);
  atomicMax(ll + 3, 9ll);
  r += static_cast<int>(atomicAnd(ull + 2, 0xffull) | atomicOr_block(ull + 3, 1ull) | atomicXor_system(ull + 4, 3ull));
  r += static_cast<int>(atomicCAS(ull + 5, 0ull, 1ull)) + atomicCAS_block(i + 4, 0, 1) + atomicCAS_system(u + 8, 1u, 2u);
  atomicExch(ull + 6, 8ull);
  atomicAdd(reinterpret_cast<unsigned long long*>(ll + 4), 1ull);
  i[16 + threadIdx.x] = r;
}

__global__ void shared_atomics(int* out) {
  __shared__ int s_i[32];
  __shared__ unsigned long long s_u[32];
  __shared__ float s_f[32];
  __shared__ __half2 s_h[32];
  s_i[threadIdx.x % 32] = 0;
  s_u[threadIdx.x % 32] = 0;
  s_f[threadIdx.x % 32] = 0;
  s_h[threadIdx.x % 32] = __half2();
  __syncthreads();
  atomicAdd(&s_i[threadIdx.x % 7], 1);
  atomicMax(&s_u[threadIdx.x % 5], static_cast<unsigned long long>(threadIdx.x));
  atomicAdd(&s_f[threadIdx.x % 3], 0.5f);
  atomicAdd(&s_h[threadIdx.x % 2], __floats2half2_rn(1.0f, 2.0f));
  atomicCAS(&s_u[31], 0ull, 1ull);
  __syncthreads();
  out[threadIdx.x] = s_i[threadIdx.x % 32] + static_cast<int>(s_u[threadIdx.x % 32]) + static_cast<int>(s_f[threadIdx.x % 32]);
}
