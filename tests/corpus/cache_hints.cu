// Corpus source for the front-end tests: compiled by nvcc during the test.
// Cache-control in its many spellings: the __ldcs/__ldlu/__ldcv/__ldca/__ldcg and __stwt/
// __stcs/__stcg intrinsics (ld/st with .cs/.lu/.cv/.ca/.cg/.wt), ld and st with
// .L2::cache_hint and createpolicy, eviction-priority qualifiers, prefetch and
// prefetchu, __nanosleep, %globaltimer, clock64, discard and applypriority.
#include <cstdint>

__global__ void intrinsic_hints(const float4* in, float4* out, const int* iin, int* iout, const double* din, double* dout) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 a = __ldcs(in + i);
  float4 b = __ldlu(in + i + 1);
  float4 c = __ldcv(in + i + 2);
  float4 d = __ldca(in + i + 3);
  int e = __ldcg(iin + i) + __ldg(iin + i + 1) + __ldcs(iin + i + 2);
  double f = __ldlu(din + i) + __ldcv(din + i + 1);
  __stwt(out + i, make_float4(a.x + b.x, a.y + c.y, d.z, d.w));
  __stcs(iout + i, e);
  __stcg(dout + i, f);
  __stwb(iout + i + 1024, e * 2);
  __stwt(dout + i + 1024, f * 2.0);
}

__global__ void policy_hints(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint64_t keep, stream, frac;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(keep));
  asm volatile("createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %0, 0.5;" : "=l"(frac));
  asm volatile("createpolicy.range.L2::evict_normal.L2::evict_first.b64 %0, [%1], %2, %3;"
               : "=l"(stream) : "l"(in), "r"(1024u), "r"(4096u));
  float v, w;
  asm volatile("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(in + i), "l"(keep));
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(w) : "l"(in + i), "l"(frac));
  float4 q;
  asm volatile("ld.global.L1::evict_last.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w) : "l"(in + (i & ~3)));
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" :: "l"(out + i), "f"(v + w + q.x), "l"(stream));
  asm volatile("st.global.L1::no_allocate.f32 [%0], %1;" :: "l"(out + n + i), "f"(q.y));
  asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(in + i + 4096));
  asm volatile("prefetch.global.L1 [%0];" :: "l"(in + i + 256));
  asm volatile("prefetch.L2 [%0];" :: "l"(in + i + 512));
  asm volatile("prefetchu.L1 [%0];" :: "l"(in + i + 1024));
  asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(out) : "memory");
  asm volatile("discard.global.L2 [%0], 128;" :: "l"(out + 2 * n) : "memory");
}

__global__ void timers(unsigned long long* out, int spin_ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64();
  unsigned c32 = clock();
  __nanosleep(spin_ns);
  __nanosleep(100);
  long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  unsigned lo;
  asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(lo));
  out[threadIdx.x] = (t1 - t0) + (c1 - c0) + c32 + lo;
}
