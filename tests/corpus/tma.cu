// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90a
#include <cstdint>
__global__ void tma_load(const __grid_constant__ uint64_t desc_storage[16], float* out) {
  __shared__ __align__(128) float tile[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar), t = (unsigned)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;" :: "r"(b));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(t), "l"(desc_storage), "r"(0), "r"(0), "r"(b) : "memory");
  }
  __syncthreads();
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }" :: "r"(b));
  out[threadIdx.x] = tile[threadIdx.x];
}
