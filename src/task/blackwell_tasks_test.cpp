// The Blackwell tasks (tasks/level3/bgemm_tcgen05, mxfp8_gemm_tcgen05): they load with the
// target, size sets, floors and baselines they promise, the scale layout the mxfp8 task
// describes is a bijection onto its buffers, and their solutions check clean and assemble for
// sm_100a. No GPU here runs them (an H200 skips them: eval/target_gate.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ptx/front_end.h"
#include "task/task_spec.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::task {
namespace {

const std::string kTasks = std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level3/";

std::vector<std::string> names(const Task& t, bool shown) {
  std::vector<std::string> out;
  for (auto& s : t.sizes)
    if (s.shown == shown) out.push_back(s.name);
  return out;
}

// An expression's value on a size set, rounded up as prove rounds a floor.
int64_t eval_int(const SizeExpr& e, const SizeSet& s) {
  auto v = e.evaluate(s.values);
  EXPECT_TRUE(v) << s.name;
  return v ? static_cast<int64_t>(std::ceil(v->as_double())) : -1;
}

TEST(BlackwellTasks, LoadWithTheirTargetSizeSetsAndFloors) {
  for (const char* name : {"bgemm_tcgen05", "mxfp8_gemm_tcgen05"}) {
    auto t = load_task(kTasks + name);
    ASSERT_TRUE(t) << name << "\n" << t.error().message;
    EXPECT_EQ(t->min_target, "sm_100a") << name;
    for (const char* family :
         {"tcgen05.mma", "tcgen05.alloc", "tcgen05.ld", "cp.async.bulk.tensor", "mbarrier.try_wait"})
      EXPECT_NE(std::find(t->required_instructions.begin(), t->required_instructions.end(), family),
                t->required_instructions.end())
          << name << " requires " << family;
    EXPECT_EQ(names(*t, true),
              (std::vector<std::string>{"prefill_o_proj", "prefill_qkv_a", "prefill_up", "decode_o_proj"}))
        << name;
    EXPECT_EQ(names(*t, false),
              (std::vector<std::string>{"decode_qkv_a", "decode_up", "ragged", "skinny", "tall", "short_k"}))
        << name;
    EXPECT_EQ(t->sanitize_sizes, std::vector<std::string>{"ragged"});
    ASSERT_TRUE(t->baseline) << name;
    EXPECT_EQ(t->baseline->kind, BaselineKind::cublaslt_matmul);
    ASSERT_EQ(t->min_executed.size(), 2u) << name;
    // The MMA floor (warp executions at the largest shape) and the TMA floor (bytes of A and B)
    // on every set: above zero, and the tile loop of the shipped solution (128 x 256 tiles, one
    // MMA per 16 or 32 of k) meets the first.
    const bool fp8 = std::string(name) == "mxfp8_gemm_tcgen05";
    const int64_t k_tile = fp8 ? 128 : 64;                             // the solution's k step: 4 MMAs each
    const double largest = fp8 ? 256.0 * 256 * 32 : 256.0 * 256 * 16;  // multiply-adds of the largest MMA
    for (auto& s : t->sizes) {
      const auto m = static_cast<int64_t>(s.values.at("m")), n = static_cast<int64_t>(s.values.at("n")),
                 k = static_cast<int64_t>(s.values.at("k"));
      int64_t mma_floor = eval_int(t->min_executed.at("tcgen05.mma"), s);
      int64_t tma_floor = eval_int(t->min_executed.at("cp.async.bulk.tensor"), s);
      int64_t issued = ((m + 127) / 128) * ((n + 255) / 256) * ((k + k_tile - 1) / k_tile) * 4;
      EXPECT_GE(issued, mma_floor) << name << " " << s.name << ": the solution's MMAs fall below the floor";
      EXPECT_GE((mma_floor + 1) * largest, 0.9 * m * n * k)
          << name << " " << s.name << ": a floor below 90% of the work";
      EXPECT_EQ(tma_floor, (m + n) * k * (fp8 ? 1 : 2)) << name << " " << s.name;
      EXPECT_EQ(k % (fp8 ? 32 : 8), 0) << name << " " << s.name << ": k as the description promises";
      if (fp8) EXPECT_EQ(n % 16, 0) << s.name << ": n as the description promises";
    }
  }
}

// The byte the mxfp8 task's description assigns to row r and k block j of an operand.
size_t scale_offset(int64_t r, int64_t j, int64_t k) {
  int64_t kt = (k + 127) / 128;
  return static_cast<size_t>(((r / 128) * kt + j / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + j % 4);
}

TEST(BlackwellTasks, TheMxfp8ScaleLayoutFillsItsBuffersOneByteEach) {
  auto t = load_task(kTasks + "mxfp8_gemm_tcgen05");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->baseline->args.at("a_scale"), "sfa");
  EXPECT_EQ(t->baseline->args.at("b_scale"), "sfb");
  for (auto& s : t->sizes) {
    const auto k = static_cast<int64_t>(s.values.at("k"));
    for (auto [buffer, rows_symbol] : {std::pair{"sfa", "m"}, std::pair{"sfb", "n"}}) {
      const Param* p = t->find_param(buffer);
      ASSERT_TRUE(p);
      EXPECT_EQ(p->dtype, DType::u8);
      const auto rows = static_cast<int64_t>(s.values.at(rows_symbol));
      const int64_t padded_rows = (rows + 127) / 128 * 128, blocks = (k + 127) / 128 * 4;
      const int64_t count = eval_int(p->count, s);
      ASSERT_EQ(count, padded_rows * blocks) << s.name << " " << buffer;
      if (count > (int64_t{1} << 22)) continue;  // the small sets cover every case of the formula
      std::vector<bool> seen(count, false);
      for (int64_t r = 0; r < padded_rows; ++r)
        for (int64_t j = 0; j < blocks; ++j) {
          size_t at = scale_offset(r, j, k);
          ASSERT_LT(at, static_cast<size_t>(count)) << s.name << " row " << r << " block " << j;
          ASSERT_FALSE(seen[at]) << s.name << ": two scales share byte " << at;
          seen[at] = true;
        }
    }
  }
}

TEST(BlackwellTasks, TheBlockScaledBaselineIsCheckedAtLoad) {
  auto text = read_file(kTasks + "mxfp8_gemm_tcgen05/task.toml");
  ASSERT_TRUE(text);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = *text;
    EXPECT_NE(s.find(from), std::string::npos) << from;
    if (s.find(from) != std::string::npos) s.replace(s.find(from), from.size(), to);
    auto t = parse_task(s, "task.toml", "/tmp/t");
    return t ? std::string() : t.error().message;
  };
  EXPECT_EQ(with("", ""), "");
  EXPECT_NE(with("b_scale = \"sfb\"\n", "").find("block scales on both operands or on neither"), std::string::npos);
  EXPECT_NE(with("name = \"sfb\"\ndtype = \"u8\"", "name = \"sfb\"\ndtype = \"i8\"")
                .find("'b_scale' as UE8M0 scale bytes: it "
                      "must be a u8 buffer, not i8"),
            std::string::npos);
  EXPECT_NE(with("b_scale = \"sfb\"\n", "b_scale = \"sfq\"\n").find("must name a buffer parameter"), std::string::npos);
  // A bf16 product has no block scales.
  auto bf16 = read_file(kTasks + "bgemm_tcgen05/task.toml");
  ASSERT_TRUE(bf16);
  std::string s = *bf16;
  s.replace(s.find("b_major = \"k\"\n"), 14, "b_major = \"k\"\na_scale = \"a\"\nb_scale = \"b\"\n");
  auto t = parse_task(s, "task.toml", "/tmp/t");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("block scales (VEC32_UE8M0) with fp8 operands only, not a bf16"), std::string::npos)
      << t.error().message;
}

