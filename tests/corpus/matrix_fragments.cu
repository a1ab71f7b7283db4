// Corpus source for the front-end tests: compiled by nvcc during the test.
// Warp-level matrix data movement and multiply in their less common variants: ldmatrix with
// .trans and .x1/.x2, movmatrix, mma.sync for tf32, bf16, int8, int4, binary and fp64, and
// the WMMA API (wmma.load/mma/store) on several fragment shapes.
#include <cstdint>
#include <mma.h>
using namespace nvcuda;

__global__ void ldmatrix_forms(const uint16_t* g, uint32_t* out) {
  __shared__ alignas(16) uint16_t tile[32 * 8 * 4];
  for (int i = threadIdx.x; i < 32 * 8 * 4; i += 32) tile[i] = g[i];
  __syncwarp();
  uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(&tile[(threadIdx.x % 16) * 8]));
  uint32_t a, b0, b1, t0, t1, t2, t3, m;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(a) : "r"(addr));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(b0), "=r"(b1) : "r"(addr));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(t0), "=r"(t1), "=r"(t2), "=r"(t3) : "r"(addr));
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(m) : "r"(a));
  out[threadIdx.x] = a ^ b0 ^ b1 ^ t0 ^ t1 ^ t2 ^ t3 ^ m;
}

__global__ void mma_variants(const uint32_t* in, float* f, double* d, int* s) {
  uint32_t a0 = in[threadIdx.x], a1 = in[32 + threadIdx.x], a2 = in[64 + threadIdx.x], a3 = in[96 + threadIdx.x];
  uint32_t b0 = in[128 + threadIdx.x], b1 = in[160 + threadIdx.x];
  float c[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a0), "r"(a1), "r"(b0));
  int ic[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(ic[0]), "+r"(ic[1]), "+r"(ic[2]), "+r"(ic[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(ic[0]), "+r"(ic[1]), "+r"(ic[2]), "+r"(ic[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(ic[0]), "+r"(ic[1]), "+r"(ic[2]), "+r"(ic[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  uint32_t h[2] = {0, 0};
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
               : "+r"(h[0]), "+r"(h[1]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  double dd[2] = {0, 0};
  double da = __int_as_float(a0), db = __int_as_float(b0);
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+d"(dd[0]), "+d"(dd[1]) : "d"(da), "d"(db));
  for (int i = 0; i < 4; ++i) f[threadIdx.x * 4 + i] = c[i];
  for (int i = 0; i < 4; ++i) s[threadIdx.x * 4 + i] = ic[i] + h[i % 2];
  d[threadIdx.x * 2] = dd[0];
  d[threadIdx.x * 2 + 1] = dd[1];
}

__global__ void wmma_shapes(const half* a, const half* b, float* c, const __nv_bfloat16* ab, const double* ad, double* cd,
                            const signed char* ai, int* ci) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::fragment<wmma::matrix_a, 32, 8, 16, half, wmma::col_major> fa2;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, half, wmma::row_major> fb2;
  wmma::fragment<wmma::accumulator, 32, 8, 16, float> fc2;
  wmma::load_matrix_sync(fa2, a, 32);
  wmma::load_matrix_sync(fb2, b, 8);
  wmma::load_matrix_sync(fc2, c + 256, 8, wmma::mem_row_major);
  wmma::mma_sync(fc2, fa2, fb2, fc2);
  wmma::store_matrix_sync(c + 256, fc2, 8, wmma::mem_col_major);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fab;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fbb;
  wmma::load_matrix_sync(fab, ab, 16);
  wmma::load_matrix_sync(fbb, ab + 256, 16);
  wmma::mma_sync(fc, fab, fbb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fad;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fbd;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> fcd;
  wmma::load_matrix_sync(fad, ad, 4);
  wmma::load_matrix_sync(fbd, ad + 32, 4);
  wmma::fill_fragment(fcd, 1.0);
  wmma::mma_sync(fcd, fad, fbd, fcd);
  wmma::store_matrix_sync(cd, fcd, 8, wmma::mem_row_major);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fai;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fbi;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> fci;
  wmma::load_matrix_sync(fai, ai, 16);
  wmma::load_matrix_sync(fbi, ai + 256, 16);
  wmma::fill_fragment(fci, 0);
  wmma::mma_sync(fci, fai, fbi, fci, true);
  wmma::store_matrix_sync(ci, fci, 16, wmma::mem_row_major);
}
