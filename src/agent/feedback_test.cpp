#include <gtest/gtest.h>

#include <fmt/format.h>

#include "agent/feedback.h"
#include "eval/pipeline.h"
#include "gpu/fake_worker.h"
#include "task/task_spec.h"
#include "util/paths.h"

namespace ptxforge::agent {
namespace {

TEST(Feedback, ASanitizerReportGoesBackWithItsMeaning) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/reduce_sum");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  r.gpu_verified = true;
  r.stage(eval::StageId::verify).status = eval::StageStatus::passed;
  eval::StageResult& san = r.stage(eval::StageId::sanitize);
  san.status = eval::StageStatus::failed;
  san.summary = "racecheck: 1 error: Error: Race reported between Write access at reduce_sum+0x1a0; and Read access at "
                "reduce_sum+0x1c0 [31 hazards]; by thread (0,0,0) in block (0,0,0)";
  san.held_back = true;
  san.model_summary = "racecheck: 1 error: Error: Race reported between Write access at reduce_sum+0x1a0; and Read access at "
                      "reduce_sum+0x1c0 [31 hazards]";
  std::string fb = feedback_for(t, r, hw);
  EXPECT_NE(fb.find("## compute-sanitizer\nThe results were correct, but racecheck: 1 error: Error: Race reported"), std::string::npos)
      << fb;
  EXPECT_NE(fb.find("no bar.sync between them"), std::string::npos) << fb;
  EXPECT_EQ(fb.find("by thread"), std::string::npos) << "a held-back run's thread and block stay out";
  EXPECT_NE(fb.find("Result: FAILED at sanitize: racecheck"), std::string::npos) << fb;
}

TEST(Feedback, ATensorCoreTaskIsMeasuredAgainstTheTensorCorePeak) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level2/hgemm_mma");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  gpu::TimeReport tr;
  gpu::SizeTiming st;
  st.size_set = "4096";
  st.candidate.median_ms = 0.25;  // 2 * 4096^3 flops in 0.25 ms: 549.8 TFLOP/s
  tr.sizes.push_back(st);
  r.time = tr;
  std::string line = roofline_summary(t, r, hw);
  double f16 = *hw.peak_tensor_tflops(task::TensorCores::f16);
  EXPECT_NEAR(f16, 4096.0 * 132 * 1.98e9 / 1e12, 1) << "H200: 4096 dense f16 flops per SM per clock";
  EXPECT_NE(line.find(fmt::format("549.76 TFLOP/s = {:.0f}% of the {:.1f} TFLOP/s f16 tensor-core peak", 100 * 549.755813888 / f16, f16)),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("FP32"), std::string::npos) << line;
  EXPECT_NE(hw.describe().find("Dense tensor-core peaks about 1071 TFLOP/s f16/bf16, 535 tf32, 2141 fp8"), std::string::npos)
      << hw.describe();
}

