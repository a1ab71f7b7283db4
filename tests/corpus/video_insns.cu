// Corpus source for the front-end tests: compiled by nvcc during the test.
// The video instructions with their operand selectors (.b0-.b3, .h0/.h1), saturation and
// secondary operations, the SIMD video forms with lane selectors and destination masks, and
// the __vadd4-style intrinsics, which CUDA 13 lowers to plain integer code.
#include <cstdint>

__global__ void scalar_video(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out) {
  unsigned x = a[threadIdx.x], y = b[threadIdx.x], z = c[threadIdx.x], r[12];
  asm("vadd.u32.u32.u32.sat %0, %1.b0, %2.b3;" : "=r"(r[0]) : "r"(x), "r"(y));
  asm("vadd.s32.s32.s32.add %0, %1.h1, %2.h0, %3;" : "=r"(r[1]) : "r"(x), "r"(y), "r"(z));
  asm("vsub.s32.u32.s32.min %0, %1.b1, %2, %3;" : "=r"(r[2]) : "r"(x), "r"(y), "r"(z));
  asm("vmad.s32.u32.u32.shr15 %0, %1.h0, %2.h1, %3;" : "=r"(r[3]) : "r"(x), "r"(y), "r"(z));
  asm("vmad.u32.u32.u32.sat %0, -%1.b2, %2.b1, %3;" : "=r"(r[4]) : "r"(x), "r"(y), "r"(z));
  asm("vmin.u32.u32.u32 %0, %1.b3, %2.b2;" : "=r"(r[5]) : "r"(x), "r"(y));
  asm("vmax.s32.s32.s32.max %0, %1, %2.h1, %3;" : "=r"(r[6]) : "r"(x), "r"(y), "r"(z));
  asm("vset.u32.u32.lt %0, %1.b0, %2.b0;" : "=r"(r[7]) : "r"(x), "r"(y));
  asm("vset.s32.u32.ge.add %0, %1.h0, %2.h1, %3;" : "=r"(r[8]) : "r"(x), "r"(y), "r"(z));
  asm("vshl.u32.u32.u32.clamp %0, %1, %2;" : "=r"(r[9]) : "r"(x), "r"(y));
  asm("vshr.s32.s32.u32.wrap.add %0, %1.h1, %2, %3;" : "=r"(r[10]) : "r"(x), "r"(y), "r"(z));
  asm("vabsdiff.u32.u32.u32.add %0, %1.b1, %2.b1, %3;" : "=r"(r[11]) : "r"(x), "r"(y), "r"(z));
  unsigned s = 0;
  for (int i = 0; i < 12; ++i) s = s * 31 + r[i];
  out[threadIdx.x] = s;
}

__global__ void simd_video(const unsigned* a, const unsigned* b, unsigned* out) {
  unsigned x = a[threadIdx.x], y = b[threadIdx.x], z = 0, r[8];
  asm("vadd2.u32.u32.u32.sat %0, %1, %2, %3;" : "=r"(r[0]) : "r"(x), "r"(y), "r"(z));
  asm("vadd2.s32.s32.s32.add %0.h1, %1.h10, %2.h01, %3;" : "=r"(r[1]) : "r"(x), "r"(y), "r"(z));
  asm("vsub2.s32.s32.s32 %0.h0, %1, %2, %3;" : "=r"(r[2]) : "r"(x), "r"(y), "r"(z));
  asm("vabsdiff2.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(r[3]) : "r"(x), "r"(y), "r"(z));
  asm("vadd4.u32.u32.u32.sat %0.b3210, %1.b7654, %2.b0123, %3;" : "=r"(r[4]) : "r"(x), "r"(y), "r"(z));
  asm("vmin4.s32.s32.s32 %0.b20, %1, %2, %3;" : "=r"(r[5]) : "r"(x), "r"(y), "r"(z));
  asm("vmax4.u32.u32.u32.add %0, %1.b3333, %2, %3;" : "=r"(r[6]) : "r"(x), "r"(y), "r"(z));
  asm("vavrg4.u32.u32.u32 %0, %1, %2, %3;" : "=r"(r[7]) : "r"(x), "r"(y), "r"(z));
  out[threadIdx.x] = r[0] ^ r[1] ^ r[2] ^ r[3] ^ r[4] ^ r[5] ^ r[6] ^ r[7];
}

__global__ void simd_intrinsics(const unsigned* a, const unsigned* b, unsigned* out) {
  unsigned x = a[threadIdx.x], y = b[threadIdx.x];
  unsigned r = __vadd4(x, y) ^ __vsub4(x, y) ^ __vabsdiffu4(x, y) ^ __vmaxs4(x, y) ^ __vminu2(x, y) ^
               __vavgu4(x, y) ^ __vcmpgts2(x, y) ^ __vsetleu4(x, y) ^ __vsads2(x, y) ^ __vhaddu2(x, y) ^
               __vaddss2(x, y) ^ __vsubus4(x, y) ^ __vneg4(x) ^ __vabsss2(x) ^ __vcmpeq4(x, y);
  r += __viaddmax_s32(static_cast<int>(x), static_cast<int>(y), 7) + __vimax3_u32(x, y, r) +
       [&] { bool p; return __vibmax_s32(static_cast<int>(x), static_cast<int>(y), &p) + p; }() + __vimin_s16x2_relu(x, y);
  out[threadIdx.x] = r;
}
