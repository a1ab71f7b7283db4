// Corpus source for the front-end tests: compiled by nvcc during the test.
// CUB's block-wide collectives in their several algorithms (raking scans, warp scans,
// radix sort, histograms, loads and stores with transposes): template-heavy code whose
// PTX looks nothing like hand-written kernels (deep inlining, shared-memory bank padding).
#include <cub/cub.cuh>

template <cub::BlockScanAlgorithm Algo>
__global__ void scan_kernel(const int* in, int* incl, int* excl) {
  using Scan = cub::BlockScan<int, 128, Algo>;
  __shared__ typename Scan::TempStorage tmp;
  int i = blockIdx.x * 128 + threadIdx.x;
  int v = in[i], a, b, total;
  Scan(tmp).InclusiveScan(v, a, cuda::maximum<>{});
  __syncthreads();
  Scan(tmp).ExclusiveSum(v, b, total);
  incl[i] = a;
  excl[i] = b + (threadIdx.x == 0 ? total : 0);
}
template __global__ void scan_kernel<cub::BLOCK_SCAN_RAKING>(const int*, int*, int*);
template __global__ void scan_kernel<cub::BLOCK_SCAN_RAKING_MEMOIZE>(const int*, int*, int*);
template __global__ void scan_kernel<cub::BLOCK_SCAN_WARP_SCANS>(const int*, int*, int*);

__global__ void scan_items(const float* in, float* out) {
  using Load = cub::BlockLoad<float, 64, 4, cub::BLOCK_LOAD_TRANSPOSE>;
  using Scan = cub::BlockScan<float, 64>;
  using Store = cub::BlockStore<float, 64, 4, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    typename Store::TempStorage store;
  } tmp;
  float items[4];
  int base = blockIdx.x * 256;
  Load(tmp.load).Load(in + base, items);
  __syncthreads();
  Scan(tmp.scan).ExclusiveScan(items, items, 0.0f, cuda::std::plus<>{});
  __syncthreads();
  Store(tmp.store).Store(out + base, items);
}

__global__ void radix_sort_pairs(unsigned* keys, int* vals, int n) {
  using Sort = cub::BlockRadixSort<unsigned, 128, 4, int>;
  using LoadK = cub::BlockLoad<unsigned, 128, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using LoadV = cub::BlockLoad<int, 128, 4, cub::BLOCK_LOAD_VECTORIZE>;
  __shared__ union {
    typename Sort::TempStorage sort;
    typename LoadK::TempStorage lk;
    typename LoadV::TempStorage lv;
  } tmp;
  unsigned k[4];
  int v[4];
  int base = blockIdx.x * 512;
  LoadK(tmp.lk).Load(keys + base, k, n - base, ~0u);
  __syncthreads();
  LoadV(tmp.lv).Load(vals + base, v);
  __syncthreads();
  Sort(tmp.sort).SortDescendingBlockedToStriped(k, v);
  cub::StoreDirectStriped<128>(threadIdx.x, keys + base, k);
  cub::StoreDirectStriped<128>(threadIdx.x, vals + base, v);
}

__global__ void radix_sort_floats(float* data) {
  using Sort = cub::BlockRadixSort<float, 256, 2>;
  __shared__ typename Sort::TempStorage tmp;
  float k[2];
  cub::LoadDirectBlocked(threadIdx.x, data + blockIdx.x * 512, k);
  Sort(tmp).Sort(k, 4, 28);
  cub::StoreDirectBlocked(threadIdx.x, data + blockIdx.x * 512, k);
}

template <cub::BlockHistogramAlgorithm Algo>
__global__ void histogram(const unsigned char* in, unsigned* bins) {
  using Hist = cub::BlockHistogram<unsigned char, 128, 8, 256, Algo>;
  __shared__ typename Hist::TempStorage tmp;
  __shared__ unsigned smem_hist[256];
  unsigned char items[8];
  cub::LoadDirectStriped<128>(threadIdx.x, in + blockIdx.x * 1024, items);
  Hist(tmp).Histogram(items, smem_hist);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += 128) atomicAdd(&bins[b], smem_hist[b]);
}
template __global__ void histogram<cub::BLOCK_HISTO_SORT>(const unsigned char*, unsigned*);
template __global__ void histogram<cub::BLOCK_HISTO_ATOMIC>(const unsigned char*, unsigned*);

__global__ void warp_scans(const long long* in, long long* out, double* dout) {
  using WScan = cub::WarpScan<long long>;
  using WScan16 = cub::WarpScan<double, 16>;
  __shared__ typename WScan::TempStorage t32[4];
  __shared__ typename WScan16::TempStorage t16[8];
  int warp = threadIdx.x / 32, half = threadIdx.x / 16;
  long long v = in[blockIdx.x * 128 + threadIdx.x], incl, excl;
  WScan(t32[warp]).Scan(v, incl, excl, cuda::std::plus<>{});
  out[blockIdx.x * 128 + threadIdx.x] = incl * 3 + excl;
  double d = static_cast<double>(v), agg;
  WScan16(t16[half]).ExclusiveSum(d, d, agg);
  dout[blockIdx.x * 128 + threadIdx.x] = d + WScan16(t16[half]).Broadcast(agg, 0);
}

__global__ void block_discontinuity(const int* in, int* heads) {
  using Disc = cub::BlockDiscontinuity<int, 128>;
  using Exch = cub::BlockExchange<int, 128, 2>;
  __shared__ typename Disc::TempStorage dt;
  __shared__ typename Exch::TempStorage et;
  int items[2], flags[2];
  cub::LoadDirectBlocked(threadIdx.x, in + blockIdx.x * 256, items);
  Disc(dt).FlagHeads(flags, items, cuda::std::not_equal_to<>{});
  Exch(et).BlockedToStriped(flags);
  cub::StoreDirectStriped<128>(threadIdx.x, heads + blockIdx.x * 256, flags);
}
