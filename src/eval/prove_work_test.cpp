// Work classes and weights: each required instruction is worth its shape's multiply-adds or its
// copy's bytes, so the smallest shapes and boxes cannot stand in for the work of large ones.
#include "eval/prove_work.h"

#include <gtest/gtest.h>

#include "ptx/parser.h"
#include "testing/ptx_kernel.h"

namespace ptxforge::eval {
namespace {

// The work class of each instruction of `body` in a kernel, in order.
std::vector<std::string> classes(const std::string& body, const std::string& params = "") {
  std::string text = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p" + params +
                     ")\n{\n.reg .b32 %r<40>;\n.reg .b64 %rd<10>;\n.reg .f32 %f<200>;\n" + body + "\n}\n";
  Diagnostics d;
  ptx::Module m = ptx::parse(text, d);
  EXPECT_FALSE(d.has_errors()) << text;
  std::vector<std::string> out;
  for (auto& item : m.items)
    if (auto* fn = std::get_if<ptx::Function>(&item.node); fn && fn->body)
      ptx::for_each_statement(*fn->body, [&](const ptx::Statement& s) {
        if (auto* ins = s.get_if<ptx::Instruction>()) out.push_back(work_class(*fn, *ins));
      });
  return out;
}

TEST(ProveWork, MatrixInstructionsWeighTheirShape) {
  auto c = classes(
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%f0}, %rd1, %rd2, 1, 1, 1, 1, 1;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0}, %rd1, %rd2, 1, 1, 1, 1, 1;\n"
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r1, %r2}, {%r3}, {%f0, %f1, %f2, %f3};\n"
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];\n"
      "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r5];\n"
      "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;\n");
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0], "mac 65536 64x256x16") << "64 * 256 * 16 over the warpgroup's 4 warps";
  EXPECT_EQ(c[1], "mac 2048 64x8x16") << "1/32 of the largest shape";
  EXPECT_EQ(c[2], "mac 1024 -");
  EXPECT_EQ(c[3], "bytes 512");
  EXPECT_EQ(c[4], "bytes 128");
  EXPECT_EQ(c[5], "exec");
}

TEST(ProveWork, UnitsFollowTheFamily) {
  EXPECT_EQ(unit_of_family("wgmma.mma_async"), WorkUnit::macs);
  EXPECT_EQ(unit_of_family("mma.sync"), WorkUnit::macs);
  EXPECT_EQ(unit_of_family("mma"), WorkUnit::macs);
  EXPECT_EQ(unit_of_family("cp.async.bulk.tensor.2d.global"), WorkUnit::bytes);
  EXPECT_EQ(unit_of_family("ldmatrix"), WorkUnit::bytes);
  EXPECT_EQ(unit_of_family("wgmma"), WorkUnit::executions) << "fences and waits do no work";
  EXPECT_EQ(unit_of_family("mbarrier.try_wait"), WorkUnit::executions);
  EXPECT_EQ(unit_of_family("setmaxnreg"), WorkUnit::executions);
}

// A TMA copy weighs its tensor map's box, traced from the entry parameter through mov and
// cvta.param; a map the kernel built elsewhere (here: loaded from memory) counts 16 bytes.
TEST(ProveWork, TmaCopiesWeighTheirBox) {
  auto c = classes(
      "mov.b64 %rd1, tm;\ncvta.param.u64 %rd1, %rd1;\n"
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];\n"
      "ld.global.u64 %rd2, [%rd3];\n"
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2, {%r2, %r3}], [%r4];\n"
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [tm, {%r2, %r3}], [%r4];\n",
      ", .param .align 64 .b8 tm[128]");
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[2], "tma k 1");
  EXPECT_EQ(c[4], "bytes 16");
  EXPECT_EQ(c[5], "tma k 1");

  auto task = task::parse_task(R"toml(
name = "t"
description = "d"
entry = "k"
[[param]]
name = "x"
dtype = "bf16"
count = "n * n"
role = "in"
init = "uniform(-1, 1)"
[[param]]
name = "y"
dtype = "f32"
count = "n"
role = "out"
[[param]]
name = "tm"
kind = "tensor_map"
over = "x"
dims = ["n", "n"]
strides = ["n * 2"]
[[sizes]]
name = "s"
n = 256
[reference]
entry = "r"
grid = "(1, 1, 1)"
block = "(1, 1, 1)"
[roofline]
bytes = "n * n * 2"
flops = "0"
)toml",
                               "task.toml", ".");
  ASSERT_TRUE(task) << task.error().message;
  task::LaunchSpec spec;
  task::Launch l;
  l.entry = "k";
  l.args = {"x", "tm"};  // the classes above name parameter 1 of k
  spec.launches.push_back(l);
  task::TensorMapChoice choice;
  choice.name = "tm";
  choice.box = {*task::SizeExpr::parse("64"), *task::SizeExpr::parse("n / 2")};
  spec.tensor_maps.push_back(choice);
  const task::SizeSet& set = task->sizes[0];
  EXPECT_EQ(*work_weight("tma k 1", WorkUnit::bytes, *task, spec, set), 64u * 128 * 2);
  EXPECT_EQ(*work_weight("bytes 16", WorkUnit::bytes, *task, spec, set), 16u);
  EXPECT_EQ(*work_weight("mac 2048 64x8x16", WorkUnit::macs, *task, spec, set), 2048u);
  EXPECT_EQ(*work_weight("mac 2048 64x8x16", WorkUnit::executions, *task, spec, set), 1u);
  EXPECT_EQ(*work_weight("exec", WorkUnit::bytes, *task, spec, set), 0u) << "a commit or wait moves no bytes";
}

TEST(ProveWork, AWgmmaShapeMustBeInTheMachineCode) {
  toolchain::SassListing l = toolchain::parse_sass_listing(
      ".section .text.k,\"ax\",@progbits\n/*0000*/ HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0 ;\n");
  EXPECT_TRUE(shape_in_sass("mac 2048 64x8x16", l));
  EXPECT_FALSE(shape_in_sass("mac 65536 64x256x16", l)) << "ptxas deleted the large ones";
  EXPECT_TRUE(shape_in_sass("mac 1024 -", l));
}

}  // namespace
}  // namespace ptxforge::eval
