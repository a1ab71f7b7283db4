// The run's seed and the time stage's checked trials, against a scripted fake worker: the
// seed reaches every job and the record, a fresh one is drawn per run, a failed timed trial
// fails the time stage with its words, and verdicts name verify seeds by index only.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "eval/pipeline.h"
#include "testing/fake_worker.h"
#include "task/task_spec.h"
#include "util/paths.h"

namespace ptxforge::eval {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;

gpu::Outcome healthy(const gpu::Job& job) {
  gpu::Outcome o;
  if (job.kind == gpu::JobKind::device) {
    gpu::DeviceInfo d;
    d.name = "Fake GPU";
    d.cc_major = 8;
    o.device = d;
  } else if (job.kind == gpu::JobKind::verify) {
    gpu::VerifyReport v;
    gpu::CaseResult c;
    c.size_set = "small";
    c.seed = 0xDEADBEEFCAFEF00Dull;
    c.seed_index = 1;
    c.pass = true;
    v.cases.push_back(c);
    o.verify = v;
  } else if (job.kind == gpu::JobKind::time) {
    gpu::TimeReport t;
    gpu::SizeTiming st;
    st.size_set = "small";
    st.candidate.median_ms = 0.01;
    st.candidate.min_ms = 0.009;
    st.candidate.trials = 40;
    st.reference.median_ms = 0.02;
    st.reference.min_ms = 0.019;
    st.input_sets = 8;
    st.checked = {{5, 3, false, true, ""}, {12, 1, false, true, ""}, {33, 8, false, true, ""}, {40, 2, true, true, ""}};
    t.sizes.push_back(st);
    t.trials_pass = true;
    t.reverify_pass = true;
    o.time = t;
  }
  return o;
}

class TimingStage : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
    auto t = task::load_task(kRoot + "/tasks/level1/vector_add");
    ASSERT_TRUE(t.ok()) << t.error().message;
    task_ = *t;
  }
  const std::string solution_ = kRoot + "/tasks/level1/vector_add/solution.ptx";
  task::Task task_;
};

TEST_F(TimingStage, TheRunSeedReachesEveryJobAndTheRecord) {
  gpu::FakeWorker gpu;
  gpu.answer = healthy;
  Pipeline p(gpu);
  RunOptions opts;
  opts.seed = 18446744073709551557ull;
  RunRecord r = p.run(task_, solution_, opts);
  ASSERT_TRUE(r.passed) << render_report_text(r);
  EXPECT_EQ(r.seed, 18446744073709551557ull);
  ASSERT_NE(gpu.last(gpu::JobKind::verify), nullptr);
  ASSERT_NE(gpu.last(gpu::JobKind::time), nullptr);
  EXPECT_EQ(gpu.last(gpu::JobKind::verify)->seed, r.seed);
  EXPECT_EQ(gpu.last(gpu::JobKind::time)->seed, r.seed);
  EXPECT_TRUE(gpu.last(gpu::JobKind::time)->reset_globals);
  auto trivial = p.check_trivial_outputs(std::chrono::seconds(1));
  ASSERT_NE(gpu.last(gpu::JobKind::trivial), nullptr);
  EXPECT_EQ(gpu.last(gpu::JobKind::trivial)->seed, r.seed) << "the trivial check derives its inputs from the same seed";
  auto j = nlohmann::json::parse(render_report_json(r));
  EXPECT_EQ(j["seed"], "18446744073709551557") << "a string: 64 bits survive any JSON reader";
  EXPECT_EQ(j["verify"]["cases"][0]["seed"], "16045690984503111693");
  EXPECT_EQ(j["verify"]["cases"][0]["seed_index"], 1);
  EXPECT_EQ(j["time"]["sizes"][0]["input_sets"], 8);
  EXPECT_EQ(j["time"]["sizes"][0]["checked_trials"].size(), 4u);
  EXPECT_EQ(j["time"]["trials_pass"], true);
  std::string text = render_report_text(r);
  EXPECT_NE(text.find("arch sm_80  seed 18446744073709551557\n"), std::string::npos) << text;
  EXPECT_NE(text.find("library: no library baseline here"), std::string::npos) << "vector_add names no library: " << text;
  EXPECT_EQ(j["time"]["library"], "no library baseline here (the task names none)");
  EXPECT_NE(r.find_stage(StageId::time)->summary.find("8 input sets, 4 timed trials checked"), std::string::npos)
      << r.find_stage(StageId::time)->summary;
}

