// Corpus source for the front-end tests: compiled by nvcc during the test.
// Texture and surface objects: tex.1d/2d/3d/a2d and tld4 gathers, level and gradient fetches
// on cudaTextureObject_t, surface loads and stores with .trap/.clamp/.zero boundary modes,
// txq/suq queries through inline PTX; instructions whose operands are handles and
// coordinate vectors rather than addresses.
#include <cstdint>

__global__ void sample(cudaTextureObject_t t1, cudaTextureObject_t t2, cudaTextureObject_t t3, cudaTextureObject_t ta,
                       float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float u = (i + 0.5f) / n;
  float4 a = tex1Dfetch<float4>(t1, i);
  float b = tex1D<float>(t1, u);
  float4 c = tex2D<float4>(t2, u, 1.0f - u);
  float4 d = tex2DLod<float4>(t2, u, u, 2.0f);
  float4 e = tex2DGrad<float4>(t2, u, u, make_float2(0.01f, 0.0f), make_float2(0.0f, 0.01f));
  float4 f = tex2Dgather<float4>(t2, u, u, 1);
  float g = tex3D<float>(t3, u, u, u);
  float h = tex2DLayered<float>(ta, u, u, i & 3);
  int4 k = tex1Dfetch<int4>(t1, i + 1);
  out[i] = make_float4(a.x + b + c.y + d.z, e.w + f.x + g, h + k.x, static_cast<float>(k.y));
}

__global__ void surfaces(cudaSurfaceObject_t s2, cudaSurfaceObject_t s1, cudaSurfaceObject_t s3, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float4 v = surf2Dread<float4>(s2, x * 16, y, cudaBoundaryModeClamp);
  uchar4 c = surf1Dread<uchar4>(s1, x * 4, cudaBoundaryModeZero);
  float z = surf3Dread<float>(s3, x * 4, y, 1, cudaBoundaryModeTrap);
  surf2Dwrite(make_float4(v.w, v.z, v.y, v.x + z), s2, x * 16, y);
  surf1Dwrite(make_uchar4(c.w, c.z, c.y, c.x), s1, x * 4, cudaBoundaryModeClamp);
  surf3Dwrite(z * 2.0f, s3, x * 4, y, 2, cudaBoundaryModeZero);
}

__global__ void queries(cudaTextureObject_t t, cudaSurfaceObject_t s, int* out) {
  int width, height, levels, swidth, fmt;
  asm("txq.width.b32 %0, [%1];" : "=r"(width) : "l"(t));
  asm("txq.height.b32 %0, [%1];" : "=r"(height) : "l"(t));
  asm("txq.num_mipmap_levels.b32 %0, [%1];" : "=r"(levels) : "l"(t));
  asm("suq.width.b32 %0, [%1];" : "=r"(swidth) : "l"(s));
  asm("suq.channel_data_type.b32 %0, [%1];" : "=r"(fmt) : "l"(s));
  float r, g, b, a;
  asm("tld4.r.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];" : "=f"(r), "=f"(g), "=f"(b), "=f"(a) : "l"(t), "f"(0.5f), "f"(0.5f));
  out[threadIdx.x] = width + height + levels + swidth + fmt + static_cast<int>(r + g + b + a);
}
