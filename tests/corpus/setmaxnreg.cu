// Corpus source for the front-end tests: compiled by nvcc during the test.
// corpus-archs: sm_90a
__global__ void __maxnreg__(168) producer_consumer(float* out) {
  if (threadIdx.x < 128) { asm volatile("setmaxnreg.dec.sync.aligned.u32 40;"); out[threadIdx.x] = 1; }
  else { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;"); out[threadIdx.x] = 2; }
}
