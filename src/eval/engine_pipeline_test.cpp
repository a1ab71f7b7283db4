// The pipeline's choice of engine (--device) and its engine path, with two fake runners: one
// for the GPU worker, one for the CPU engine. What is asserted is what the design promises
// (docs/emu.md, section 1): cpu always takes the engine, gpu never does, auto does only where
// the GPU worker answers "no driver"; on the engine, verify sends PTX and the CPU size sets,
// time never gives a number, and the record says who verified.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "eval/engine_path.h"
#include "eval/pipeline.h"
#include "eval/record_json.h"
#include "task/task_spec.h"
#include "testing/fake_worker.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;

// A verify answer: every size set the job names (or `sets`), one seed each, all passing.
gpu::Outcome passing(const gpu::Job& job, gpu::Engine engine) {
  gpu::Outcome o;
  gpu::VerifyReport v;
  v.engine = engine;
  for (auto& s : job.size_sets.empty() ? std::vector<std::string>{"small"} : job.size_sets) {
    gpu::CaseResult c;
    c.size_set = s;
    c.seed_index = 1;
    c.pass = true;
    v.cases.push_back(c);
  }
  o.verify = v;
  return o;
}

gpu::DeviceInfo an_h200() {
  gpu::DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  return d;
}

class EnginePipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = task::load_task(kRoot + "/tasks/level1/vector_add");
    ASSERT_TRUE(t.ok()) << t.error().message;
    task_ = *t;
    // The engine: a pass for verify, "not timed" for time, as the emu-worker answers.
    engine_.answer = [](const gpu::Job& job) {
      if (job.kind == gpu::JobKind::verify) return passing(job, gpu::Engine::cpu);
      gpu::Outcome o;
      o.failure = gpu::Failure{gpu::FailureKind::unsupported, "not timed: CPU engine", ""};
      return o;
    };
    opts_.seed = 1;
    opts_.seeds = 1;
  }
  RunRecord run(Pipeline& p) { return p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", opts_); }
  size_t verify_jobs(const gpu::FakeWorker& w) {
    return std::count_if(w.jobs.begin(), w.jobs.end(), [](const gpu::Job& j) { return j.kind == gpu::JobKind::verify; });
  }
  task::Task task_;
  gpu::FakeWorker gpu_, engine_;  // gpu_ answers as a machine without a driver unless told otherwise
  RunOptions opts_;
};

TEST_F(EnginePipeline, DeviceCpuVerifiesOnTheEngineAndNeverTimes) {
  opts_.device = Device::cpu;
  Pipeline p(gpu_, engine_);
  RunRecord r = run(p);
  EXPECT_TRUE(gpu_.jobs.empty()) << "--device cpu never asks the GPU worker anything";
  ASSERT_EQ(verify_jobs(engine_), 1u);
  const gpu::Job& job = *engine_.last(gpu::JobKind::verify);
  EXPECT_EQ(job.candidate_ptx, kRoot + "/tasks/level1/vector_add/solution.ptx");
  EXPECT_FALSE(job.reference_ptx.empty());
  auto ref = read_file(job.reference_ptx);
  ASSERT_TRUE(ref.ok());
  EXPECT_NE(ref->find(".entry vector_add_ref"), std::string::npos) << "the reference kernel, as PTX";
  EXPECT_EQ(job.size_sets, cpu_size_sets(task_, true));
  EXPECT_FALSE(job.size_sets.empty());
  EXPECT_EQ(r.find_stage(StageId::verify)->status, StageStatus::passed) << r.find_stage(StageId::verify)->summary;
  EXPECT_NE(r.find_stage(StageId::verify)->summary.find("on the CPU engine"), std::string::npos);
  EXPECT_EQ(r.find_stage(StageId::time)->status, StageStatus::skipped);
  EXPECT_EQ(r.find_stage(StageId::time)->summary, "not timed: CPU engine");
  EXPECT_EQ(engine_.last(gpu::JobKind::time), nullptr) << "the time stage sends nothing";
  EXPECT_FALSE(r.time.has_value());
  EXPECT_EQ(r.verified_by, VerifiedBy::cpu_engine);
  EXPECT_FALSE(r.gpu_verified) << "gpu_verified stays what it says";
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.verdict(), "passed (verified on the CPU engine)");
  EXPECT_NE(render_report_text(r).find("verified on the CPU engine"), std::string::npos);
  auto j = nlohmann::json::parse(render_report_json(r));
  EXPECT_EQ(j["verified_by"], "cpu_engine");
  EXPECT_EQ(j["gpu_verified"], false);
  auto back = record_from_json(render_report_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->verified_by, VerifiedBy::cpu_engine);
}

