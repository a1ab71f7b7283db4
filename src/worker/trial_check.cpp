#include "worker/trial_check.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace ptxforge::gpu {

CompareKernel compare_kernel_for(task::DType t) {
  switch (t) {
    case task::DType::f64: return CompareKernel::f64;
    case task::DType::f32: return CompareKernel::f32;
    case task::DType::f16: return CompareKernel::f16;
    case task::DType::bf16: return CompareKernel::bf16;
    case task::DType::e4m3: return CompareKernel::e4m3;
    case task::DType::e5m2: return CompareKernel::e5m2;
    case task::DType::i8:
    case task::DType::u8: return CompareKernel::b8;
    case task::DType::i16:
    case task::DType::u16: return CompareKernel::b16;
    case task::DType::i32:
    case task::DType::u32: return CompareKernel::b32;
    case task::DType::i64:
    case task::DType::u64: return CompareKernel::b64;
  }
  return CompareKernel::b8;
}

std::string_view compare_kernel_entry(CompareKernel k) {
  switch (k) {
    case CompareKernel::f64: return "pf_cmp_f64";
    case CompareKernel::f32: return "pf_cmp_f32";
    case CompareKernel::f16: return "pf_cmp_f16";
    case CompareKernel::bf16: return "pf_cmp_bf16";
    case CompareKernel::e4m3: return "pf_cmp_e4m3";
    case CompareKernel::e5m2: return "pf_cmp_e5m2";
    case CompareKernel::b8: return "pf_cmp_b8";
    case CompareKernel::b16: return "pf_cmp_b16";
    case CompareKernel::b32: return "pf_cmp_b32";
    case CompareKernel::b64: return "pf_cmp_b64";
  }
  return "";
}

