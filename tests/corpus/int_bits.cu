// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void bits(const unsigned* in, unsigned* out, unsigned long long* o64) {
  unsigned v = in[threadIdx.x];
  out[threadIdx.x] = __popc(v) + __clz(v) + __brev(v) + __ffs(v) + __byte_perm(v, v >> 3, 0x4321) + __funnelshift_l(v, v, 5)
    + __umulhi(v, 3u) + __sad(v, 7u, 1u) + (unsigned)__dp4a((int)v, 0x01010101, 0);
  o64[threadIdx.x] = __popcll(v * 0x100000001ull) + __brevll(v) + __mul64hi(v, v);
}