TEST_F(EnginePipeline, AutoTakesTheEngineWhenTheGpuWorkerSaysNoDriver) {
  Pipeline p(gpu_, engine_);  // gpu_ answers every job with FailureKind::driver
  RunRecord r = run(p);
  EXPECT_EQ(verify_jobs(gpu_), 0u);
  EXPECT_EQ(verify_jobs(engine_), 1u);
  EXPECT_EQ(r.verified_by, VerifiedBy::cpu_engine);
  // The GPU worker is asked once per pipeline, not once per run.
  RunRecord again = run(p);
  EXPECT_EQ(again.verified_by, VerifiedBy::cpu_engine);
  EXPECT_EQ(std::count_if(gpu_.jobs.begin(), gpu_.jobs.end(), [](auto& j) { return j.kind == gpu::JobKind::device; }), 1);
}

TEST_F(EnginePipeline, AutoWithAGpuNeverTouchesTheEngine) {
  gpu_.answer = [](const gpu::Job& job) {
    gpu::Outcome o;
    if (job.kind == gpu::JobKind::device) o.device = an_h200();
    else if (job.kind == gpu::JobKind::verify) o = passing(job, gpu::Engine::gpu);
    else o.failure = gpu::Failure{gpu::FailureKind::fault, "not scripted", ""};
    return o;
  };
  if (!find_cuda_tool("nvcc") || !find_cuda_tool("ptxas")) GTEST_SKIP() << "the GPU path builds a cubin: needs nvcc and ptxas";
  opts_.time = false;
  Pipeline p(gpu_, engine_);
  RunRecord r = run(p);
  EXPECT_TRUE(engine_.jobs.empty());
  EXPECT_EQ(verify_jobs(gpu_), 1u);
  EXPECT_TRUE(gpu_.last(gpu::JobKind::verify)->candidate_ptx.empty()) << "the GPU gets cubins";
  EXPECT_EQ(r.verified_by, VerifiedBy::gpu);
  EXPECT_TRUE(r.gpu_verified);
}

TEST_F(EnginePipeline, DeviceGpuWithoutAGpuIsNotVerifiedAndNeverTheEngine) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "the GPU path assembles first: needs ptxas";
  opts_.device = Device::gpu;
  Pipeline p(gpu_, engine_);
  RunRecord r = run(p);
  EXPECT_TRUE(engine_.jobs.empty());
  EXPECT_EQ(r.find_stage(StageId::verify)->status, StageStatus::skipped);
  EXPECT_EQ(r.verified_by, VerifiedBy::none);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.verdict().rfind("NOT verified on a GPU", 0), 0u) << r.verdict();
}

TEST_F(EnginePipeline, AKernelTheEngineDoesNotRunIsNotVerifiedNeverFailed) {
  opts_.device = Device::cpu;
  engine_.answer = [](const gpu::Job&) {
    gpu::Outcome o;
    o.failure = gpu::Failure{gpu::FailureKind::unsupported, "not supported by the CPU engine: wgmma.mma_async at k.ptx:88", ""};
    return o;
  };
  Pipeline p(gpu_, engine_);
  RunRecord r = run(p);
  EXPECT_EQ(r.find_stage(StageId::verify)->status, StageStatus::skipped);
  EXPECT_EQ(r.find_stage(StageId::verify)->summary, "NOT verified: not supported by the CPU engine: wgmma.mma_async at k.ptx:88");
  EXPECT_EQ(r.find_stage(StageId::time)->status, StageStatus::not_run);
  EXPECT_EQ(r.verified_by, VerifiedBy::none);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.verdict(), "NOT verified: not supported by the CPU engine: wgmma.mma_async at k.ptx:88");
}

