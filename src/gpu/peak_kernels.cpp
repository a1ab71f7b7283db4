#include "gpu/peak_kernels.h"

#include <fmt/format.h>

namespace ptxforge::gpu {

namespace {

// The grid-stride prologue shared by the two streams: %rd4 = the thread's first vector,
// %rd6 = threads in the grid, %rd7 = their stride in bytes, %rd8 = four strides in vectors.
const char* kStreamPrologue = R"(	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mov.u32 	%r4, %nctaid.x;
	mul.wide.u32 	%rd4, %r1, %r2;
	cvt.u64.u32 	%rd5, %r3;
	add.s64 	%rd4, %rd4, %rd5;
	mov.u64 	%rd21, %rd4;
	mul.wide.u32 	%rd6, %r4, %r2;
	shl.b64 	%rd7, %rd6, 4;
	shl.b64 	%rd8, %rd6, 2;
)";

// Four vectors per thread and step, all loads issued before the first use.
const char* kStreamLoads = R"(	add.s64 	%rd9, %rd4, %rd6;
	add.s64 	%rd10, %rd9, %rd6;
	add.s64 	%rd11, %rd10, %rd6;
	setp.lt.u64 	%p1, %rd4, %rd3;
	@!%p1 bra 	$DONE;
	setp.lt.u64 	%p2, %rd9, %rd3;
	setp.lt.u64 	%p3, %rd10, %rd3;
	setp.lt.u64 	%p4, %rd11, %rd3;
	shl.b64 	%rd12, %rd4, 4;
	add.s64 	%rd13, %rd2, %rd12;
	add.s64 	%rd15, %rd13, %rd7;
	add.s64 	%rd16, %rd15, %rd7;
	add.s64 	%rd17, %rd16, %rd7;
	mov.u32 	%r9, 0;
	mov.u32 	%r10, 0;
	mov.u32 	%r11, 0;
	mov.u32 	%r12, 0;
	mov.u32 	%r13, 0;
	mov.u32 	%r14, 0;
	mov.u32 	%r15, 0;
	mov.u32 	%r16, 0;
	mov.u32 	%r17, 0;
	mov.u32 	%r18, 0;
	mov.u32 	%r19, 0;
	mov.u32 	%r20, 0;
	ld.global.v4.u32 	{%r5, %r6, %r7, %r8}, [%rd13];
	@%p2 ld.global.v4.u32 	{%r9, %r10, %r11, %r12}, [%rd15];
	@%p3 ld.global.v4.u32 	{%r13, %r14, %r15, %r16}, [%rd16];
	@%p4 ld.global.v4.u32 	{%r17, %r18, %r19, %r20}, [%rd17];
)";

const char* kHeader = R"(//
// Kernels that measure the GPU's peaks (ptxforge doctor).
//
.version 7.0
.target sm_70
.address_size 64

)";

std::string copy_kernel() {
  return fmt::format(R"(.visible .entry pf_copy(
	.param .u64 pf_copy_dst,
	.param .u64 pf_copy_src,
	.param .u64 pf_copy_n
)
{{
	.reg .pred 	%p<5>;
	.reg .b32 	%r<24>;
	.reg .b64 	%rd<24>;

	ld.param.u64 	%rd1, [pf_copy_dst];
	ld.param.u64 	%rd2, [pf_copy_src];
	ld.param.u64 	%rd3, [pf_copy_n];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
{}$LOOP:
{}	add.s64 	%rd14, %rd1, %rd12;
	st.global.v4.u32 	[%rd14], {{%r5, %r6, %r7, %r8}};
	add.s64 	%rd18, %rd14, %rd7;
	@%p2 st.global.v4.u32 	[%rd18], {{%r9, %r10, %r11, %r12}};
	add.s64 	%rd19, %rd18, %rd7;
	@%p3 st.global.v4.u32 	[%rd19], {{%r13, %r14, %r15, %r16}};
	add.s64 	%rd20, %rd19, %rd7;
	@%p4 st.global.v4.u32 	[%rd20], {{%r17, %r18, %r19, %r20}};
	add.s64 	%rd4, %rd4, %rd8;
	bra.uni 	$LOOP;
$DONE:
	ret;
}}

)",
                     kStreamPrologue, kStreamLoads);
}

