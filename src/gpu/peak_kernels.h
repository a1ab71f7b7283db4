// The PTX of the kernels that measure the GPU's peaks (gpu/peak_measure.cpp runs them): a
// copy and a read-only stream of 16-byte vectors, four in flight per thread, and FP32 FMA
// chains with no dependence between them. Apart from the driver, so a CPU test checks the
// text with the front end and ptxas.
#pragma once

#include <string>

namespace ptxforge::gpu {

// Entries: pf_copy(dst, src, n16), pf_read(out, src, n16) (n16: 16-byte vectors; pf_read
// writes one u32 per thread), pf_fma(out, iters) (one f32 per thread).
std::string peak_kernels_ptx();

// FMAs per thread and loop iteration of pf_fma: flops = 2 * this * iters * threads.
constexpr int kFmaPerIteration = 8 * 16;

}  // namespace ptxforge::gpu
