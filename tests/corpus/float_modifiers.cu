// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90 sm_90a sm_100a
// Floating-point instructions with their rarer modifiers, through inline PTX as kernel
// libraries write them: .ftz/.sat/.relu/.NaN/.xorsign.abs, approximate transcendentals on
// f32, f16x2 and bf16x2 (tanh, ex2), packed conversions with .relu/.satfinite, testp,
// copysign, and the fast-math intrinsics that lower to .approx forms.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void modifiers(const float* in, float* out, unsigned* packed) {
  float x = in[threadIdx.x], y = in[threadIdx.x + 32], r[8];
  asm("add.rn.ftz.sat.f32 %0, %1, %2;" : "=f"(r[0]) : "f"(x), "f"(y));
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r[1]) : "f"(x), "f"(y));
  asm("min.xorsign.abs.f32 %0, %1, %2;" : "=f"(r[2]) : "f"(x), "f"(y));
  asm("tanh.approx.f32 %0, %1;" : "=f"(r[3]) : "f"(x));
  asm("copysign.f32 %0, %1, %2;" : "=f"(r[4]) : "f"(x), "f"(y));
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r[5]) : "f"(x));
  asm("fma.rn.ftz.sat.f32 %0, %1, %2, %1;" : "=f"(r[6]) : "f"(x), "f"(y));
  unsigned finite;
  asm("{ .reg .pred p; testp.finite.f32 p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(finite) : "f"(x));
  r[7] = __expf(x) + __logf(y) + __sinf(x) + __cosf(y) + __fdividef(x, y) + __saturatef(x) + __powf(x, 0.5f) + __tanf(y);
  unsigned h, b, c, d;
  asm("cvt.rn.relu.satfinite.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(x), "f"(y));
  asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(b) : "f"(x), "f"(y));
  asm("ex2.approx.f16x2 %0, %1;" : "=r"(c) : "r"(h));
  asm("tanh.approx.bf16x2 %0, %1;" : "=r"(d) : "r"(b));
  asm("fma.rn.relu.bf16x2 %0, %1, %2, %1;" : "=r"(d) : "r"(d), "r"(b));
  asm("max.xorsign.abs.f16x2 %0, %1, %2;" : "=r"(c) : "r"(c), "r"(h));
  asm("min.NaN.bf16x2 %0, %1, %2;" : "=r"(b) : "r"(b), "r"(d));
  float s = 0;
  for (int i = 0; i < 8; ++i) s += r[i];
  out[threadIdx.x] = s + finite;
  packed[threadIdx.x] = h ^ b ^ c ^ d;
}

__global__ void half_math(const __half2* a, const __nv_bfloat162* b, __half2* ha, __nv_bfloat162* hb) {
  __half2 x = a[threadIdx.x];
  __nv_bfloat162 y = b[threadIdx.x];
  ha[threadIdx.x] = h2exp2(x) + h2rcp(x) + h2sqrt(x) + __hfma2_relu(x, x, x) + __hmax2_nan(x, h2log2(x)) + h2tanh(x);
  hb[threadIdx.x] = h2exp(y) + __hfma2_relu(y, y, y) + __hmin2_nan(y, h2rsqrt(y)) + __hcmadd(y, y, y);
}
