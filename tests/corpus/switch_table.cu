// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void sw(const int* op, float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = v[i];
  switch (op[i]) {
    case 0: x = x + 1; break; case 1: x = x * 2; break; case 2: x = x - 3; break; case 3: x = x / 4; break;
    case 4: x = -x; break; case 5: x = x * x; break; case 6: x = 0; break; case 7: x = 1 / x; break;
    default: x = 42; }
  v[i] = x;
}
