// Corpus source for the front-end tests: compiled by nvcc during the test.
// Thrust on device_vector: host calls instantiate the transform, reduce, scan and
// sort-by-key kernels (CUB underneath, plus Thrust's own fill and uninitialized-copy
// kernels), so the module is what an application that only uses Thrust ships.
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

struct saxpy {
  float a;
  __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};

float thrust_pipeline(int n) {
  thrust::device_vector<float> x(n, 1.0f), y(n, 2.0f), z(n);
  thrust::transform(x.begin(), x.end(), y.begin(), z.begin(), saxpy{3.0f});
  float total = thrust::reduce(z.begin(), z.end(), 0.0f);
  thrust::device_vector<int> keys(n, 7);
  thrust::inclusive_scan(keys.begin(), keys.end(), keys.begin());
  thrust::sort_by_key(keys.begin(), keys.end(), z.begin());
  return total + z[0];
}
