// The worker protocol and its failure handling, with fake workers (shell scripts) standing
// in for the GPU worker: a crash, a hang, garbage, an early exit, and a healthy one.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/protocol.h"
#include "gpu/worker.h"

namespace ptxforge::gpu {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> fake(const std::string& script) { return {"/bin/sh", "-c", script}; }

Job a_job() {
  Job j;
  j.op = "verify";
  j.task_dir = "tasks/level1/vector_add";
  j.seeds = 2;
  return j;
}

TEST(WorkerClient, HealthyWorkerStaysUpAcrossJobs) {
  WorkerClient w(fake(R"(while read l; do echo '{"failure":{"kind":"driver","message":"no GPU here"},"fatal":false}'; done)"));
  for (int i = 0; i < 3; ++i) {
    Outcome o = w.run(a_job(), 5s);
    ASSERT_TRUE(o.failure.has_value());
    EXPECT_EQ(o.failure->kind, "driver");
    EXPECT_EQ(o.failure->message, "no GPU here");
  }
  EXPECT_EQ(w.starts(), 1);
}

TEST(WorkerClient, CrashBecomesAFailureAndTheNextJobGetsAFreshWorker) {
  WorkerClient w(fake("read l; echo 'about to die' >&2; kill -SEGV $$"));
  Outcome o = w.run(a_job(), 5s);
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, "crash");
  EXPECT_NE(o.failure->message.find("signal 11"), std::string::npos) << o.failure->message;
  EXPECT_NE(o.failure->message.find("about to die"), std::string::npos) << "the worker's stderr is kept";
  o = w.run(a_job(), 5s);
  EXPECT_EQ(o.failure->kind, "crash");
  EXPECT_EQ(w.starts(), 2);
}

TEST(WorkerClient, HangIsKilledAtTheDeadline) {
  WorkerClient w(fake("read l; sleep 60"));
  auto t0 = std::chrono::steady_clock::now();
  Outcome o = w.run(a_job(), 300ms);
  auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, "timeout");
  EXPECT_LT(took, 5s);
  EXPECT_FALSE(w.running()) << "the hung worker was killed";
}

TEST(WorkerClient, GarbageIsAProtocolFailure) {
  WorkerClient w(fake("while read l; do echo 'Segmentation fault (core dumped) lol'; done"));
  Outcome o = w.run(a_job(), 5s);
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, "protocol");
  EXPECT_NE(o.failure->message.find("Segmentation fault (core dumped) lol"), std::string::npos);
  EXPECT_FALSE(w.running()) << "a babbling worker is not trusted with the next job";
  WorkerClient empty(fake(R"(while read l; do echo '{}'; done)"));
  EXPECT_EQ(empty.run(a_job(), 5s).failure->kind, "protocol");
}

TEST(WorkerClient, EarlyExitAndMissingProgram) {
  WorkerClient w(fake("exit 3"));
  Outcome o = w.run(a_job(), 5s);
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, "crash");
  WorkerClient missing({"/nonexistent/ptxforge-worker"});
  o = missing.run(a_job(), 5s);
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, "crash");
  EXPECT_NE(o.failure->message.find("code 127"), std::string::npos) << o.failure->message;
}

TEST(Protocol, JobsAndOutcomesRoundTrip) {
  Job j = a_job();
  j.budget_s = 2.5;
  auto back = decode_job(encode_job(j));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->task_dir, j.task_dir);
  EXPECT_EQ(back->seeds, 2);
  EXPECT_DOUBLE_EQ(back->budget_s, 2.5);
  EXPECT_FALSE(decode_job("{").ok());

  Outcome o;
  VerifyReport v;
  CaseResult c;
  c.size_set = "odd";
  c.shown = false;
  c.seed = 3;
  task::Comparison cmp;
  cmp.output = "y";
  cmp.count = 10;
  cmp.mismatches = 1;
  cmp.first.push_back({4, 1.5, NAN});
  cmp.max_abs_error = INFINITY;
  c.outputs.push_back(cmp);
  c.problems.push_back("input 'a' was modified");
  v.cases.push_back(c);
  o.verify = v;
  auto d = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_EQ(d->verify->cases.size(), 1u);
  const auto& rc = d->verify->cases[0];
  EXPECT_EQ(rc.size_set, "odd");
  EXPECT_FALSE(rc.shown);
  EXPECT_TRUE(std::isnan(rc.outputs[0].first[0].actual));
  EXPECT_TRUE(std::isinf(rc.outputs[0].max_abs_error));
  EXPECT_EQ(rc.problems[0], "input 'a' was modified");
}

TEST(TimingStats, Summary) {
  TimingStats s = summarize({4, 1, 3, 2});
  EXPECT_EQ(s.trials, 4);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.mean_ms, 2.5);
  EXPECT_NEAR(s.stdev_ms, 1.2909944, 1e-6);
}

}  // namespace
}  // namespace ptxforge::gpu
