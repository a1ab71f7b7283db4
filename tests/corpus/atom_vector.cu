// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90 sm_90a sm_100a
// Hopper vector atomics: atomicAdd on float2/float4 (atom.global.v2.f32/.v4.f32 add, and red
// when the result is unused), plus 16-bit and vector forms through inline PTX.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void vec_atomics(float2* f2, float4* f4, float* out) {
  float2 a = atomicAdd(f2 + threadIdx.x % 4, make_float2(1.0f, 2.0f));
  float4 b = atomicAdd(f4 + threadIdx.x % 4, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
  atomicAdd(f4 + 8, make_float4(0.5f, 0.5f, 0.5f, 0.5f));
  atomicAdd(f2 + 8, a);
  out[threadIdx.x] = a.x + a.y + b.x + b.y + b.z + b.w;
}

__global__ void vec_atomics_ptx(float* f, __half* h, __nv_bfloat16* bf) {
  float a, b;
  asm volatile("atom.global.v2.f32.add {%0, %1}, [%2], {%3, %4};"
               : "=f"(a), "=f"(b) : "l"(f), "f"(1.0f), "f"(2.0f) : "memory");
  asm volatile("red.global.gpu.relaxed.v4.f32.add [%0], {%1, %1, %1, %1};" :: "l"(f + 4), "f"(a + b) : "memory");
  unsigned short hv = __half_as_ushort(__float2half(1.0f));
  asm volatile("red.global.v2.f16.add.noftz [%0], {%1, %1};" :: "l"(h), "h"(hv) : "memory");
  asm volatile("red.global.sys.release.v4.bf16x2.add.noftz [%0], {%1, %1, %1, %1};"
               :: "l"(bf), "r"(0x3f803f80u) : "memory");
  asm volatile("red.global.cta.v8.bf16.add.noftz [%0], {%1, %1, %1, %1, %1, %1, %1, %1};"
               :: "l"(bf + 64), "h"(static_cast<unsigned short>(0x3f80)) : "memory");
  unsigned short old;
  asm volatile("atom.global.cas.b16 %0, [%1], %2, %3;" : "=h"(old) : "l"(h + 16), "h"(hv), "h"(static_cast<unsigned short>(0)) : "memory");
  f[64 + threadIdx.x] = a + b + old;
}
