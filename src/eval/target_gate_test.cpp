// The target gate with fake GPUs: which targets run which tasks (the ISA's satisfaction, not
// string equality), and what the pipeline and `suite validate` do with a task the GPU cannot
// run: check and assemble for the task's target, never send it to the GPU, say why.
#include "eval/target_gate.h"

#include <gtest/gtest.h>

#include "eval/pipeline.h"
#include "eval/suite.h"
#include "task/task_spec.h"
#include "testing/fake_worker.h"
#include "util/paths.h"

namespace ptxforge::eval {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;

TEST(TargetGate, ATargetSatisfiedByTheGpuHasNoGap) {
  EXPECT_FALSE(target_gap("sm_80", "sm_90a"));
  EXPECT_FALSE(target_gap("sm_90a", "sm_90a"));
  EXPECT_FALSE(target_gap("sm_100a", "sm_100a"));
  EXPECT_FALSE(target_gap("sm_100f", "sm_103a")) << "an f target runs on later members of its family";
  EXPECT_FALSE(target_gap("sm_100", "sm_120a"));
  EXPECT_FALSE(target_gap("sm_100a", "gpu-from-the-future")) << "an unparsed GPU target is not blocked here";
}

TEST(TargetGate, AGapNamesBothTargetsAndWhy) {
  auto g = target_gap("sm_100a", "sm_90a");
  ASSERT_TRUE(g);
  EXPECT_EQ(*g, "the task needs sm_100a and this GPU is sm_90a: an 'a' target runs on that architecture only");
  g = target_gap("sm_100a", "sm_103a");
  ASSERT_TRUE(g) << "sm_100a code does not run on a B300 (sm_103a), although the numbers go up";
  EXPECT_NE(g->find("this GPU is sm_103a"), std::string::npos);
  g = target_gap("sm_90a", "sm_100a");
  ASSERT_TRUE(g) << "wgmma (sm_90a) is not on Blackwell";
  g = target_gap("sm_100f", "sm_120a");
  ASSERT_TRUE(g);
  EXPECT_NE(g->find("'f' target runs on its own family only"), std::string::npos);
  g = target_gap("sm_100", "sm_90a");
  ASSERT_TRUE(g);
  EXPECT_NE(g->find("it needs sm_100 or later"), std::string::npos);
}

TEST(TargetGate, AMinTargetThatIsNoTargetIsAGapOnEveryGpu) {
  for (const char* bad : {"sm_100x", "sm100a", "", "sm_99a"}) {
    auto g = target_gap(bad, "sm_100a");
    ASSERT_TRUE(g) << bad;
    EXPECT_NE(g->find("is not a target ptxas knows"), std::string::npos) << *g;
  }
}

TEST(TargetGate, AssemblesForTheGpuUnlessTheTaskNeedsAnotherTarget) {
  EXPECT_EQ(assemble_target("sm_80", "sm_90a"), "sm_90a");
  EXPECT_EQ(assemble_target("sm_100a", "sm_90a"), "sm_100a");
  EXPECT_EQ(assemble_target("sm_100a", "sm_100a"), "sm_100a");
  EXPECT_EQ(assemble_target("sm_100f", "sm_103a"), "sm_103a");
  EXPECT_EQ(assemble_target("sm_100x", "sm_90a"), "sm_90a") << "a bad min_target does not become ptxas's -arch";
}

// A fake GPU of compute capability major.minor that passes every verify job.
gpu::FakeWorker fake_gpu(int major, int minor) {
  gpu::FakeWorker w;
  w.answer = [major, minor](const gpu::Job& job) {
    gpu::Outcome o;
    if (job.kind == gpu::JobKind::device) {
      o.device = gpu::DeviceInfo{};
      o.device->name = "Fake GPU";
      o.device->cc_major = major;
      o.device->cc_minor = minor;
    } else if (job.kind == gpu::JobKind::verify || job.kind == gpu::JobKind::trivial) {
      gpu::VerifyReport v;
      gpu::CaseResult c;
      c.size_set = "one";
      c.pass = true;
      v.cases.push_back(c);
      o.verify = v;
    }
    return o;
  };
  return w;
}

class TargetGatePipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
    auto t = task::load_task(kRoot + "/tasks/level3/bgemm_tcgen05");
    ASSERT_TRUE(t) << t.error().message;
    task_ = *t;
  }
  task::Task task_;
};

