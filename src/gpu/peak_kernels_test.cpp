#include <gtest/gtest.h>

#include <regex>

#include <fmt/format.h>

#include "gpu/peak_kernels.h"
#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::gpu {
namespace {

TEST(PeakKernels, PassOurFrontEndWithoutFindings) {
  auto r = ptx::check_source(peak_kernels_ptx());
  EXPECT_TRUE(r.ok());
  for (auto& d : r.diags.list()) ADD_FAILURE() << d.loc.line << ": " << d.message;
}

TEST(PeakKernels, AssembleWithPtxasForHopperWithoutSpills) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  toolchain::AssembleOptions o;
  o.arch = "sm_90a";
  auto r = toolchain::assemble_with_ptxas(peak_kernels_ptx(), o);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->ok) << r->log;
  for (const char* name : {"pf_copy", "pf_read", "pf_fma"}) {
    auto* f = r->find(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->spill_stores + f->spill_loads, 0) << name;
    // 2048 threads per SM (8 blocks of 256) need at most 32 registers a thread.
    EXPECT_LE(f->registers, 32) << name;
  }
}

std::string loop_name(TensorLoop l) { return fmt::format("{} {}", to_string(l.op), to_string(l.type)); }

TEST(TensorLoops, EachPassesOurFrontEndWithoutFindings) {
  for (TensorLoop l : kTensorLoops) {
    auto r = ptx::check_source(tensor_loop_ptx(l));
    EXPECT_TRUE(r.ok()) << loop_name(l);
    for (auto& d : r.diags.list()) ADD_FAILURE() << loop_name(l) << ":" << d.loc.line << ": " << d.message;
  }
}

TEST(TensorLoops, EachAssemblesForHopperWithoutSpillsAndFitsItsOccupancy) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  for (TensorLoop l : kTensorLoops) {
    TensorLoopShape shape = tensor_loop_shape(l);
    toolchain::AssembleOptions o;
    o.arch = "sm_90a";
    auto r = toolchain::assemble_with_ptxas(tensor_loop_ptx(l), o);
    ASSERT_TRUE(r) << loop_name(l) << ": " << r.error().message;
    ASSERT_TRUE(r->ok) << loop_name(l) << ": " << r->log;
    auto* f = r->find(shape.entry);
    ASSERT_NE(f, nullptr) << shape.entry;
    EXPECT_EQ(f->spill_stores + f->spill_loads, 0) << loop_name(l);
    // The measurement launches 4 blocks per SM of the mma.sync loops (1024 threads: at most
    // 64 registers each) and one of the wgmma loops (256 threads).
    EXPECT_LE(f->registers, l.op == TensorOp::mma_sync ? 64 : 255) << loop_name(l);
  }
}

// The work of one loop iteration, counted from the PTX itself: the tensor instructions between
// $LOOP: and its branch, each 2*m*n*k flops (from the shape in its opcode), times the warps
// (mma.sync) or warpgroups (wgmma) of a block.
TEST(TensorLoops, TheWorkPerIterationIsWhatThePtxDoes) {
  const std::regex shape_re(R"(\.m(\d+)n(\d+)k(\d+)\.)");
  for (TensorLoop l : kTensorLoops) {
    TensorLoopShape shape = tensor_loop_shape(l);
    std::string ptx = tensor_loop_ptx(l);
    bool in_loop = false;
    double flops = 0;
    int count = 0;
    for (auto raw : split(ptx, '\n')) {
      std::string_view line = trim(raw);
      if (line == "$LOOP:") in_loop = true;
      else if (in_loop && line.find("bra") != std::string_view::npos) break;
      if (!in_loop || !(starts_with(line, "mma.sync") || starts_with(line, "wgmma.mma_async"))) continue;
      std::smatch m;
      std::string text(line);
      ASSERT_TRUE(std::regex_search(text, m, shape_re)) << text;
      flops += 2.0 * std::stod(m[1].str()) * std::stod(m[2].str()) * std::stod(m[3].str());
      ++count;
      EXPECT_NE(text.find(fmt::format(".{}.{}", to_string(l.type), to_string(l.type))), std::string::npos) << text;
    }
    const int group = l.op == TensorOp::wgmma ? 128 : 32;
    EXPECT_EQ(count, l.op == TensorOp::wgmma ? 4 : 32) << loop_name(l);
    EXPECT_DOUBLE_EQ(flops * (shape.threads / group), shape.flops_per_iteration()) << loop_name(l);
  }
  // Spot values: mma.sync m16n8k16 is 4096 flops; wgmma m64n256k32 (e4m3) 1 Mi flops.
  EXPECT_DOUBLE_EQ(tensor_loop_shape({TensorOp::mma_sync, TensorType::f16}).flops_per_instruction(), 4096);
  EXPECT_DOUBLE_EQ(tensor_loop_shape({TensorOp::mma_sync, TensorType::tf32}).flops_per_instruction(), 2048);
  EXPECT_DOUBLE_EQ(tensor_loop_shape({TensorOp::wgmma, TensorType::e4m3}).flops_per_instruction(), 1048576);
}

TEST(TensorLoops, RunOnlyWhereTheirTargetRuns) {
  EXPECT_TRUE(tensor_loop_runs_on({TensorOp::mma_sync, TensorType::f16}, 8, 0));
  EXPECT_FALSE(tensor_loop_runs_on({TensorOp::mma_sync, TensorType::e4m3}, 8, 6)) << "fp8 mma.sync needs sm_89";
  EXPECT_TRUE(tensor_loop_runs_on({TensorOp::mma_sync, TensorType::e4m3}, 8, 9));
  EXPECT_TRUE(tensor_loop_runs_on({TensorOp::wgmma, TensorType::bf16}, 9, 0));
  EXPECT_FALSE(tensor_loop_runs_on({TensorOp::wgmma, TensorType::bf16}, 10, 0)) << "sm_90a code runs on sm_90 alone";
  EXPECT_FALSE(tensor_loop_runs_on({TensorOp::mma_sync, TensorType::tf32}, 7, 5));
  for (TensorLoop l : kTensorLoops) {
    EXPECT_EQ(tensor_op_from_string(to_string(l.op)), l.op);
    EXPECT_EQ(tensor_type_from_string(to_string(l.type)), l.type);
  }
  EXPECT_FALSE(tensor_type_from_string("fp4"));
}

}  // namespace
}  // namespace ptxforge::gpu
