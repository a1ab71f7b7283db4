// The worker protocol and its failure handling, with fake workers (shell scripts) standing
// in for the GPU worker: a crash, a hang, garbage, an early exit, and a healthy one.
#include <gtest/gtest.h>

#include <cmath>

#include "testing/fake_worker.h"
#include "gpu/protocol.h"
#include "task/launch_spec.h"
#include "util/text.h"
#include "gpu/worker_client.h"

namespace ptxforge::gpu {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> fake(const std::string& script) { return {"/bin/sh", "-c", script}; }

Job a_job() {
  Job j;
  j.kind = JobKind::verify;
  j.task_dir = "tasks/level1/vector_add";
  j.seeds = 2;
  return j;
}

TEST(WorkerClient, HealthyWorkerStaysUpAcrossJobs) {
  WorkerClient w(fake(R"(while read l; do echo '{"failure":{"kind":"driver","message":"no GPU here"},"fatal":false}'; done)"));
  for (int i = 0; i < 3; ++i) {
    Outcome o = w.run(a_job(), 5s);
    ASSERT_TRUE(o.failure.has_value());
    EXPECT_EQ(o.failure->kind, FailureKind::driver);
    EXPECT_EQ(o.failure->message, "no GPU here");
  }
  EXPECT_EQ(w.starts(), 1);
}

TEST(WorkerClient, CrashBecomesAFailureAndTheNextJobGetsAFreshWorker) {
  WorkerClient w(fake("read l; echo 'about to die' >&2; kill -SEGV $$"));
  Outcome o = w.run(a_job(), 5s);
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, FailureKind::crash);
  EXPECT_NE(o.failure->message.find("signal 11"), std::string::npos) << o.failure->message;
  EXPECT_NE(o.failure->message.find("about to die"), std::string::npos) << "the worker's stderr is kept";
  o = w.run(a_job(), 5s);
  EXPECT_EQ(o.failure->kind, FailureKind::crash);
  EXPECT_EQ(w.starts(), 2);
}

TEST(WorkerClient, HangIsKilledAtTheDeadline) {
  WorkerClient w(fake("read l; sleep 60"));
  auto t0 = std::chrono::steady_clock::now();
  Outcome o = w.run(a_job(), 300ms);
  auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, FailureKind::timeout);
  EXPECT_LT(took, 5s);
  EXPECT_FALSE(w.running()) << "the hung worker was killed";
}

TEST(WorkerClient, GarbageIsAProtocolFailure) {
  WorkerClient w(fake("while read l; do echo 'Segmentation fault (core dumped) lol'; done"));
  Outcome o = w.run(a_job(), 5s);
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, FailureKind::protocol);
  EXPECT_NE(o.failure->message.find("Segmentation fault (core dumped) lol"), std::string::npos);
  EXPECT_FALSE(w.running()) << "a babbling worker is not trusted with the next job";
  WorkerClient empty(fake(R"(while read l; do echo '{}'; done)"));
  EXPECT_EQ(empty.run(a_job(), 5s).failure->kind, FailureKind::protocol);
}

TEST(WorkerClient, EarlyExitAndMissingProgram) {
  WorkerClient w(fake("exit 3"));
  Outcome o = w.run(a_job(), 5s);
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, FailureKind::crash);
  WorkerClient missing({"/nonexistent/ptxforge-worker"});
  o = missing.run(a_job(), 5s);
  ASSERT_TRUE(o.failure.has_value());
  EXPECT_EQ(o.failure->kind, FailureKind::crash);
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

