#include <gtest/gtest.h>

#include "agent/feedback.h"
#include "task/task_spec.h"

namespace ptxforge::agent {
namespace {

TEST(Feedback, WrongResultsPerformanceAndTheHeldBackSizesStayHidden) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  r.stage("check").status = eval::StageStatus::passed;
  r.stage("verify") = {"verify", eval::StageStatus::failed, "size set 'odd' (held back), seed 1: ...", 0};
  gpu::VerifyReport v;
  gpu::CaseResult c;
  c.size_set = "odd";
  c.shown = false;
  c.seed = 1;
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

  eval::RunRecord fast;
  fast.passed = true;
  fast.gpu_verified = true;
  gpu::TimeReport tr;
  gpu::SizeTiming st;
  st.size_set = "large";
  st.candidate.median_ms = 0.063;
  st.reference.median_ms = 0.065;
  tr.sizes.push_back(st);
  tr.reverify_pass = true;
  fast.time = tr;
  fb = feedback_for(t, fast, hw);
  EXPECT_NE(fb.find("large: 0.0630 ms; nvcc's kernel 0.0650 ms (1.03x)"), std::string::npos) << fb;
  EXPECT_NE(fb.find("GB/s = 66% of the 4814 GB/s peak"), std::string::npos) << fb;  // 12 B x 16M / 63 us
  EXPECT_LE(feedback_for(t, fast, hw, 100).size(), 160u) << "capped";
}

}  // namespace
}  // namespace ptxforge::agent