namespace {

bool is_float_kernel(CompareKernel k) {
  return k != CompareKernel::b8 && k != CompareKernel::b16 && k != CompareKernel::b32 && k != CompareKernel::b64;
}

int log2_size(CompareKernel k) {
  switch (k) {
    case CompareKernel::f64:
    case CompareKernel::b64: return 3;
    case CompareKernel::f32:
    case CompareKernel::b32: return 2;
    case CompareKernel::f16:
    case CompareKernel::bf16:
    case CompareKernel::b16: return 1;
    default: return 0;
  }
}

// The 256 values of an 8-bit float as f32 bits, decoded by the host's own decoder, so that
// the GPU reads an fp8 element exactly as compare_output does.
std::string decode_table(const char* name, float (*decode)(uint8_t)) {
  std::string out = fmt::format(".const .align 4 .b32 {}[256] = {{", name);
  for (int b = 0; b < 256; ++b) {
    float f = decode(static_cast<uint8_t>(b));
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    out += fmt::format("{}{}0x{:08X}", b ? "," : "", b % 8 ? " " : "\n\t", bits);
  }
  return out + "};\n";
}

// Element i of the expected buffer (at %rd9) and of the actual one (at %rd10). The actual
// element's bits go to %r6 (up to 4 bytes) or %rd13 (8 bytes), for the poison test. The float
// kernels widen both to %fd3 (expected) and %fd4 (actual); the integer kernels set %p2 when
// the bits are equal.
std::string load_elements(CompareKernel k) {
  auto widen32 = "\tcvt.f64.f32 \t%fd3, %f1;\n\tcvt.f64.f32 \t%fd4, %f2;\n";
  auto from_table = [&](const char* table) {
    return fmt::format(
        "\tld.global.u8 \t%r5, [%rd9];\n\tld.global.u8 \t%r6, [%rd10];\n\tmov.u64 \t%rd14, {};\n"
        "\tmul.wide.u32 \t%rd12, %r5, 4;\n\tadd.s64 \t%rd12, %rd14, %rd12;\n\tld.const.f32 \t%f1, [%rd12];\n"
        "\tmul.wide.u32 \t%rd12, %r6, 4;\n\tadd.s64 \t%rd12, %rd14, %rd12;\n\tld.const.f32 \t%f2, [%rd12];\n{}",
        table, widen32);
  };
  switch (k) {
    case CompareKernel::f64:
      return "\tld.global.f64 \t%fd3, [%rd9];\n\tld.global.u64 \t%rd13, [%rd10];\n\tmov.b64 \t%fd4, %rd13;\n";
    case CompareKernel::f32:
      return std::string("\tld.global.f32 \t%f1, [%rd9];\n\tld.global.u32 \t%r6, [%rd10];\n\tmov.b32 \t%f2, %r6;\n") +
             widen32;
    case CompareKernel::f16:
      return std::string(
                 "\tld.global.b16 \t%h1, [%rd9];\n\tld.global.b16 \t%h2, [%rd10];\n\tcvt.u32.u16 \t%r6, %h2;\n"
                 "\tcvt.f32.f16 \t%f1, %h1;\n\tcvt.f32.f16 \t%f2, %h2;\n") +
             widen32;
    case CompareKernel::bf16:  // a bf16 is the top half of an f32
      return std::string(
                 "\tld.global.u16 \t%r5, [%rd9];\n\tld.global.u16 \t%r6, [%rd10];\n"
                 "\tshl.b32 \t%r5, %r5, 16;\n\tshl.b32 \t%r7, %r6, 16;\n"
                 "\tmov.b32 \t%f1, %r5;\n\tmov.b32 \t%f2, %r7;\n") +
             widen32;
    case CompareKernel::e4m3: return from_table("pf_e4m3_table");
    case CompareKernel::e5m2: return from_table("pf_e5m2_table");
    case CompareKernel::b8:
      return "\tld.global.u8 \t%r5, [%rd9];\n\tld.global.u8 \t%r6, [%rd10];\n\tsetp.eq.u32 \t%p2, %r5, %r6;\n";
    case CompareKernel::b16:
      return "\tld.global.u16 \t%r5, [%rd9];\n\tld.global.u16 \t%r6, [%rd10];\n\tsetp.eq.u32 \t%p2, %r5, %r6;\n";
    case CompareKernel::b32:
      return "\tld.global.u32 \t%r5, [%rd9];\n\tld.global.u32 \t%r6, [%rd10];\n\tsetp.eq.u32 \t%p2, %r5, %r6;\n";
    case CompareKernel::b64:
      return "\tld.global.u64 \t%rd12, [%rd9];\n\tld.global.u64 \t%rd13, [%rd10];\n\tsetp.eq.u64 \t%p2, %rd12, %rd13;\n";
  }
  return "";
}

// compare.cpp's close(): e NaN -> a NaN; e infinite -> a == e; else |a - e| <= atol + rtol*|e|,
// each operation rounded on its own (.rn: no fused multiply-add), as the host computes it.
constexpr const char* kFloatMatch = R"(	abs.f64 	%fd5, %fd3;
	sub.rn.f64 	%fd6, %fd4, %fd3;
	abs.f64 	%fd6, %fd6;
	mul.rn.f64 	%fd7, %fd2, %fd5;
	add.rn.f64 	%fd7, %fd1, %fd7;
	setp.le.f64 	%p2, %fd6, %fd7;
	setp.eq.f64 	%p4, %fd5, 0d7FF0000000000000;
	not.pred 	%p5, %p4;
	and.pred 	%p2, %p2, %p5;
	setp.eq.and.f64 	%p6, %fd4, %fd3, %p4;
	or.pred 	%p2, %p2, %p6;
	setp.nan.f64 	%p7, %fd3, %fd3;
	setp.nan.and.f64 	%p8, %fd4, %fd4, %p7;
	or.pred 	%p2, %p2, %p8;
)";

