// Every timed trial's outputs checked on the GPU. Checking a few sampled trials on the host
// let a kernel that knows or guesses which trials are checked skip the work on the others;
// reading every trial's outputs back would cost more than the trials. So after each trial's
// stop event (outside the timed window) ptxforge's own small kernels compare every output
// with the reference's outputs for that trial's input set, kept on the device, and add the
// number of mismatched elements (and of those never written) to u64 counters. Nothing but the counters crosses the bus,
// once, after the last trial.
//
// The predicate is exactly task::compare_output's (src/task/compare.cpp): floats are widened
// to double without rounding and an element matches when |a - e| <= atol + rtol * |e| (no
// fused multiply-add), a NaN expected matches a NaN, an infinite expected only itself;
// integers of every width match when equal. min_match is applied by the host to the count
// (timing_plan.h, comparison_from_count), as compare_output applies it to its own count.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "worker/driver.h"
#include "task/dtype.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::gpu {

// The comparison kernels, one per way an element is read: the float types each widened to
// double, the 8-bit floats through a table the host decoded (so the GPU decodes exactly as
// task::e4m3_to_float does), the integers by their bits (signed and unsigned alike: equal
// bits, equal values).
enum class CompareKernel { f64, f32, f16, bf16, e4m3, e5m2, b8, b16, b32, b64 };
CompareKernel compare_kernel_for(task::DType t);
std::string_view compare_kernel_entry(CompareKernel k);  // "pf_cmp_f32"
inline constexpr CompareKernel kCompareKernels[] = {CompareKernel::f64,  CompareKernel::f32, CompareKernel::f16,
                                                    CompareKernel::bf16, CompareKernel::e4m3, CompareKernel::e5m2,
                                                    CompareKernel::b8,   CompareKernel::b16, CompareKernel::b32,
                                                    CompareKernel::b64};

// The module holding every kernel: pf_cmp_<kind>(expected, actual, n, atol, rtol, counter)
// adds to the u64 at `counter` the number of i < n where actual[i] does not match expected[i];
// pf_copy16(dst, src, n) copies n 16-byte words (the candidate's .global slots, whose tails the
// copy API refuses: worker/cubin_globals.h).
std::string trial_check_ptx();

class TrialChecker {
 public:
  // Loads the module into the current context; an error says why (the time job then fails:
  // without the check, trials would go unchecked).
  static Result<TrialChecker> create(const Driver& d, int sms);
  TrialChecker(TrialChecker&&) noexcept;
  TrialChecker& operator=(TrialChecker&&) = delete;
  ~TrialChecker();

  // Enqueues the comparison of `count` elements of type `t` on the null stream (after the
  // work enqueued before it, before the work enqueued after), adding to the two u64 at
  // `counter` (mismatches, never written). Integer types ignore atol and rtol, as
  // compare_output does. A driver error is returned as it came.
  CUresult enqueue(task::DType t, CUdeviceptr expected, CUdeviceptr actual, size_t count, const task::Tolerance& tol,
                   CUdeviceptr counter) const;
  // Enqueues a copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) on the null
  // stream, by a kernel: device memory that lies in no allocation (but is mapped) copies too.
  CUresult enqueue_copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) const;

 private:
  TrialChecker(const Driver& d, CUmodule m, int sms) : d_(&d), module_(m), sms_(sms) {}
  const Driver* d_;
  CUmodule module_ = nullptr;
  CUfunction fns_[std::size(kCompareKernels)] = {};
  CUfunction copy_ = nullptr;
  int sms_ = 1;
};

}  // namespace ptxforge::gpu
