// The PTX of the kernels that measure the GPU's peaks (worker/peak_measure.cpp runs them): a
// copy and a read-only stream of 16-byte vectors, four in flight per thread, FP32 FMA chains
// with no dependence between them, and tensor-core loops (mma.sync and wgmma, one module per
// instruction and type, since each needs its own target). Apart from the driver, so a CPU test
// checks the text with the front end and ptxas and counts the work of one loop iteration.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ptxforge::gpu {

// Entries: pf_copy(dst, src, n16), pf_read(out, src, n16) (n16: 16-byte vectors; pf_read
// writes one u32 per thread), pf_fma(out, iters) (one f32 per thread).
std::string peak_kernels_ptx();

// FMAs per thread and loop iteration of pf_fma: flops = 2 * this * iters * threads.
constexpr int kFmaPerIteration = 8 * 16;

// ---- tensor-core loops ------------------------------------------------------------------------
// The physical-limit gate bounds a tensor-core task's flops by the best rate these loops reach
// (gpu/peaks.h): the instruction families a candidate can use, at each input type it can use.
enum class TensorOp { mma_sync, wgmma };
enum class TensorType { f16, bf16, tf32, e4m3 };
std::string_view to_string(TensorOp op);
std::string_view to_string(TensorType t);
std::optional<TensorOp> tensor_op_from_string(std::string_view s);
std::optional<TensorType> tensor_type_from_string(std::string_view s);

struct TensorLoop {
  TensorOp op = TensorOp::mma_sync;
  TensorType type = TensorType::f16;
};
// Every loop doctor measures, mma.sync first.
inline constexpr TensorLoop kTensorLoops[] = {
    {TensorOp::mma_sync, TensorType::f16},  {TensorOp::mma_sync, TensorType::bf16}, {TensorOp::mma_sync, TensorType::tf32},
    {TensorOp::mma_sync, TensorType::e4m3}, {TensorOp::wgmma, TensorType::f16},     {TensorOp::wgmma, TensorType::bf16},
    {TensorOp::wgmma, TensorType::tf32},    {TensorOp::wgmma, TensorType::e4m3}};

// The loop's shape. The entry is `<entry>(out, iters)`: `iters` loop iterations, one f32 per
// thread written to `out` (so nothing is dead). A block of `threads` threads; `per_block`
// dense flops per loop iteration and block. `instruction` is the PTX opcode with its shape
// and types; `flops_per_instruction` = 2 * m * n * k of it.
struct TensorLoopShape {
  std::string entry;        // "pf_mma_f16", "pf_wgmma_e4m3"
  std::string instruction;  // "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
  int m = 0, n = 0, k = 0;
  int instructions_per_iteration = 0;  // per warp (mma.sync) or per warpgroup (wgmma)
  int threads = 0;                     // per block
  int min_cc = 0;                      // compute capability x10 the loop needs (80, 89, 90)
  bool exact_cc = false;               // only that one (wgmma: sm_90a code runs on sm_90 alone)
  int shared_bytes = 0;                // static shared memory of the block
  int group_threads = 32;              // threads that issue one instruction together: a warp or a warpgroup
  double flops_per_instruction() const { return 2.0 * m * n * k; }
  int groups_per_block() const { return threads / group_threads; }
  double flops_per_iteration() const { return flops_per_instruction() * instructions_per_iteration * groups_per_block(); }
};
TensorLoopShape tensor_loop_shape(TensorLoop loop);
// Whether a GPU of compute capability major.minor runs the loop.
bool tensor_loop_runs_on(TensorLoop loop, int cc_major, int cc_minor);
// A whole module (header and one entry) for the loop.
std::string tensor_loop_ptx(TensorLoop loop);

}  // namespace ptxforge::gpu
