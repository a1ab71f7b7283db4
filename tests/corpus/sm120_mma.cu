// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_120 sm_120a
// Consumer Blackwell (sm_120): on sm_120a, warp-level mma.sync with .kind::f8f6f4 on fp4/fp6/fp8
// inputs and the block-scaled .kind::mxf8f6f4 form with ue8m0 scale factors; everywhere,
// fp8 mma and the fp4/fp6 conversions that sm_120 has.
#include <cstdint>
#include <cuda_fp4.h>
#include <cuda_fp8.h>

__global__ void narrow_mma(const uint32_t* in, float* out, uint32_t sfa, uint32_t sfb) {
  uint32_t a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = in[i * 32 + threadIdx.x];
  for (int i = 0; i < 2; ++i) b[i] = in[128 + i * 32 + threadIdx.x];
  float c[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#if defined(__CUDA_ARCH_FEAT_SM120_ALL)
  asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e5m2.e2m3.f32.ue8m0 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, %10, {0, 0}, %11, {0, 0};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(sfa), "r"(sfb));
#endif
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = c[i];
}

__global__ void narrow_cvt(const float4* in, uint16_t* out) {
  float4 v = in[threadIdx.x];
  out[2 * threadIdx.x] = __nv_cvt_float2_to_fp4x2(make_float2(v.x, v.y), __NV_E2M1, cudaRoundNearest) |
                         __nv_cvt_float2_to_fp4x2(make_float2(v.z, v.w), __NV_E2M1, cudaRoundNearest) << 8;
  out[2 * threadIdx.x + 1] = __nv_cvt_float2_to_fp8x2(make_float2(v.x, v.w), __NV_SATFINITE, __NV_E5M2);
}