TEST_F(TimingStage, WithoutASeedEveryRunDrawsAFreshOne) {
  gpu::FakeWorker gpu;
  gpu.answer = healthy;
  Pipeline p(gpu);
  RunRecord a = p.run(task_, solution_, {});
  uint64_t first_job_seed = gpu.last(gpu::JobKind::verify)->seed;
  RunRecord b = p.run(task_, solution_, {});
  EXPECT_NE(a.seed, b.seed);
  EXPECT_EQ(first_job_seed, a.seed);
  EXPECT_EQ(gpu.last(gpu::JobKind::verify)->seed, b.seed);
}

TEST_F(TimingStage, AFailedTimedTrialFailsTheTimeStage) {
  const std::string problem =
      "timed trial 7 of 40 on size set 'small' (input set 3): 'c': 1021 of 1024 elements wrong, 1021 never written";
  gpu::FakeWorker gpu;
  gpu.answer = [&](const gpu::Job& job) {
    gpu::Outcome o = healthy(job);
    if (o.time) {
      o.time->trials_pass = false;
      o.time->trial_problem = problem;
      o.time->sizes[0].checked[1] = {7, 3, false, false, problem};
    }
    return o;
  };
  Pipeline p(gpu);
  RunRecord r = p.run(task_, solution_, {});
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.gpu_verified) << "verify passed; the kernel failed while timed";
  EXPECT_EQ(r.find_stage(StageId::time)->status, StageStatus::failed);
  EXPECT_EQ(r.verdict(), "FAILED at time: " + problem);
  EXPECT_EQ(r.verdict(Audience::model), "FAILED at time: " + problem) << "timing runs on shown sizes: nothing to hide";

  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = healthy(job);
    if (o.time) o.time->trials_pass = false;  // not said: the worker did not check
    return o;
  };
  EXPECT_EQ(p.run(task_, solution_, {}).find_stage(StageId::time)->status, StageStatus::failed);
}

TEST_F(TimingStage, NotesOfTheTimingBecomeFlags) {
  gpu::FakeWorker gpu;
  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = healthy(job);
    if (o.time) o.time->notes = {"the .global variable '$x' could not be restored between timed trials"};
    return o;
  };
  Pipeline p(gpu);
  RunRecord r = p.run(task_, solution_, {});
  EXPECT_TRUE(r.passed);
  ASSERT_EQ(r.flags.size(), 1u);
  EXPECT_NE(r.flags[0].find("could not be restored"), std::string::npos);
}

TEST_F(TimingStage, VerdictsNameAVerifySeedByIndexNotByValue) {
  gpu::FakeWorker gpu;
  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = healthy(job);
    if (o.verify) {
      auto& c = o.verify->cases[0];
      c.shown = false;
      c.size_set = "odd";
      c.seed_index = 2;
      c.pass = false;
      task::Comparison cmp;
      cmp.output = "c";
      cmp.count = 1000003;
      cmp.mismatches = 3;
      cmp.pass = false;
      c.outputs.push_back(cmp);
    }
    return o;
  };
  Pipeline p(gpu);
  RunRecord r = p.run(task_, solution_, {});
  EXPECT_EQ(r.verdict(), "FAILED at verify: size set 'odd' (held back), seed 2: 'c' has 3 of 1000003 elements wrong");
  // For a model, no count of a held-back case (eval/held_back.h).
  EXPECT_EQ(r.verdict(Audience::model), "FAILED at verify: a held-back size, seed 2: output 'c' is wrong");
  std::string text = render_report_text(r);
  EXPECT_EQ(text.find("16045690984503111693"), std::string::npos) << "the derived seed is in the JSON only";
}

}  // namespace
}  // namespace ptxforge::eval
