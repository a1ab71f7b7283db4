// Corpus source for the front-end tests: compiled by nvcc during the test.
// Inline PTX in the shapes people write: scoped { } blocks with their own .reg and labels
// inside loops (so the block is inlined many times and every copy reuses the label names),
// the same asm twice in one function, spin-waits on ld.acquire, predicated early exits.
#include <cstdint>

__device__ __forceinline__ unsigned popc_loop(unsigned x) {
  unsigned n;
  asm("{\n\t"
      ".reg .pred p;\n\t"
      ".reg .u32 t;\n\t"
      "mov.u32 %0, 0;\n\t"
      "mov.u32 t, %1;\n"
      "LOOP:\n\t"
      "setp.eq.u32 p, t, 0;\n\t"
      "@p bra DONE;\n\t"
      "add.u32 %0, %0, 1;\n\t"
      "sub.u32 %1, t, 1;\n\t"
      "and.b32 t, t, %1;\n\t"
      "bra.uni LOOP;\n"
      "DONE:\n\t"
      "}"
      : "=&r"(n), "+r"(x));
  return n;
}

__device__ __forceinline__ void spin_until(const int* flag, int want) {
  asm volatile("{\n\t"
               ".reg .pred ready;\n\t"
               ".reg .s32 v;\n"
               "WAIT:\n\t"
               "ld.acquire.gpu.global.s32 v, [%0];\n\t"
               "setp.ge.s32 ready, v, %1;\n\t"
               "@!ready nanosleep.u32 64;\n\t"
               "@!ready bra WAIT;\n\t"
               "}" :: "l"(flag), "r"(want) : "memory");
}

__device__ __forceinline__ void signal(int* flag) {
  asm volatile("st.release.gpu.global.s32 [%0], 1;" :: "l"(flag) : "memory");
}

__global__ void labels_in_loops(const unsigned* in, unsigned* out, int n) {
  unsigned acc = 0;
  #pragma unroll 4
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += popc_loop(in[i]);
  acc += popc_loop(acc);
  acc += popc_loop(acc ^ 0x5555u);
  out[threadIdx.x] = acc;
}

__global__ void producer_consumer(int* flags, float* data, int stages) {
  for (int s = 0; s < stages; ++s) {
    if (blockIdx.x == 0) {
      if (threadIdx.x == 0) {
        data[s] = s * 2.0f;
        __threadfence();
        signal(flags + s);
      }
    } else {
      if (threadIdx.x == 0) spin_until(flags + s, 1);
      __syncthreads();
      data[64 + blockIdx.x * stages + s] = data[s] + 1.0f;
    }
  }
}

__device__ __forceinline__ int clamp_add(int a, int b, int lo, int hi) {
  int r;
  asm("{\n\t"
      ".reg .pred lo_p, hi_p;\n\t"
      "add.s32 %0, %1, %2;\n\t"
      "setp.lt.s32 lo_p, %0, %3;\n\t"
      "setp.gt.s32 hi_p, %0, %4;\n\t"
      "@lo_p mov.b32 %0, %3;\n\t"
      "@hi_p mov.b32 %0, %4;\n\t"
      "}" : "=&r"(r) : "r"(a), "r"(b), "r"(lo), "r"(hi));
  return r;
}

__global__ void repeated_asm(const int* a, int* out) {
  int x = a[threadIdx.x];
  int y = clamp_add(x, 5, -100, 100);
  int z = clamp_add(y, x, 0, 50);
  if (x > 3) z = clamp_add(z, z, -7, 7);
  uint32_t lane, warp, smid;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm("mov.u32 %0, %%warpid;" : "=r"(warp));
  asm("mov.u32 %0, %%smid;" : "=r"(smid));
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %0, 0; @p bra.uni SKIP; st.global.u32 [%1], %2; SKIP: }"
               :: "r"(lane), "l"(out + 1024), "r"(warp + smid) : "memory");
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %0, 1; @p bra.uni SKIP; st.global.u32 [%1], %2; SKIP: }"
               :: "r"(lane), "l"(out + 1025), "r"(warp) : "memory");
  out[threadIdx.x] = z;
}

__global__ void predicated_exit(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  asm volatile("{ .reg .pred oob; setp.ge.s32 oob, %0, %1; @oob exit; }" :: "r"(i), "r"(n));
  float v = in[i], r;
  asm("{\n\t.reg .f32 t;\n\tmul.rn.f32 t, %1, %1;\n\tfma.rn.sat.f32 %0, t, 0f3F000000, %1;\n\t}" : "=f"(r) : "f"(v));
  out[i] = r;
}