// A wrong element that still holds the poison pattern was never written (task::is_poisoned):
// its bytes are those of the repeated poison word at its byte offset. Sets %p9.
std::string poison_test(CompareKernel k) {
  if (log2_size(k) == 3) return "\tsetp.eq.u64 \t%p9, %rd13, 0xFFBADBADFFBADBAD;\n";
  const char* mask = log2_size(k) == 0 ? "0xFF" : log2_size(k) == 1 ? "0xFFFF" : "0xFFFFFFFF";
  return fmt::format(
      "\tcvt.u32.u64 \t%r8, %rd8;\n\tand.b32 \t%r8, %r8, 3;\n\tshl.b32 \t%r8, %r8, 3;\n"
      "\tmov.u32 \t%r9, 0xFFBADBAD;\n\tshr.b32 \t%r9, %r9, %r8;\n\tand.b32 \t%r9, %r9, {};\n"
      "\tsetp.eq.u32 \t%p9, %r6, %r9;\n",
      mask);
}

// Every thread's first element (%rd5) and the grid's stride (%rd7), in elements.
constexpr const char* kGridStride = R"(	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mov.u32 	%r4, %nctaid.x;
	mul.wide.u32 	%rd5, %r1, %r2;
	cvt.u64.u32 	%rd6, %r3;
	add.s64 	%rd5, %rd5, %rd6;
	mul.wide.u32 	%rd7, %r4, %r2;
)";

std::string kernel(CompareKernel k) {
  bool fl = is_float_kernel(k);
  std::string regs = "\t.reg .pred \t%p<10>;\n";
  if (k == CompareKernel::f16) regs += "\t.reg .b16 \t%h<3>;\n";
  regs += "\t.reg .b32 \t%r<10>;\n";
  if (fl && k != CompareKernel::f64) regs += "\t.reg .f32 \t%f<3>;\n";
  regs += "\t.reg .b64 \t%rd<17>;\n";
  regs += fl ? "\t.reg .f64 \t%fd<8>;\n" : "";
  std::string params = fl ? "\tld.param.f64 \t%fd1, [pf_atol];\n\tld.param.f64 \t%fd2, [pf_rtol];\n" : "";
  return fmt::format(R"(
.visible .entry {0}(
	.param .u64 pf_e,
	.param .u64 pf_a,
	.param .u64 pf_n,
	.param .f64 pf_atol,
	.param .f64 pf_rtol,
	.param .u64 pf_count)
{{
{1}
	ld.param.u64 	%rd1, [pf_e];
	ld.param.u64 	%rd2, [pf_a];
	ld.param.u64 	%rd3, [pf_n];
{2}	ld.param.u64 	%rd4, [pf_count];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	cvta.to.global.u64 	%rd4, %rd4;
{7}	mov.u64 	%rd11, 0;
	mov.u64 	%rd15, 0;
$LOOP:
	setp.ge.u64 	%p1, %rd5, %rd3;
	@%p1 bra 	$DONE;
	shl.b64 	%rd8, %rd5, {3};
	add.s64 	%rd9, %rd1, %rd8;
	add.s64 	%rd10, %rd2, %rd8;
{4}{5}	@%p2 bra 	$NEXT;
	add.s64 	%rd11, %rd11, 1;
{6}	selp.u64 	%rd16, 1, 0, %p9;
	add.s64 	%rd15, %rd15, %rd16;
$NEXT:
	add.s64 	%rd5, %rd5, %rd7;
	bra.uni 	$LOOP;
$DONE:
	setp.eq.u64 	%p3, %rd11, 0;
	@%p3 bra 	$END;
	red.global.add.u64 	[%rd4], %rd11;
	red.global.add.u64 	[%rd4+8], %rd15;
$END:
	ret;
}}
)",
                     compare_kernel_entry(k), regs, params, log2_size(k), load_elements(k), fl ? kFloatMatch : "",
                     poison_test(k), kGridStride);
}

}  // namespace

std::string trial_check_ptx() {
  std::string out = R"(//
// ptxforge's own comparison of a timed trial's outputs with the reference's (worker/trial_check.h).
// A thread walks its elements (grid-stride), counts those that do not match, and adds its
// count to the u64 at pf_count.
//
.version 7.0
.target sm_70
.address_size 64

)";
  out += decode_table("pf_e4m3_table", task::e4m3_to_float);
  out += decode_table("pf_e5m2_table", task::e5m2_to_float);
  for (CompareKernel k : kCompareKernels) out += kernel(k);
  out += R"(
