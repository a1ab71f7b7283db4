// The timing protocol on a GPU (ctest label gpu; skipped without a driver, ptxas or nvcc):
// the known-good solution passes every trial, each checked on the GPU (the cost is printed); kernels that carry state from one
// launch to the next are timed honestly, or caught by a checked timed trial when the
// .global restore is turned off. The executor runs in this process behind a JobRunner that
// can change the job, so the pipeline, its stages and its verdicts are the real ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include "eval/pipeline.h"
#include "worker/executor.h"
#include "worker/timing_plan.h"
#include "task/task_spec.h"
#include "util/paths.h"

namespace ptxforge {
namespace {

// The checkout: PTXFORGE_SOURCE_DIR in the environment (a binary built on another machine and
// run here, scripts/gpu-test's GPU_TEST_PREBUILT), else the folder it was built from.
const std::string kRoot = [] {
  const char* env = std::getenv("PTXFORGE_SOURCE_DIR");
  return std::string(env && *env ? env : PTXFORGE_SOURCE_DIR);
}();

class InProcessRunner : public gpu::JobRunner {
 public:
  explicit InProcessRunner(gpu::Executor& e) : e_(e) {}
  bool reset_globals = true;
  gpu::Outcome run(const gpu::Job& job, std::chrono::milliseconds) override {
    gpu::Job j = job;
    j.reset_globals = reset_globals;
    return e_.run(j);
  }

 private:
  gpu::Executor& e_;
};

class TimingOnGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = gpu::Executor::create();
    if (e) executor_ = e->release();
    else why_ = e.error().message;
  }
  static void TearDownTestSuite() {
    delete executor_;
    executor_ = nullptr;
  }
  void SetUp() override {
    if (!executor_) GTEST_SKIP() << "no GPU: " << why_;
    if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
    auto t = task::load_task(kRoot + "/tasks/level1/vector_add");
    ASSERT_TRUE(t.ok()) << t.error().message;
    task_ = *t;
  }
  eval::RunRecord run(const std::string& candidate, bool reset_globals = true, uint64_t seed = 12345) {
    InProcessRunner runner(*executor_);
    runner.reset_globals = reset_globals;
    eval::Pipeline p(runner);
    eval::RunOptions opts;
    opts.seed = seed;
    return p.run(task_, candidate, opts);
  }
  static double median_ms(const eval::RunRecord& r, const std::string& size_set) {
    if (r.time)
      for (auto& s : r.time->sizes)
        if (s.size_set == size_set) return s.candidate.median_ms;
    return 0;
  }
  static gpu::Executor* executor_;
  static std::string why_;
  task::Task task_;
};
gpu::Executor* TimingOnGpu::executor_ = nullptr;
std::string TimingOnGpu::why_;

TEST_F(TimingOnGpu, TheSolutionPassesEveryCheckedTrial) {
  eval::RunRecord r = run(kRoot + "/tasks/level1/vector_add/solution.ptx");
  ASSERT_TRUE(r.passed) << render_report_text(r);
  ASSERT_TRUE(r.time.has_value());
  EXPECT_TRUE(r.time->trials_pass);
  for (auto& s : r.time->sizes) {
    // 'small' (12 KiB a set) gets a set for every trial and warm-up run; 'large' (192 MiB a set)
    // rotates 5..8, drawn from the seed.
    bool fresh = s.input_sets == s.trial_cap + gpu::kWarmupRuns;
    if (s.size_set == "small") {
      EXPECT_TRUE(fresh) << s.input_sets << " sets for a cap of " << s.trial_cap;
    }
    if (s.size_set == "large") {
      EXPECT_GE(s.input_sets, 5) << s.size_set << ": 5..8 input sets, drawn from the seed";
      EXPECT_LE(s.input_sets, 8) << s.size_set;
    }
    std::set<int> seen;
    for (auto& c : s.checked) {
      if (fresh) {
        EXPECT_TRUE(seen.insert(c.input_set).second) << s.size_set << ": set " << c.input_set << " came round again";
      }
    }
    ASSERT_GE(s.candidate.trials, 5) << s.size_set;
    EXPECT_LE(s.candidate.trials, s.trial_cap) << s.size_set;
    ASSERT_EQ(s.checked.size(), static_cast<size_t>(s.candidate.trials)) << s.size_set << ": every trial checked";
    EXPECT_TRUE(s.checked.back().last);
    EXPECT_EQ(s.checked.back().trial, s.candidate.trials);
    for (auto& c : s.checked) {
      EXPECT_TRUE(c.pass) << s.size_set << ", trial " << c.trial << ": " << c.problem;
      EXPECT_GE(c.input_set, 1);
      EXPECT_LE(c.input_set, s.input_sets);
    }
    EXPECT_GT(s.reference.median_ms, 0) << s.size_set;
    EXPECT_GT(s.cost.candidate_s, 0) << s.size_set;
    EXPECT_GT(s.cost.compare_gpu_s, 0) << s.size_set << ": the comparisons ran on the GPU";
    std::cout << "[ cost     ] " << s.size_set << ": " << s.candidate.trials << " trials, candidate " << s.cost.candidate_s
              << " s (comparisons on the GPU " << s.cost.compare_gpu_s << " s), reference outputs "
              << s.cost.expected_s << " s, after-trial checks " << s.cost.check_s << " s, baselines "
              << s.cost.baselines_s << " s\n";
  }
  EXPECT_NE(r.find_stage(eval::StageId::time)->summary.find(" input sets"), std::string::npos)
      << r.find_stage(eval::StageId::time)->summary;
}