TEST(Feedback, WrongResultsPerformanceAndTheHeldBackSizesStayHidden) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  r.stage(eval::StageId::check).status = eval::StageStatus::passed;
  eval::StageResult& verify = r.stage(eval::StageId::verify);
  verify.status = eval::StageStatus::failed;
  verify.summary = "size set 'odd' (held back), seed 1: ...";
  verify.held_back = true;
  verify.model_summary = "a held-back size, seed 1: ...";
  gpu::VerifyReport v;
  gpu::CaseResult c;
  c.size_set = "odd";
  c.shown = false;
  c.seed = 0x5EED;
  c.seed_index = 1;
  task::Comparison cmp;
  cmp.output = "c";
  cmp.count = 1000003;
  cmp.mismatches = 3;
  cmp.pass = false;
  cmp.first = {{1000000, 1.5, 0.0}};
  cmp.hint = "3 elements were never written";
  c.outputs.push_back(cmp);
  v.cases.push_back(c);
  r.verify = v;
  std::string fb = feedback_for(t, r, hw);
  EXPECT_NE(fb.find("a held-back size (not shown to you)"), std::string::npos) << fb;
  EXPECT_EQ(fb.find("odd"), std::string::npos) << "the held-back set's name and sizes are not revealed";
  EXPECT_NE(fb.find("3 of 1000003 elements wrong"), std::string::npos);
  EXPECT_NE(fb.find("hint: 3 elements were never written"), std::string::npos);
  EXPECT_NE(fb.find("Result: FAILED at verify: a held-back size, seed 1: ..."), std::string::npos) << fb;

  // A fault on a held-back size: the failure's flag keeps its place out of the feedback.
  r.verify.reset();
  r.failure = gpu::Failure{gpu::FailureKind::fault, "CUDA_ERROR_ILLEGAL_ADDRESS (700)", "size set 'odd', seed 1", true};
  fb = feedback_for(t, r, hw);
  EXPECT_NE(fb.find("## Runtime failure (fault)\nCUDA_ERROR_ILLEGAL_ADDRESS (700) — on a held-back size (not shown to you)"),
            std::string::npos) << fb;
  EXPECT_EQ(fb.find("odd"), std::string::npos) << fb;
  r.failure->held_back = false;
  r.failure->where = "size set 'small', seed 1";
  EXPECT_NE(feedback_for(t, r, hw).find("— size set 'small', seed 1"), std::string::npos) << "shown sizes are named";

  eval::RunRecord fast;
  fast.passed = true;
  fast.gpu_verified = true;
  gpu::TimeReport tr;
  gpu::SizeTiming st;
  st.size_set = "large";
  st.candidate.median_ms = 0.063;
  st.reference.median_ms = 0.065;
  tr.sizes.push_back(st);
  tr.trials_pass = true;
  tr.reverify_pass = true;
  fast.time = tr;
  fb = feedback_for(t, fast, hw);
  EXPECT_NE(fb.find("large: 0.0630 ms; nvcc's kernel 0.0650 ms (1.03x)"), std::string::npos) << fb;
  EXPECT_NE(fb.find("GB/s = 66% of the 4814 GB/s peak"), std::string::npos) << fb;  // 12 B x 16M / 63 us
  EXPECT_LE(feedback_for(t, fast, hw, 100).size(), 160u) << "capped";
}

// The pipeline's own records, through a fake worker whose GPU fails on held-back sizes: the
// feedback never names them, whichever way the failure came.
TEST(Feedback, TheModelNeverSeesAHeldBackSizeSetOfARealRecord) {
  if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
  std::string root = PTXFORGE_SOURCE_DIR;
  task::Task t = *task::load_task(root + "/tasks/level1/vector_add");
  Hardware hw = *find_hardware("h200");
  for (bool fault : {false, true}) {
    gpu::FakeWorker gpu;
    gpu.answer = [&](const gpu::Job& job) {
      gpu::Outcome o;
      if (job.kind != gpu::JobKind::verify) {
        o.failure = gpu::Failure{gpu::FailureKind::driver, "no GPU", ""};
        return o;
      }
      if (fault) {
        o.failure = gpu::Failure{gpu::FailureKind::fault, "CUDA_ERROR_ILLEGAL_ADDRESS (700)", "size set 'tiny', seed 3", true};
        return o;
      }
      gpu::VerifyReport v;
      gpu::CaseResult c;
      c.size_set = "tiny";
      c.shown = false;
      c.seed = 0x5EED;
      c.seed_index = 3;
      c.problems.push_back("guard after 'c' was overwritten");
      v.cases.push_back(c);
      o.verify = v;
      return o;
    };
    eval::Pipeline p(gpu);
    eval::RunRecord r = p.run(t, root + "/tasks/level1/vector_add/solution.ptx", {});
    ASSERT_NE(r.verdict().find("tiny"), std::string::npos) << "a person is told: " << r.verdict();
    std::string fb = feedback_for(t, r, hw);
    EXPECT_EQ(fb.find("tiny"), std::string::npos) << fb;
    EXPECT_NE(fb.find("held-back size"), std::string::npos) << fb;
  }
}

}  // namespace
}  // namespace ptxforge::agent
