// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void local_sort(const int* in, int* out, int k) {
  int a[16];
  for (int j = 0; j < 16; ++j) a[j] = in[threadIdx.x * 16 + j];
  for (int j = 0; j < 16; ++j) for (int l = j + 1; l < 16; ++l) if (a[l] < a[j]) { int t = a[l]; a[l] = a[j]; a[j] = t; }
  out[threadIdx.x] = a[k & 15];
}