.visible .entry pf_copy16(
	.param .u64 pf_dst,
	.param .u64 pf_src,
	.param .u64 pf_n)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<11>;
	ld.param.u64 	%rd1, [pf_dst];
	ld.param.u64 	%rd2, [pf_src];
	ld.param.u64 	%rd3, [pf_n];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
)";
  out += kGridStride;
  out += R"($COPY:
	setp.ge.u64 	%p1, %rd5, %rd3;
	@%p1 bra 	$COPIED;
	shl.b64 	%rd8, %rd5, 4;
	add.s64 	%rd9, %rd2, %rd8;
	add.s64 	%rd10, %rd1, %rd8;
	ld.global.v4.u32 	{%r5, %r6, %r7, %r8}, [%rd9];
	st.global.v4.u32 	[%rd10], {%r5, %r6, %r7, %r8};
	add.s64 	%rd5, %rd5, %rd7;
	bra.uni 	$COPY;
$COPIED:
	ret;
}
)";
  return out;
}

Result<TrialChecker> TrialChecker::create(const Driver& d, int sms) {
  std::string ptx = trial_check_ptx();
  char log[4096] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
  CUmodule m = nullptr;
  if (CUresult r = d.cuModuleLoadDataEx(&m, ptx.c_str(), 2, opts, vals); r != CUDA_SUCCESS)
    return Error{fmt::format("loading the trial-check kernels: {} {}", describe(r), log)};
  TrialChecker c(d, m, std::max(sms, 1));
  for (size_t i = 0; i < std::size(kCompareKernels); ++i) {
    std::string name(compare_kernel_entry(kCompareKernels[i]));
    if (CUresult r = d.cuModuleGetFunction(&c.fns_[i], m, name.c_str()); r != CUDA_SUCCESS)
      return Error{name + ": " + describe(r)};  // c's destructor unloads the module
  }
  if (CUresult r = d.cuModuleGetFunction(&c.copy_, m, "pf_copy16"); r != CUDA_SUCCESS)
    return Error{std::string("pf_copy16: ") + describe(r)};
  return c;
}

TrialChecker::TrialChecker(TrialChecker&& o) noexcept : d_(o.d_), module_(o.module_), copy_(o.copy_), sms_(o.sms_) {
  std::copy(std::begin(o.fns_), std::end(o.fns_), std::begin(fns_));
  o.module_ = nullptr;
}

TrialChecker::~TrialChecker() {
  if (module_) d_->cuModuleUnload(module_);
}

CUresult TrialChecker::enqueue(task::DType t, CUdeviceptr expected, CUdeviceptr actual, size_t count,
                               const task::Tolerance& tol, CUdeviceptr counter) const {
  if (count == 0) return CUDA_SUCCESS;
  CompareKernel k = compare_kernel_for(t);
  CUfunction f = fns_[static_cast<size_t>(k)];
  const unsigned threads = 256;
  uint64_t n = count;
  uint64_t blocks = std::min<uint64_t>((n + threads - 1) / threads, static_cast<uint64_t>(sms_) * 8);
  double atol = tol.atol, rtol = tol.rtol;
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>(blocks);
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = threads;
  cfg.blockDimY = cfg.blockDimZ = 1;
  void* args[] = {&expected, &actual, &n, &atol, &rtol, &counter};
  return d_->cuLaunchKernelEx(&cfg, f, args, nullptr);
}

CUresult TrialChecker::enqueue_copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) const {
  assert(bytes % 16 == 0 && dst % 16 == 0 && src % 16 == 0);
  if (bytes == 0) return CUDA_SUCCESS;
  const unsigned threads = 256;
  uint64_t n = bytes / 16;
  uint64_t blocks = std::min<uint64_t>((n + threads - 1) / threads, static_cast<uint64_t>(sms_) * 8);
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>(blocks);
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = threads;
  cfg.blockDimY = cfg.blockDimZ = 1;
  void* args[] = {&dst, &src, &n};
  return d_->cuLaunchKernelEx(&cfg, copy_, args, nullptr);
}

}  // namespace ptxforge::gpu
