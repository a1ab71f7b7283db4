#include "gpu/peak_kernels.h"

#include <cstdint>

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

// ---- tensor-core loops ----------------------------------------------------------------------
//
// mma.sync: each warp keeps kMmaChains accumulators (4 f32 registers each) with no dependence
// between them, so the tensor pipe never waits on a result; kMmaUnroll rounds per iteration.
// wgmma: each warpgroup issues kWgmmaPerGroup m64n256 products into one 128-register
// accumulator, commits them as a group and waits for all but the last group, as a GEMM's
// main loop does; A and B come from a zeroed shared tile through one descriptor (the loop
// measures the tensor pipe, not the layout). Operands are constants of few set bits, so the
// loops draw little power and reach the highest clock the part allows: a ceiling, not an
// average.
constexpr int kMmaChains = 8, kMmaUnroll = 4;
constexpr int kWgmmaPerGroup = 4;
constexpr int kWgmmaTileBytes = 16384;
// The descriptor's fixed fields (no swizzle): leading byte offset 128 (bits 16-29, in 16-byte
// units) and stride byte offset 256 (bits 32-45): a 256-row operand of 32 bytes of k spans
// 8 KiB + 256 of the tile, inside it.
constexpr uint64_t kWgmmaDescriptorOffsets = (uint64_t{128 >> 4} << 16) | (uint64_t{256 >> 4} << 32);

struct TypeFacts {
  TensorType type;
  const char* name;     // in the PTX instruction
  int mma_k, wgmma_k;   // k of the dense shapes
  uint32_t operand;     // one 32-bit register of A or B: small values, so nothing overflows
};
constexpr TypeFacts kTypeFacts[] = {
    {TensorType::f16, "f16", 16, 16, 0x14191419u},   // 0.001 twice
    {TensorType::bf16, "bf16", 16, 16, 0x3A833A83u},  // 0.001 twice
    {TensorType::tf32, "tf32", 8, 8, 0x3A83126Fu},    // 0.001
    {TensorType::e4m3, "e4m3", 32, 32, 0x18181818u},  // 0.0625 four times
};

const TypeFacts& facts(TensorType t) {
  for (auto& f : kTypeFacts)
    if (f.type == t) return f;
  return kTypeFacts[0];
}

std::string entry_name(TensorLoop loop) {
  return fmt::format("pf_{}_{}", loop.op == TensorOp::wgmma ? "wgmma" : "mma", to_string(loop.type));
}

std::string module_header(TensorLoop loop) {
  // mma.sync f16/bf16/tf32: PTX 7.0, sm_80; e4m3 mma.sync: PTX 8.4, sm_89; wgmma: PTX 8.0, sm_90a.
  const char* version = loop.op == TensorOp::wgmma ? "8.0" : loop.type == TensorType::e4m3 ? "8.4" : "7.0";
  const char* target = loop.op == TensorOp::wgmma ? "sm_90a" : loop.type == TensorType::e4m3 ? "sm_89" : "sm_80";
  return fmt::format("//\n// A tensor-core loop that measures the GPU's {} {} peak (ptxforge doctor).\n//\n"
                     ".version {}\n.target {}\n.address_size 64\n\n",
                     to_string(loop.op), to_string(loop.type), version, target);
}

// The entry's opening: out and iters loaded, %r5 = the thread's index in the grid.
std::string entry_prologue(const std::string& name) {
  return fmt::format(R"(	ld.param.u64 	%rd1, [{0}_out];
	ld.param.u32 	%r1, [{0}_iters];
	cvta.to.global.u64 	%rd1, %rd1;
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mad.lo.s32 	%r5, %r3, %r4, %r2;
)",
                     name);
}

// The loop's counter and the store of %f<sum> that keeps the accumulators alive.
const char* kLoopTail = R"(	sub.s32 	%r1, %r1, 1;
	setp.gt.s32 	%p1, %r1, 0;
	@%p1 bra 	$LOOP;
)";

