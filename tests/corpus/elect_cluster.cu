// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90a
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) clus(int* out) {
  __shared__ int s;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) s = cluster.block_rank();
  cluster.sync();
  int* peer = cluster.map_shared_rank(&s, (cluster.block_rank() + 1) % 2);
  unsigned is_leader;
  asm volatile("{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 %0, 1, 0, p; }" : "=r"(is_leader));
  cluster.sync();
  if (is_leader) out[blockIdx.x * 32 + threadIdx.x / 32] = *peer;
}