TEST_F(EnginePipeline, AFindingFailsVerifyWithItsCheckId) {
  opts_.device = Device::cpu;
  engine_.answer = [](const gpu::Job&) {
    gpu::Outcome o;
    gpu::Failure f{gpu::FailureKind::race, "solution.ptx:31:5: write of 4 bytes races with a read (thread (6,0,0) of CTA (3,0,0))",
                   "size set 'small', seed 1"};
    f.finding = gpu::EmuFinding{"emu-race", 31, 5, gpu::EmuThread{{3, 0, 0}, {6, 0, 0}}, "c", 24, std::nullopt};
    o.failure = f;
    return o;
  };
  Pipeline p(gpu_, engine_);
  RunRecord r = run(p);
  const StageResult* v = r.find_stage(StageId::verify);
  EXPECT_EQ(v->status, StageStatus::failed);
  EXPECT_EQ(v->summary,
            "race: solution.ptx:31:5: write of 4 bytes races with a read (thread (6,0,0) of CTA (3,0,0)) [emu-race] "
            "(size set 'small', seed 1)");
  EXPECT_EQ(r.verified_by, VerifiedBy::none);
  EXPECT_FALSE(r.passed);
}

TEST_F(EnginePipeline, WithoutAnEngineDeviceCpuIsNotVerified) {
  opts_.device = Device::cpu;
  Pipeline p(gpu_);  // a runner alone: no engine was given
  RunRecord r = run(p);
  EXPECT_EQ(r.find_stage(StageId::verify)->status, StageStatus::skipped);
  EXPECT_EQ(r.find_stage(StageId::verify)->summary, "NOT verified: no CPU engine in this pipeline");
  EXPECT_FALSE(r.passed);
  // auto on the same: today's "NOT verified on a GPU", never an engine it does not have.
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "the GPU path assembles first: needs ptxas";
  opts_.device = Device::automatic;
  RunRecord a = run(p);
  EXPECT_EQ(a.verdict().rfind("NOT verified on a GPU", 0), 0u) << a.verdict();
}

TEST_F(EnginePipeline, APassMissingASizeSetIsNoPass) {
  opts_.device = Device::cpu;
  engine_.answer = [](const gpu::Job& job) {
    gpu::Job fewer = job;
    fewer.size_sets.resize(1);  // every case passes, but only the first set ran
    return passing(fewer, gpu::Engine::cpu);
  };
  ASSERT_GE(cpu_size_sets(task_, true).size(), 2u);
  Pipeline p(gpu_, engine_);
  RunRecord r = run(p);
  EXPECT_EQ(r.find_stage(StageId::verify)->status, StageStatus::failed);
  EXPECT_EQ(r.find_stage(StageId::verify)->summary,
            "the CPU engine returned no case for size set '" + cpu_size_sets(task_, true)[1] + "'");
  EXPECT_EQ(r.verified_by, VerifiedBy::none);
  EXPECT_FALSE(r.passed);
}

TEST_F(EnginePipeline, TrivialOutputsGoToTheEngineThatVerified) {
  opts_.device = Device::cpu;
  Pipeline p(gpu_, engine_);
  RunRecord r = run(p);
  ASSERT_EQ(r.verified_by, VerifiedBy::cpu_engine);
  (void)p.check_trivial_outputs(std::chrono::seconds(5));
  ASSERT_NE(engine_.last(gpu::JobKind::trivial), nullptr);
  EXPECT_EQ(engine_.last(gpu::JobKind::trivial)->size_sets, cpu_size_sets(task_, true));
  EXPECT_EQ(gpu_.last(gpu::JobKind::trivial), nullptr);
}

}  // namespace
}  // namespace ptxforge::eval
