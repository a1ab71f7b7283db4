// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90a
#include <cstdint>
__global__ void __launch_bounds__(128) wg(float* out, uint64_t da, uint64_t db) {
  float d[4] = {0, 0, 0, 0};
  asm volatile("wgmma.fence.sync.aligned;");
  asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, 1, 1, 1, 0, 0;"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db));
  asm volatile("wgmma.commit_group.sync.aligned;");
  asm volatile("wgmma.wait_group.sync.aligned 0;");
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = d[i];
}