TEST(BlackwellTasks, SolutionsCheckCleanAndAssembleForSm100a) {
  for (const char* name : {"bgemm_tcgen05", "mxfp8_gemm_tcgen05"}) {
    auto text = read_file(kTasks + name + "/solution.ptx");
    ASSERT_TRUE(text) << name;
    auto fe = ptx::check_source(*text);
    EXPECT_TRUE(fe.ok()) << name;
    EXPECT_EQ(fe.diags.warning_count(), 0u) << name;
    for (auto& d : fe.diags.list())
      ADD_FAILURE() << name << ":" << d.loc.line << ": " << d.message << " [" << d.check_id << "]";
    for (const char* op : {"tcgen05.mma.cta_group::1.kind::", "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.commit",
                           "tcgen05.ld.sync.aligned.32x32b", "cp.async.bulk.tensor.2d", "mbarrier.try_wait"})
      EXPECT_NE(text->find(op), std::string::npos) << name << " uses " << op;
    if (std::string(name) == "mxfp8_gemm_tcgen05") {
      EXPECT_NE(text->find("kind::mxf8f6f4.block_scale.scale_vec::1X"), std::string::npos);
      EXPECT_NE(text->find("tcgen05.cp.cta_group::1.32x128b.warpx4"), std::string::npos);
    }
    if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
    toolchain::AssembleOptions o;
    o.arch = "sm_100a";
    o.source_name = std::string(name) + "/solution.ptx";
    auto r = toolchain::assemble(*text, o);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->ok) << name;
    for (auto& d : r->diags.list()) EXPECT_NE(d.severity, Severity::error) << name << ": " << d.message;
    // Not for Hopper: the same module on sm_90a is refused, which is why the task says sm_100a.
    o.arch = "sm_90a";
    auto hopper = toolchain::assemble(*text, o);
    ASSERT_TRUE(hopper);
    EXPECT_FALSE(hopper->ok) << name;
  }
}

}  // namespace
}  // namespace ptxforge::task
