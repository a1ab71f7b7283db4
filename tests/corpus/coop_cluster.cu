// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90 sm_90a sm_100a
// Thread-block clusters through cooperative groups: cluster.sync (barrier.cluster),
// distributed shared memory via map_shared_rank (mapa), block_rank (%cluster_ctarank).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(4, 1, 1) cluster_histogram(const int* in, int* bins, int nbins, int n) {
  extern __shared__ int smem[];
  auto cluster = cg::this_cluster();
  auto block = cg::this_thread_block();
  unsigned rank = cluster.block_rank();
  int per_block = nbins / cluster.num_blocks();
  for (int i = block.thread_rank(); i < per_block; i += block.size()) smem[i] = 0;
  cluster.sync();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    int b = in[i] % nbins;
    int* dst = cluster.map_shared_rank(smem, b / per_block);
    atomicAdd(dst + b % per_block, 1);
  }
  cluster.sync();
  for (int i = block.thread_rank(); i < per_block; i += block.size())
    atomicAdd(&bins[rank * per_block + i], smem[i]);
}

__global__ void cluster_info(unsigned* out) {
  auto cluster = cg::this_cluster();
  dim3 idx = cluster.block_index();
  dim3 dims = cluster.dim_blocks();
  cluster.barrier_wait(cluster.barrier_arrive());
  out[blockIdx.x * blockDim.x + threadIdx.x] =
      idx.x + dims.x * 7 + cluster.thread_rank() + cluster.num_threads();
}