TEST(Protocol, TheJobCarriesTheResolvedLaunchSpec) {
  auto spec = task::parse_launch_comments(
      "// @launch entry=k1 grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1) cluster=(2, 1, 1) smem=4 * 256 args=(a, part, n)\n"
      "// @launch entry=k2 grid=(1, 1, 1) block=(1024, 1, 1) args=(part, c)\n"
      "// @scratch name=part dtype=f32 count=ceil_div(n, 256)\n"
      "// @tensormap name=tm box=(64, 32) swizzle=128B\n",
      "k.ptx");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  Job j = a_job();
  j.kind = JobKind::time;
  j.launch = *spec;
  auto back = decode_job(encode_job(j));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kind, JobKind::time);
  ASSERT_EQ(back->launch.launches.size(), 2u);
  const task::Launch& l = back->launch.launches[0];
  EXPECT_EQ(l.entry, "k1");
  EXPECT_EQ(l.grid.text(), "(ceil_div(n, 256), 1, 1)");
  EXPECT_TRUE(l.has_cluster);
  EXPECT_FALSE(back->launch.launches[1].has_cluster);
  EXPECT_EQ(l.args, (std::vector<std::string>{"a", "part", "n"}));
  EXPECT_EQ(*l.smem.evaluate_int({}), 1024);
  EXPECT_EQ(*l.grid.evaluate({{"n", 1000}}), (std::array<int64_t, 3>{4, 1, 1})) << "the expressions evaluate as before";
  EXPECT_EQ(back->launch.launch_lines, (std::vector<int>{1, 2}));
  ASSERT_EQ(back->launch.scratch.size(), 1u);
  EXPECT_EQ(back->launch.scratch[0].dtype, task::DType::f32);
  EXPECT_EQ(back->launch.scratch[0].count.text(), "ceil_div(n, 256)");
  ASSERT_EQ(back->launch.tensor_maps.size(), 1u);
  EXPECT_EQ(back->launch.tensor_maps[0].swizzle, "128B");
  EXPECT_EQ(back->launch.tensor_maps[0].box.size(), 2u);
  EXPECT_EQ(encode_job(*back), encode_job(j)) << "the spec survives a round trip unchanged";
  EXPECT_EQ(encode_job(j).find("candidate_path"), std::string::npos) << "the worker never reads the PTX";

  EXPECT_FALSE(decode_job(R"({"op":"compile"})").ok()) << "an unknown job kind is refused";
  auto bad_expr = decode_job(R"J({"op":"verify","launch":{"launches":[{"entry":"k","grid":"(n+,1,1)","block":"1","smem":"0","args":[]}]}})J");
  EXPECT_FALSE(bad_expr.ok());
}

TEST(Protocol, KindsAreSpelledOnceBothWays) {
  for (auto k : {JobKind::verify, JobKind::time, JobKind::trivial, JobKind::device}) EXPECT_EQ(job_kind_from_string(to_string(k)), k);
  for (auto k : {FailureKind::spec, FailureKind::load, FailureKind::launch, FailureKind::fault, FailureKind::oom, FailureKind::library,
                 FailureKind::timeout, FailureKind::crash, FailureKind::protocol, FailureKind::driver})
    EXPECT_EQ(failure_kind_from_string(to_string(k)), k);
  EXPECT_EQ(to_string(JobKind::device), "device_info");
  EXPECT_FALSE(failure_kind_from_string("segfault").has_value());
  EXPECT_FALSE(decode_outcome(R"({"failure":{"kind":"segfault","message":"x"}})").ok()) << "an unknown failure kind is a protocol error";
}

TEST(Protocol, TheDeviceTravelsFromTheWorker) {
  Outcome o;
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.sms = 132;
  d.memory_bytes = size_t{150} << 30;
  d.driver_version = 13000;
  o.device = d;
  auto back = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->device.has_value());
  EXPECT_EQ(back->device->name, "NVIDIA H200");
  EXPECT_EQ(back->device->arch(), "sm_90a");
  EXPECT_EQ(back->device->memory_bytes, size_t{150} << 30);

  // The parent's question goes through the worker: a worker without a GPU says why.
  WorkerClient none(fake(R"(while read l; do echo '{"failure":{"kind":"driver","message":"no CUDA driver: cannot load libcuda.so.1"},"fatal":false}'; done)"));
  auto info = ask_device_info(none);
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.error().message.find("cannot load libcuda.so.1"), std::string::npos);
  FakeWorker gpu;
  gpu.answer = [&](const Job& job) {
    Outcome a;
    if (job.kind == JobKind::device) a.device = d;
    return a;
  };
  auto got = ask_device_info(gpu);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->sms, 132);
  ASSERT_EQ(gpu.jobs.size(), 1u);
  EXPECT_EQ(gpu.jobs[0].kind, JobKind::device);
}

TEST(Protocol, AHeldBackFailureKeepsItsFlag) {
  Outcome o;
  o.failure = Failure{FailureKind::fault, "illegal address", "size set 'odd', seed 1", true};
  auto back = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->failure->held_back);
  o.failure->held_back = false;
  EXPECT_EQ(encode_outcome(o).find("held_back"), std::string::npos) << "the usual failure keeps its shape";
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
