// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_80 sm_90 sm_100a
// Narrow float conversions through cuda_fp8.h, cuda_fp6.h and cuda_fp4.h: software sequences
// on older targets, cvt with .e4m3x2/.e2m3x2/.e2m1x2/.ue8m0x2 and .satfinite/.relu where the
// target has them (sm_100a), for scalars, pairs, half/bfloat16 and double sources.
#include <cstdint>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

__global__ void to_narrow(const float2* in, const __half2* hin, const double2* din, uint16_t* fp8, uint16_t* fp6,
                          uint8_t* fp4, uint16_t* e8m0) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float2 v = in[i];
  __half2 h = hin[i];
  fp8[4 * i] = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E4M3);
  fp8[4 * i + 1] = __nv_cvt_float2_to_fp8x2(v, __NV_NOSAT, __NV_E5M2);
  fp8[4 * i + 2] = __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, __NV_E5M2);
  fp8[4 * i + 3] = __nv_cvt_double_to_fp8(din[i].x, __NV_SATFINITE, __NV_E4M3) | __nv_cvt_bfloat16raw_to_fp8(__float2bfloat16(v.y), __NV_SATFINITE, __NV_E4M3) << 8;
  fp6[2 * i] = __nv_cvt_float2_to_fp6x2(v, __NV_E2M3, cudaRoundNearest);
  fp6[2 * i + 1] = __nv_cvt_halfraw2_to_fp6x2(h, __NV_E3M2, cudaRoundNearest) ^ __nv_cvt_float_to_fp6(v.x, __NV_E3M2, cudaRoundZero);
  fp4[i] = __nv_cvt_float2_to_fp4x2(v, __NV_E2M1, cudaRoundNearest) ^ __nv_cvt_double2_to_fp4x2(din[i], __NV_E2M1, cudaRoundNearest);
  e8m0[i] = __nv_cvt_float2_to_e8m0x2(v, __NV_SATFINITE, cudaRoundPosInf) ^ __nv_cvt_float_to_e8m0(v.y, __NV_NOSAT, cudaRoundZero);
}

__global__ void from_narrow(const uint16_t* fp8, const uint8_t* fp6, const uint8_t* fp4, const uint8_t* e8m0, float* out,
                            __half2* hout) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __half2_raw a = __nv_cvt_fp8x2_to_halfraw2(fp8[i], __NV_E4M3);
  __half_raw b = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(fp8[i] >> 8), __NV_E5M2);
  __half2_raw c = __nv_cvt_fp6x2_to_halfraw2(fp6[2 * i] | fp6[2 * i + 1] << 8, __NV_E2M3);
  __half_raw d = __nv_cvt_fp4_to_halfraw(fp4[i], __NV_E2M1);
  __half2_raw e = __nv_cvt_fp4x2_to_halfraw2(fp4[i], __NV_E2M1);
  __nv_bfloat16_raw f = __nv_cvt_e8m0_to_bf16raw(e8m0[i]);
  hout[i] = __hadd2(__half2(a), __half2(c)) + __half2(e);
  out[i] = __half2float(__half(b)) + __half2float(__half(d)) + __bfloat162float(__nv_bfloat16(f));
}

__global__ void fp_types(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __nv_fp8_e4m3 a(in[i]);
  __nv_fp8x4_e5m2 b(make_float4(in[i], 1.0f, -2.0f, 0.5f));
  __nv_fp6_e3m2 c(in[i] * 2.0f);
  __nv_fp6x2_e2m3 d(make_float2(in[i], -in[i]));
  __nv_fp4_e2m1 e(in[i] - 1.0f);
  __nv_fp4x4_e2m1 f(make_float4(in[i], 0.25f, 3.0f, -6.0f));
  __nv_fp8_e8m0 g(in[i]);
  float4 fb = static_cast<float4>(b), ff = static_cast<float4>(f);
  float2 fd = static_cast<float2>(d);
  out[i] = static_cast<float>(a) + fb.x + fb.w + static_cast<float>(c) + fd.x + static_cast<float>(e) + ff.z + static_cast<float>(g);
}
