// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void redux(const unsigned* in, unsigned* out) {
  unsigned v = in[threadIdx.x];
  out[threadIdx.x] = __reduce_add_sync(~0u, v) + __reduce_max_sync(~0u, v) + __reduce_and_sync(~0u, v);
}