std::string read_kernel() {
  return fmt::format(R"(.visible .entry pf_read(
	.param .u64 pf_read_out,
	.param .u64 pf_read_src,
	.param .u64 pf_read_n
)
{{
	.reg .pred 	%p<5>;
	.reg .b32 	%r<24>;
	.reg .b64 	%rd<24>;

	ld.param.u64 	%rd1, [pf_read_out];
	ld.param.u64 	%rd2, [pf_read_src];
	ld.param.u64 	%rd3, [pf_read_n];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	mov.u32 	%r21, 0;
{}$LOOP:
{}	xor.b32 	%r5, %r5, %r6;
	xor.b32 	%r7, %r7, %r8;
	xor.b32 	%r9, %r9, %r10;
	xor.b32 	%r11, %r11, %r12;
	xor.b32 	%r13, %r13, %r14;
	xor.b32 	%r15, %r15, %r16;
	xor.b32 	%r17, %r17, %r18;
	xor.b32 	%r19, %r19, %r20;
	xor.b32 	%r5, %r5, %r7;
	xor.b32 	%r9, %r9, %r11;
	xor.b32 	%r13, %r13, %r15;
	xor.b32 	%r17, %r17, %r19;
	xor.b32 	%r5, %r5, %r9;
	xor.b32 	%r13, %r13, %r17;
	xor.b32 	%r5, %r5, %r13;
	xor.b32 	%r21, %r21, %r5;
	add.s64 	%rd4, %rd4, %rd8;
	bra.uni 	$LOOP;
$DONE:
	shl.b64 	%rd22, %rd21, 2;
	add.s64 	%rd23, %rd1, %rd22;
	st.global.u32 	[%rd23], %r21;
	ret;
}}

)",
                     kStreamPrologue, kStreamLoads);
}

std::string fma_kernel() {
  std::string body;
  for (int u = 0; u < kFmaPerIteration / 8; ++u)
    for (int c = 1; c <= 8; ++c) body += fmt::format("\tfma.rn.f32 \t%f{0}, %f{0}, %f9, %f10;\n", c);
  return fmt::format(R"(.visible .entry pf_fma(
	.param .u64 pf_fma_out,
	.param .u32 pf_fma_iters
)
{{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .f32 	%f<12>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [pf_fma_out];
	ld.param.u32 	%r1, [pf_fma_iters];
	cvta.to.global.u64 	%rd1, %rd1;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mad.lo.s32 	%r5, %r3, %r4, %r2;
	cvt.rn.f32.u32 	%f1, %r5;
	add.f32 	%f2, %f1, 0f3F800000;
	add.f32 	%f3, %f1, 0f40000000;
	add.f32 	%f4, %f1, 0f40400000;
	add.f32 	%f5, %f1, 0f40800000;
	add.f32 	%f6, %f1, 0f40A00000;
	add.f32 	%f7, %f1, 0f40C00000;
	add.f32 	%f8, %f1, 0f40E00000;
	mov.f32 	%f9, 0f3F7FFFFE;
	mov.f32 	%f10, 0f3A83126F;
$LOOP:
{}	sub.s32 	%r1, %r1, 1;
	setp.gt.s32 	%p1, %r1, 0;
	@%p1 bra 	$LOOP;
	add.f32 	%f1, %f1, %f2;
	add.f32 	%f3, %f3, %f4;
	add.f32 	%f5, %f5, %f6;
	add.f32 	%f7, %f7, %f8;
	add.f32 	%f1, %f1, %f3;
	add.f32 	%f5, %f5, %f7;
	add.f32 	%f11, %f1, %f5;
	mul.wide.u32 	%rd2, %r5, 4;
	add.s64 	%rd3, %rd1, %rd2;
	st.global.f32 	[%rd3], %f11;
	ret;
}}
)",
                     body);
}

}  // namespace

std::string peak_kernels_ptx() { return kHeader + copy_kernel() + read_kernel() + fma_kernel(); }

}  // namespace ptxforge::gpu
