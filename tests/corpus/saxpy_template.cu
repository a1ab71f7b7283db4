// Corpus source for the front-end tests: compiled by nvcc during the test.
template <typename T> __global__ void axpy(T a, const T* x, T* y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}
template __global__ void axpy<float>(float, const float*, float*, long);
template __global__ void axpy<double>(double, const double*, double*, long);
template __global__ void axpy<int>(int, const int*, int*, long);