// The number of input sets and the trial cap change with the run's seed.
TEST_F(TimingOnGpu, TheSeedDrawsTheInputSetsAndTheTrialCap) {
  std::set<std::pair<int, int>> plans;
  for (uint64_t seed : {1, 2, 3, 4}) {
    eval::RunRecord r = run(kRoot + "/tasks/level1/vector_add/solution.ptx", true, seed);
    ASSERT_TRUE(r.passed) << render_report_text(r);
    plans.insert({r.time->sizes[0].input_sets, r.time->sizes[0].trial_cap});
  }
  EXPECT_GT(plans.size(), 1u) << "four seeds, one plan";
}

// The same seed gives the same inputs (the verify cases carry the same derived seeds); another
// seed gives others.
TEST_F(TimingOnGpu, TheSeedReproducesTheInputs) {
  auto seeds_of = [&](uint64_t seed) {
    InProcessRunner runner(*executor_);
    eval::Pipeline p(runner);
    eval::RunOptions opts;
    opts.seed = seed;
    opts.time = false;
    eval::RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", opts);
    std::vector<uint64_t> out;
    if (r.verify)
      for (auto& c : r.verify->cases) out.push_back(c.seed);
    return out;
  };
  auto a = seeds_of(7), b = seeds_of(7), c = seeds_of(8);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

// Returns at once when its output was not refreshed since its last launch. Poisoned before
// every trial, it computes every time: it passes, and it is not faster than the solution.
TEST_F(TimingOnGpu, AKernelThatSkipsWhenItsOutputIsWrittenIsTimedHonestly) {
  eval::RunRecord good = run(kRoot + "/tasks/level1/vector_add/solution.ptx");
  eval::RunRecord r = run(kRoot + "/tests/timing/skip_when_written.cu");
  ASSERT_EQ(r.find_stage(eval::StageId::verify)->status, eval::StageStatus::passed) << render_report_text(r);
  ASSERT_EQ(r.find_stage(eval::StageId::time)->status, eval::StageStatus::passed) << render_report_text(r);
  double honest = median_ms(good, "large"), cheat = median_ms(r, "large");
  ASSERT_GT(honest, 0);
  EXPECT_GT(cheat, 0.5 * honest) << "skipping after the first trial would make it ~10x faster than the solution";
}

// Counts its launches in a function-scope .global and stops computing after 23 (more than the verify job's launches). With the
// .global variables restored before every trial it computes every time; without the restore,
// a checked timed trial finds its outputs never written and the time stage fails.
TEST_F(TimingOnGpu, AKernelWithStateInAGlobalIsCaughtByACheckedTimedTrial) {
  eval::RunRecord caught = run(kRoot + "/tests/timing/launch_counter.ptx", /*reset_globals=*/false);
  EXPECT_EQ(caught.find_stage(eval::StageId::verify)->status, eval::StageStatus::passed)
      << "15 launches in verify: it computes on all of them\n"
      << render_report_text(caught);
  const eval::StageResult* t = caught.find_stage(eval::StageId::time);
  EXPECT_EQ(t->status, eval::StageStatus::failed) << render_report_text(caught);
  EXPECT_NE(t->summary.find("timed trial "), std::string::npos) << t->summary;
  EXPECT_NE(t->summary.find("never written"), std::string::npos) << t->summary;
  EXPECT_FALSE(caught.passed);
  EXPECT_EQ(caught.verdict().rfind("FAILED at time: timed trial ", 0), 0u) << caught.verdict();

  eval::RunRecord good = run(kRoot + "/tasks/level1/vector_add/solution.ptx");
  eval::RunRecord honest = run(kRoot + "/tests/timing/launch_counter.ptx", /*reset_globals=*/true);
  EXPECT_TRUE(honest.passed) << "restored before every trial, the counter never passes 1\n"
                             << render_report_text(honest);
  EXPECT_TRUE(honest.flags.empty()) << "its .global was found and restored: "
                                    << (honest.flags.empty() ? "" : honest.flags[0]);
  EXPECT_GT(median_ms(honest, "large"), 0.5 * median_ms(good, "large"));
}

}  // namespace
}  // namespace ptxforge
