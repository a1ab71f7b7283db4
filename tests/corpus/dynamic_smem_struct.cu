// Corpus source for the front-end tests: compiled by nvcc during the test.
struct Particle { float x, y, z; int id; double mass; };
__global__ void move(Particle* p, int n, float dt) {
  extern __shared__ Particle cache[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { cache[threadIdx.x] = p[i]; cache[threadIdx.x].x += dt * (float)cache[threadIdx.x].mass; p[i] = cache[threadIdx.x]; }
}
