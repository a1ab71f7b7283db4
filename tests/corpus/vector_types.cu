// Corpus source for the front-end tests: compiled by nvcc during the test.
__global__ void vec4(const float4* a, float4* b, const int2* c, double2* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float4 v = a[i]; v.x += v.w; v.y *= v.z; b[i] = v; int2 w = c[i]; d[i] = make_double2(w.x, w.y); }
}