TEST_F(TargetGatePipeline, AHopperGpuAssemblesABlackwellTaskAndDoesNotRunIt) {
  gpu::FakeWorker h200 = fake_gpu(9, 0);
  Pipeline p(h200);
  RunOptions opts;
  opts.time = false;
  RunRecord r = p.run(task_, task_.dir + "/solution.ptx", opts);
  EXPECT_EQ(r.arch, "sm_100a");
  EXPECT_EQ(r.find_stage(StageId::check)->status, StageStatus::passed);
  const StageResult* a = r.find_stage(StageId::assemble);
  EXPECT_EQ(a->status, StageStatus::passed) << a->summary;
  EXPECT_NE(a->summary.find("for sm_100a"), std::string::npos) << a->summary;
  const StageResult* v = r.find_stage(StageId::verify);
  EXPECT_EQ(v->status, StageStatus::skipped);
  EXPECT_EQ(v->summary,
            "NOT verified: the task needs sm_100a and this GPU is sm_90a: an 'a' target runs on that architecture only "
            "(checked and assembled for sm_100a)");
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.verdict(), v->summary);
  EXPECT_EQ(h200.last(gpu::JobKind::verify), nullptr) << "an sm_100a cubin never reaches an sm_90a GPU";
}

TEST_F(TargetGatePipeline, ABlackwellGpuGetsTheVerifyJob) {
  gpu::FakeWorker b200 = fake_gpu(10, 0);
  Pipeline p(b200);
  RunOptions opts;
  opts.time = false;
  RunRecord r = p.run(task_, task_.dir + "/solution.ptx", opts);
  EXPECT_EQ(r.arch, "sm_100a");
  EXPECT_EQ(r.find_stage(StageId::verify)->status, StageStatus::passed) << r.find_stage(StageId::verify)->summary;
  EXPECT_NE(b200.last(gpu::JobKind::verify), nullptr);
}

TEST_F(TargetGatePipeline, SuiteValidateSkipsItApartFromFailures) {
  gpu::FakeWorker h200 = fake_gpu(9, 0);
  Pipeline p(h200);
  TaskValidation v = validate_task(p, task_, /*time=*/false);
  EXPECT_EQ(v.status(), ValidationStatus::skipped);
  EXPECT_EQ(to_string(v.status()), "skipped");
  EXPECT_NE(v.target_gap.find("needs sm_100a and this GPU is sm_90a"), std::string::npos) << v.target_gap;
  // A solution that does not assemble for the task's target is a failure, not a skip.
  v.run.stage(StageId::assemble).status = StageStatus::failed;
  EXPECT_EQ(v.status(), ValidationStatus::failed);
}

TEST_F(TargetGatePipeline, SuiteListMarksTheTargetATaskNeeds) {
  std::string line = suite_list_line("level3/bgemm_tcgen05", task_);
  EXPECT_EQ(line.rfind("level3/bgemm_tcgen05", 0), 0u) << line;
  EXPECT_NE(line.find(" needs sm_100a "), std::string::npos) << line;
  EXPECT_NE(line.find("baseline cublaslt_matmul"), std::string::npos) << line;
  auto hopper = task::load_task(kRoot + "/tasks/level3/bgemm_wgmma_nt");
  ASSERT_TRUE(hopper);
  EXPECT_NE(suite_list_line("level3/bgemm_wgmma_nt", *hopper).find(" needs sm_90a "), std::string::npos);
}

}  // namespace
}  // namespace ptxforge::eval
