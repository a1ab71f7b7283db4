// Corpus source for the front-end tests: compiled by nvcc during the test.
// Cooperative groups: tiled partitions (static and dynamic), cg::reduce and cg::inclusive_scan,
// coalesced and labeled groups (match.any, activemask), and grid-wide sync in a cooperative
// kernel (the grid barrier's atomics and spin on a global counter).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

__global__ void tile_reduce_scan(const int* in, int* sums, int* scans) {
  auto block = cg::this_thread_block();
  auto tile32 = cg::tiled_partition<32>(block);
  auto tile8 = cg::tiled_partition<8>(tile32);
  int v = in[block.group_index().x * block.size() + block.thread_rank()];
  int s = cg::reduce(tile32, v, cg::plus<int>());
  int m = cg::reduce(tile8, v, cg::greater<int>());
  int x = cg::reduce(tile8, static_cast<unsigned>(v), cg::bit_xor<unsigned>());
  int sc = cg::inclusive_scan(tile32, v);
  int ex = cg::exclusive_scan(tile8, v, cg::bit_or<int>());
  if (tile32.thread_rank() == 0) sums[block.thread_rank() / 32] = s + m + x;
  scans[block.thread_rank()] = sc + ex + tile32.shfl_down(v, 3) + tile8.shfl_xor(v, 1);
  if (tile32.any(v > 5) && !tile32.all(v > 0)) scans[0] = tile32.ballot(v & 1);
  block.sync();
  auto dyn = cg::tiled_partition(block, 16);
  dyn.sync();
  sums[64 + block.thread_rank()] = dyn.thread_rank() + dyn.size();
}

__global__ void coalesced(const int* in, int* out, float* fout) {
  int v = in[threadIdx.x];
  if (v & 1) {
    auto active = cg::coalesced_threads();
    int rank = active.thread_rank();
    int total = cg::reduce(active, v, cg::plus<int>());
    float f = cg::reduce(active, static_cast<float>(v), cg::less<float>());
    int sc = cg::inclusive_scan(active, v);
    out[threadIdx.x] = rank + total + active.shfl(v, 0) + sc;
    fout[threadIdx.x] = f;
  }
}

__global__ void labeled(const int* keys, int* counts) {
  auto block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  int k = keys[block.thread_rank()];
  auto same = cg::labeled_partition(warp, k);
  if (same.thread_rank() == 0) atomicAdd(&counts[k & 255], static_cast<int>(same.num_threads()));
  auto two = cg::binary_partition(warp, k > 10);
  counts[256 + block.thread_rank()] = cg::reduce(two, k, cg::plus<int>());
}

__global__ void grid_stride_two_phase(float* data, float* partial, int n) {
  auto grid = cg::this_grid();
  auto block = cg::this_thread_block();
  __shared__ float red[32];
  float s = 0.0f;
  for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size()) s += data[i];
  auto warp = cg::tiled_partition<32>(block);
  s = cg::reduce(warp, s, cg::plus<float>());
  if (warp.thread_rank() == 0) red[warp.meta_group_rank()] = s;
  block.sync();
  if (block.thread_rank() == 0) {
    float t = 0.0f;
    for (unsigned w = 0; w < warp.meta_group_size(); ++w) t += red[w];
    partial[grid.block_rank()] = t;
  }
  grid.sync();
  if (grid.thread_rank() == 0) {
    float t = 0.0f;
    for (unsigned b = 0; b < grid.num_blocks(); ++b) t += partial[b];
    data[0] = t;
  }
}