std::string store_sum(int sum) {
  return fmt::format(R"(	mul.wide.u32 	%rd2, %r5, 4;
	add.s64 	%rd3, %rd1, %rd2;
	st.global.f32 	[%rd3], %f{};
	ret;
}}
)",
                     sum);
}

std::string mma_loop(TensorLoop loop, const TensorLoopShape& shape) {
  const TypeFacts& f = facts(loop.type);
  const std::string name = entry_name(loop);
  std::string body;
  for (int u = 0; u < kMmaUnroll; ++u)
    for (int c = 0; c < kMmaChains; ++c) {
      int d = 4 * c;
      body += fmt::format("\t{} \t{{%f{}, %f{}, %f{}, %f{}}}, {{%r10, %r11, %r12, %r13}}, {{%r14, %r15}}, {{%f{}, %f{}, %f{}, %f{}}};\n",
                          shape.instruction, d, d + 1, d + 2, d + 3, d, d + 1, d + 2, d + 3);
    }
  std::string init;
  for (int r = 10; r <= 15; ++r) init += fmt::format("\tmov.b32 \t%r{}, {};\n", r, f.operand);
  for (int a = 0; a < 4 * kMmaChains; ++a) init += fmt::format("\tmov.f32 \t%f{}, 0f00000000;\n", a);
  const int sum = 4 * kMmaChains;
  std::string fold = fmt::format("\tmov.f32 \t%f{}, 0f00000000;\n", sum);
  for (int a = 0; a < 4 * kMmaChains; ++a) fold += fmt::format("\tadd.f32 \t%f{0}, %f{0}, %f{1};\n", sum, a);
  return module_header(loop) + fmt::format(R"(.visible .entry {0}(
	.param .u64 {0}_out,
	.param .u32 {0}_iters
)
{{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<16>;
	.reg .f32 	%f<{1}>;
	.reg .b64 	%rd<4>;

)",
                                           name, sum + 1) +
         entry_prologue(name) + init + "$LOOP:\n" + body + kLoopTail + fold + store_sum(sum);
}

std::string wgmma_loop(TensorLoop loop, const TensorLoopShape& shape) {
  const std::string name = entry_name(loop);
  std::string acc;
  for (int a = 0; a < 128; ++a) acc += fmt::format("{}%f{}", a ? ", " : "", a);
  // f16 and bf16 take the two transpose immediates; tf32 and e4m3 do not.
  const bool trans = loop.type == TensorType::f16 || loop.type == TensorType::bf16;
  std::string body = "\twgmma.fence.sync.aligned;\n";
  for (int i = 0; i < kWgmmaPerGroup; ++i)
    body += fmt::format("\t{} \t{{{}}}, %rd4, %rd4, %p2, 1, 1{};\n", shape.instruction, acc, trans ? ", 0, 0" : "");
  body += "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 1;\n";
  std::string init;
  for (int a = 0; a < 128; ++a) init += fmt::format("\tmov.f32 \t%f{}, 0f00000000;\n", a);
  std::string fold = "\twgmma.wait_group.sync.aligned 0;\n\tmov.f32 \t%f128, 0f00000000;\n";
  for (int a = 0; a < 128; ++a) fold += fmt::format("\tadd.f32 \t%f128, %f128, %f{};\n", a);
  return module_header(loop) + fmt::format(R"(.shared .align 1024 .b8 {0}_tile[{1}];

.visible .entry {0}(
	.param .u64 {0}_out,
	.param .u32 {0}_iters
)
.maxntid {2}, 1, 1
{{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<12>;
	.reg .f32 	%f<129>;
	.reg .b64 	%rd<6>;

)",
                                           name, kWgmmaTileBytes, shape.threads) +
         entry_prologue(name) +
         fmt::format(R"(	mov.u32 	%r6, {0}_tile;
	shl.b32 	%r7, %r2, 4;
	add.s32 	%r8, %r6, %r7;
	mov.b32 	%r9, 0;
	st.shared.v4.b32 	[%r8], {{%r9, %r9, %r9, %r9}};
	st.shared.v4.b32 	[%r8+4096], {{%r9, %r9, %r9, %r9}};
	st.shared.v4.b32 	[%r8+8192], {{%r9, %r9, %r9, %r9}};
	st.shared.v4.b32 	[%r8+12288], {{%r9, %r9, %r9, %r9}};
	fence.proxy.async.shared::cta;
	bar.sync 	0;
	setp.eq.u32 	%p2, %r9, 0;
	cvt.u64.u32 	%rd4, %r6;
	shr.u64 	%rd4, %rd4, 4;
	and.b64 	%rd4, %rd4, 16383;
	or.b64 	%rd4, %rd4, {1};
)",
                     name, kWgmmaDescriptorOffsets) +
         init + "$LOOP:\n" + body + kLoopTail + fold + store_sum(128);
}

}  // namespace

