// Corpus source for the front-end tests: compiled by nvcc during the test.
#include <cstdio>
__global__ void hello(int x, float y) { if (threadIdx.x == 0) printf("block %d x=%d y=%f\n", blockIdx.x, x, y); }
