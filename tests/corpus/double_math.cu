// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void dmath(const double* x, double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = sin(x[i]) * exp(x[i]) + sqrt(fabs(x[i])) / (1.0 + x[i] * x[i]);
}