std::string peak_kernels_ptx() { return kHeader + copy_kernel() + read_kernel() + fma_kernel(); }

namespace {
constexpr std::pair<TensorOp, std::string_view> kOpNames[] = {{TensorOp::mma_sync, "mma.sync"}, {TensorOp::wgmma, "wgmma"}};
constexpr std::pair<TensorType, std::string_view> kTypeNames[] = {
    {TensorType::f16, "f16"}, {TensorType::bf16, "bf16"}, {TensorType::tf32, "tf32"}, {TensorType::e4m3, "e4m3"}};
}  // namespace

std::string_view to_string(TensorOp op) {
  for (auto& [v, n] : kOpNames)
    if (v == op) return n;
  return "?";
}
std::string_view to_string(TensorType t) {
  for (auto& [v, n] : kTypeNames)
    if (v == t) return n;
  return "?";
}
std::optional<TensorOp> tensor_op_from_string(std::string_view s) {
  for (auto& [v, n] : kOpNames)
    if (n == s) return v;
  return std::nullopt;
}
std::optional<TensorType> tensor_type_from_string(std::string_view s) {
  for (auto& [v, n] : kTypeNames)
    if (n == s) return v;
  return std::nullopt;
}

TensorLoopShape tensor_loop_shape(TensorLoop loop) {
  const TypeFacts& f = facts(loop.type);
  TensorLoopShape s;
  s.entry = entry_name(loop);
  if (loop.op == TensorOp::mma_sync) {
    s.m = 16;
    s.n = 8;
    s.k = f.mma_k;
    s.instruction = fmt::format("mma.sync.aligned.m16n8k{}.row.col.f32.{}.{}.f32", s.k, f.name, f.name);
    s.instructions_per_iteration = kMmaChains * kMmaUnroll;
    s.threads = 256;
    s.group_threads = 32;
    s.min_cc = loop.type == TensorType::e4m3 ? 89 : 80;
  } else {
    s.m = 64;
    s.n = 256;
    s.k = f.wgmma_k;
    s.instruction = fmt::format("wgmma.mma_async.sync.aligned.m64n256k{}.f32.{}.{}", s.k, f.name, f.name);
    s.instructions_per_iteration = kWgmmaPerGroup;
    s.threads = 256;  // two warpgroups: 128 accumulators each leave room for one block per SM
    s.group_threads = 128;
    s.min_cc = 90;
    s.exact_cc = true;
    s.shared_bytes = kWgmmaTileBytes;
  }
  return s;
}

bool tensor_loop_runs_on(TensorLoop loop, int cc_major, int cc_minor) {
  TensorLoopShape s = tensor_loop_shape(loop);
  int cc = cc_major * 10 + cc_minor;
  return s.exact_cc ? cc == s.min_cc : cc >= s.min_cc;
}

std::string tensor_loop_ptx(TensorLoop loop) {
  TensorLoopShape shape = tensor_loop_shape(loop);
  return loop.op == TensorOp::wgmma ? wgmma_loop(loop, shape) : mma_loop(loop, shape);
}

}  // namespace ptxforge::gpu
