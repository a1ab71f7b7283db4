// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90 sm_90a sm_100a
// Hopper's stmatrix (plain and .trans, .x1/.x2/.x4) round-tripping fragments through shared
// memory, and fp8 mma.sync (sm_89+).
#include <cstdint>

__global__ void stmatrix_roundtrip(const uint32_t* in, uint32_t* out) {
  __shared__ alignas(16) uint16_t tile[4 * 64];
  uint32_t r0 = in[threadIdx.x], r1 = in[32 + threadIdx.x], r2 = in[64 + threadIdx.x], r3 = in[96 + threadIdx.x];
  uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(&tile[(threadIdx.x % 32) * 8]));
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3));
  __syncwarp();
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  __syncwarp();
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 [%0], {%1, %2};" :: "r"(addr), "r"(r0), "r"(r1));
  asm volatile("stmatrix.sync.aligned.x1.m8n8.shared.b16 [%0], {%1};" :: "r"(addr + 512), "r"(r2));
  __syncwarp();
  out[threadIdx.x] = tile[threadIdx.x] + r3;
}

__global__ void fp8_mma(const uint32_t* in, float* out) {
  uint32_t a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = in[i * 32 + threadIdx.x];
  for (int i = 0; i < 2; ++i) b[i] = in[128 + i * 32 + threadIdx.x];
  float c[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = c[i];
}
