#include "worker/input_check.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace ptxforge::gpu {

std::string input_check_ptx() {
  return R"(//
// ptxforge's own check that a candidate left an input unchanged (worker/input_check.h).
//
.version 7.0
.target sm_70
.address_size 64

// Grid-stride over n 32-bit words; a thread stops at its first difference, which is the
// least of its indices, so the minimum over the grid is the first difference.
.visible .entry pf_first_diff(
	.param .u64 pf_a,
	.param .u64 pf_b,
	.param .u64 pf_n,
	.param .u64 pf_out)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<7>;
	.reg .b64 	%rd<12>;

	ld.param.u64 	%rd1, [pf_a];
	ld.param.u64 	%rd2, [pf_b];
	ld.param.u64 	%rd3, [pf_n];
	ld.param.u64 	%rd4, [pf_out];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	cvta.to.global.u64 	%rd4, %rd4;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mov.u32 	%r4, %nctaid.x;
	mul.wide.u32 	%rd5, %r1, %r2;
	cvt.u64.u32 	%rd6, %r3;
	add.s64 	%rd5, %rd5, %rd6;
	mul.wide.u32 	%rd7, %r4, %r2;
$LOOP:
	setp.ge.u64 	%p1, %rd5, %rd3;
	@%p1 bra 	$DONE;
	shl.b64 	%rd8, %rd5, 2;
	add.s64 	%rd9, %rd1, %rd8;
	add.s64 	%rd10, %rd2, %rd8;
	ld.global.u32 	%r5, [%rd9];
	ld.global.u32 	%r6, [%rd10];
	setp.ne.u32 	%p2, %r5, %r6;
	@%p2 bra 	$FOUND;
	add.s64 	%rd5, %rd5, %rd7;
	bra.uni 	$LOOP;
$FOUND:
	red.global.min.u64 	[%rd4], %rd5;
$DONE:
	ret;
}
)";
}

Result<InputCheck> InputCheck::create(const Driver& d, int sms) {
  std::string ptx = input_check_ptx();
  char log[4096] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
  CUmodule m = nullptr;
  if (CUresult r = d.cuModuleLoadDataEx(&m, ptx.c_str(), 2, opts, vals); r != CUDA_SUCCESS)
    return Error{fmt::format("loading the input-check kernel: {} {}", describe(r), log)};
  CUfunction f = nullptr;
  CUdeviceptr out = 0;
  if (CUresult r = d.cuModuleGetFunction(&f, m, "pf_first_diff"); r != CUDA_SUCCESS) {
    d.cuModuleUnload(m);
    return Error{"pf_first_diff: " + describe(r)};
  }
  if (CUresult r = d.cuMemAlloc(&out, sizeof(uint64_t)); r != CUDA_SUCCESS) {
    d.cuModuleUnload(m);
    return Error{"allocating the input check's result: " + describe(r)};
  }
  return InputCheck(d, m, f, out, std::max(sms, 1));
}

InputCheck::InputCheck(InputCheck&& o) noexcept
    : d_(o.d_), module_(o.module_), fn_(o.fn_), out_(o.out_), sms_(o.sms_) {
  o.module_ = nullptr;
  o.out_ = 0;
}

InputCheck::~InputCheck() {
  if (out_) d_->cuMemFree(out_);
  if (module_) d_->cuModuleUnload(module_);
}

CUresult InputCheck::first_difference(CUdeviceptr now, CUdeviceptr was, size_t bytes, std::optional<size_t>& at) const {
  at.reset();
  const Driver& d = *d_;
  uint64_t words = bytes / 4, first = std::numeric_limits<uint64_t>::max();
  if (words > 0) {
    if (CUresult r = d.cuMemsetD32(out_, 0xFFFFFFFFu, 2); r != CUDA_SUCCESS) return r;
    const unsigned threads = 256;
    uint64_t blocks = std::min<uint64_t>((words + threads - 1) / threads, static_cast<uint64_t>(sms_) * 8);
    CUlaunchConfig cfg{};
    cfg.gridDimX = static_cast<unsigned>(blocks);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    CUdeviceptr out = out_;
    void* args[] = {&now, &was, &words, &out};
    if (CUresult r = d.cuLaunchKernelEx(&cfg, fn_, args, nullptr); r != CUDA_SUCCESS) return r;
    if (CUresult r = d.cuMemcpyDtoH(&first, out_, sizeof first); r != CUDA_SUCCESS) return r;  // synchronises
  }
  // The byte: within the first differing word, or among the last bytes % 4 bytes.
  size_t from = first != std::numeric_limits<uint64_t>::max() ? static_cast<size_t>(first) * 4 : words * 4;
  size_t len = std::min<size_t>(4, bytes - from);
  if (len == 0) return CUDA_SUCCESS;
  uint8_t a[4] = {}, b[4] = {};
  if (CUresult r = d.cuMemcpyDtoH(a, now + from, len); r != CUDA_SUCCESS) return r;
  if (CUresult r = d.cuMemcpyDtoH(b, was + from, len); r != CUDA_SUCCESS) return r;
  for (size_t i = 0; i < len; ++i)
    if (a[i] != b[i]) {
      at = from + i;
      break;
    }
  return CUDA_SUCCESS;
}

}  // namespace ptxforge::gpu
