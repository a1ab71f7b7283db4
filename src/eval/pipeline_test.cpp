// The stage pipeline without a GPU: a fake worker stands in for the GPU worker (a shell
// script for the process path, gpu::FakeWorker for scripted answers), so the stage table,
// its early stops, the jobs it sends and its verdicts are tested in CI.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eval/pipeline.h"
#include "testing/fake_worker.h"
#include "task/task_spec.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = PTXFORGE_SOURCE_DIR;

std::vector<std::string> no_gpu_worker() {
  return {"/bin/sh", "-c", R"(while read l; do echo '{"failure":{"kind":"driver","message":"no CUDA driver"},"fatal":false}'; done)"};
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
    auto t = task::load_task(kRoot + "/tasks/level1/vector_add");
    ASSERT_TRUE(t.ok()) << t.error().message;
    task_ = *t;
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = ::testing::TempDir() + "/" + name;
    EXPECT_TRUE(write_file(path, text).ok());
    return path;
  }
  task::Task task_;
};

TEST_F(PipelineTest, WithoutAGpuTheVerdictSaysNotVerified) {
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", {});
  EXPECT_EQ(r.find_stage(StageId::check)->status, StageStatus::passed);
  EXPECT_EQ(r.find_stage(StageId::assemble)->status, StageStatus::passed);
  EXPECT_EQ(r.find_stage(StageId::verify)->status, StageStatus::skipped);
  EXPECT_FALSE(r.passed);
  EXPECT_FALSE(r.gpu_verified);
  EXPECT_EQ(r.verdict().rfind("NOT verified on a GPU", 0), 0u) << r.verdict();
  EXPECT_NE(render_report_json(r).find("\"gpu_verified\": false"), std::string::npos);
}

TEST_F(PipelineTest, FrontEndErrorsStopTheFlowWithDiagnostics) {
  std::string text = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  text.replace(text.find("add.f32 %z, %x, %y;"), 19, "add.f32 %z, %x, %w;");
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, write("broken.ptx", text), {});
  EXPECT_EQ(r.find_stage(StageId::check)->status, StageStatus::failed);
  EXPECT_EQ(r.find_stage(StageId::assemble)->status, StageStatus::not_run);
  ASSERT_FALSE(r.diagnostics.list().empty());
  EXPECT_EQ(r.diagnostics.list()[0].check_id, "undeclared-reg");
  EXPECT_NE(render_report_text(r).find("error: register '%w' is not declared"), std::string::npos) << render_report_text(r);
  auto j = nlohmann::json::parse(render_report_json(r));
  ASSERT_FALSE(j["diagnostics"]["diagnostics"].empty());
  for (auto& d : j["diagnostics"]["diagnostics"])
    EXPECT_EQ(d.value("file", ""), j["diagnostics"]["file"].get<std::string>()) << "every diagnostic names its file, as check --format json";
  EXPECT_EQ(r.verdict().rfind("FAILED at check", 0), 0u);
}

TEST_F(PipelineTest, LaunchSpecProblemsAreCheckFailures) {
  std::string text = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  std::string no_spec;
  for (auto line : split(text, '\n'))
    if (!starts_with(line, "// @launch")) no_spec += std::string(line) + "\n";
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, write("nospec.ptx", no_spec), {});
  EXPECT_EQ(r.find_stage(StageId::check)->status, StageStatus::failed);
  EXPECT_NE(r.find_stage(StageId::check)->summary.find("no launch spec"), std::string::npos);
  RunRecord r2 = p.run(task_, write("badsym.ptx", "// @launch grid=(ceil_div(m,256),1,1) block=(256,1,1) args=(a, b)\n" + no_spec), {});
  EXPECT_NE(r2.find_stage(StageId::check)->summary.find("takes 4 parameters, the launch passes 2"), std::string::npos)
      << r2.find_stage(StageId::check)->summary;
}

TEST_F(PipelineTest, PtxasErrorsStopAtAssemble) {
  std::string text = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  // Well-formed, but more static shared memory than any GPU has: ptxas rejects it.
  text.replace(text.find(".visible .entry vector_add("), 0,
               ".visible .entry big() { .shared .b32 s[200000]; .reg .b32 %v; ld.shared.b32 %v, [s]; st.shared.b32 [s+4], %v; ret; }\n");
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, write("toolarge.ptx", text), {});
  if (r.find_stage(StageId::check)->status == StageStatus::failed) GTEST_SKIP() << "the front end caught it first";
  EXPECT_EQ(r.find_stage(StageId::assemble)->status, StageStatus::failed) << render_report_text(r);
}

// ptxforge's policy limits (eval/limits.h) at the start of assemble: the front end accepts
// the module, ptxas never sees it, and nothing after assemble runs.
TEST_F(PipelineTest, AModuleOverALimitFailsAssembleWithoutRunningPtxas) {
  std::string text = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  // As written, ptxas spends about 11 s and 270 MB making a 64 MiB cubin of it.
  size_t at = text.find(".visible .entry vector_add(");
  text.insert(at, ".global .align 67108864 .b8 pad = 1;\n");
  uint32_t line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  gpu::FakeWorker gpu;
  Pipeline p(gpu);
  auto t0 = std::chrono::steady_clock::now();
  RunRecord r = p.run(task_, write("huge_align.ptx", text), {});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.find_stage(StageId::check)->status, StageStatus::passed) << "policy limits are not front-end errors";
  const StageResult* a = r.find_stage(StageId::assemble);
  EXPECT_EQ(a->status, StageStatus::failed);
  EXPECT_NE(a->summary.find(fmt::format("huge_align.ptx:{}: variable 'pad' asks for .align 67108864", line)), std::string::npos)
      << a->summary;
  EXPECT_NE(a->summary.find("[limit-align]"), std::string::npos) << a->summary;
  EXPECT_NE(a->summary.find("not assembled"), std::string::npos) << a->summary;
  bool listed = false;
  for (auto& d : r.diagnostics.list()) listed = listed || (d.check_id == "limit-align" && d.loc.line == line);
  EXPECT_TRUE(listed) << "the finding is a diagnostic on the candidate's line, for the feedback";
  EXPECT_TRUE(r.resources.empty()) << "ptxas did not run";
  EXPECT_LT(seconds, 8.0) << "ptxas did not run (it takes about 11 s on this module)";
  EXPECT_EQ(r.find_stage(StageId::prove)->status, StageStatus::not_run) << "nothing runs on a module over a limit";
  EXPECT_EQ(gpu.last(gpu::JobKind::verify), nullptr);
  EXPECT_FALSE(r.passed);
}

TEST_F(PipelineTest, TheDeviceAllocatorNeedsADeviceHeapInTheTask) {
  std::string text = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  text.insert(text.find(".visible .entry vector_add("),
              ".extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);\n");
  std::string path = write("heap.ptx", text);
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, path, {});
  EXPECT_EQ(r.find_stage(StageId::check)->status, StageStatus::passed);
  const StageResult* a = r.find_stage(StageId::assemble);
  EXPECT_EQ(a->status, StageStatus::failed);
  EXPECT_NE(a->summary.find("'malloc' is the device allocator, and this task grants no device heap"), std::string::npos)
      << a->summary;
  EXPECT_NE(a->summary.find("[device-heap]"), std::string::npos) << a->summary;
  task::Task granted = task_;
  granted.device_heap_bytes = 1 << 20;
  r = p.run(granted, path, {});
  EXPECT_EQ(r.find_stage(StageId::assemble)->status, StageStatus::passed) << r.find_stage(StageId::assemble)->summary;
}

// A worker on a GPU that says sm_80, passes every case it is sent and times them.
gpu::Outcome healthy_gpu(const gpu::Job& job) {
  gpu::Outcome o;
  if (job.kind == gpu::JobKind::device) {
    gpu::DeviceInfo d;
    d.name = "Fake GPU";
    d.cc_major = 8;
    o.device = d;
  } else if (job.kind == gpu::JobKind::verify) {
    gpu::VerifyReport v;
    for (auto [set, shown] : {std::pair{"small", true}, std::pair{"odd", false}}) {
      gpu::CaseResult c;
      c.size_set = set;
      c.shown = shown;
      c.seed = 0x5EED;
      c.seed_index = 1;
      c.pass = true;
      v.cases.push_back(c);
    }
    o.verify = v;
  } else if (job.kind == gpu::JobKind::time) {
    gpu::TimeReport t;
    gpu::SizeTiming st;
    st.size_set = "small";
    st.candidate.min_ms = 0.009;
    st.candidate.median_ms = 0.01;
    st.reference.median_ms = 0.02;
    t.sizes.push_back(st);
    t.trials_pass = true;
    t.reverify_pass = true;
    o.time = t;
  }
  return o;
}

// An H200-like GPU with measured peaks; its time job times 'large' (201 MB moved) at the
// given fastest and median trial, with a library that takes `library_ms`.
std::function<gpu::Outcome(const gpu::Job&)> gpu_timing_large(double fastest_ms, double median_ms, double library_ms = 0) {
  return [=](const gpu::Job& job) {
    gpu::Outcome o = healthy_gpu(job);
    if (job.kind == gpu::JobKind::device) {
      o.device->cc_major = 9;
      o.device->sms = 132;
      o.device->clock_khz = 1980000;
      o.device->driver_version = 13000;
    } else if (job.kind == gpu::JobKind::peaks) {
      gpu::DevicePeaks p;
      p.copy_bytes_per_s = 4.0e12;
      p.read_bytes_per_s = 4.2e12;
      p.fma_flops_per_s = 6.0e13;
      o.peaks = p;
    } else if (job.kind == gpu::JobKind::time) {
      o.time->sizes[0].size_set = "large";
      o.time->sizes[0].candidate.min_ms = fastest_ms;
      o.time->sizes[0].candidate.median_ms = median_ms;
      o.time->sizes[0].candidate.trials = 100;
      if (library_ms > 0) {
        o.time->sizes[0].library = gpu::TimingStats{100, library_ms, library_ms, library_ms, 0};
        o.time->sizes[0].library_name = "a library";
      }
    }
    return o;
  };
}

class TimeGateTest : public PipelineTest {
 protected:
  void SetUp() override {
    PipelineTest::SetUp();
    cache_ = ::testing::TempDir() + "/peaks-cache-" + std::to_string(::getpid());
    fs::remove_all(cache_);
  }
  RunRecord run(gpu::FakeWorker& gpu, bool allow = false) {
    Pipeline p(gpu);
    p.set_peaks_cache_dir(cache_);
    RunOptions opts;
    opts.allow_suspicious = allow;
    return p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", opts);
  }
  std::string cache_;
};

TEST_F(TimeGateTest, AFastestTrialBeyondTheMemoryPeakFailsTheTimeStage) {
  // 201 MB in 0.01 ms is 20 TB/s; the median (0.05 ms, 4.0 TB/s) alone would look possible.
  gpu::FakeWorker gpu;
  gpu.answer = gpu_timing_large(0.01, 0.05);
  RunRecord r = run(gpu);
  const StageResult* t = r.find_stage(StageId::time);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->status, StageStatus::failed) << t->summary;
  EXPECT_NE(t->summary.find("impossible time on 'large'"), std::string::npos) << t->summary;
  EXPECT_NE(t->summary.find("faster than this GPU can move 201.3 MB: 20.1 TB/s > 4.2 TB/s peak"), std::string::npos) << t->summary;
  EXPECT_FALSE(r.passed);
  ASSERT_TRUE(r.limits.has_value());
  ASSERT_EQ(r.limits->rows.size(), 1u);
  EXPECT_FALSE(r.limits->rows[0].pass);
  auto j = nlohmann::json::parse(render_report_json(r));
  EXPECT_EQ(j["physical_limits"]["sizes"][0]["pass"], false);
  EXPECT_DOUBLE_EQ(j["physical_limits"]["peak_bytes_per_s"].get<double>(), 4.2e12) << "the better of copy and read";
  // The peaks were measured once by the worker and cached for the next pipeline.
  ASSERT_NE(gpu.last(gpu::JobKind::peaks), nullptr);
  gpu::FakeWorker again;
  again.answer = gpu_timing_large(0.01, 0.05);
  run(again);
  EXPECT_EQ(again.last(gpu::JobKind::peaks), nullptr) << "the second pipeline reads the cache";
}

TEST_F(TimeGateTest, AllowSuspiciousTurnsTheFailureIntoAFlag) {
  gpu::FakeWorker gpu;
  gpu.answer = gpu_timing_large(0.01, 0.05);
  RunRecord r = run(gpu, /*allow=*/true);
  EXPECT_EQ(r.find_stage(StageId::time)->status, StageStatus::passed);
  ASSERT_EQ(r.flags.size(), 1u);
  EXPECT_NE(r.flags[0].find("let through by --allow-suspicious"), std::string::npos);
  EXPECT_TRUE(r.passed);
}

TEST_F(TimeGateTest, APossibleTimePassesAndIsRecorded) {
  gpu::FakeWorker gpu;
  gpu.answer = gpu_timing_large(0.05, 0.055);  // 4.0 TB/s: below the 4.2 TB/s peak
  RunRecord r = run(gpu);
  EXPECT_EQ(r.find_stage(StageId::time)->status, StageStatus::passed) << r.find_stage(StageId::time)->summary;
  EXPECT_TRUE(r.flags.empty());
  ASSERT_TRUE(r.limits.has_value());
  EXPECT_NEAR(r.limits->rows[0].bytes_per_s, 12.0 * 16777216 / 0.05e-3, 1e3);
  EXPECT_NE(render_report_text(r).find("physical limits"), std::string::npos);
}

TEST_F(TimeGateTest, MoreThanTenTimesTheLibraryFailsUnlessAllowed) {
  gpu::FakeWorker gpu;
  gpu.answer = gpu_timing_large(0.05, 0.06, /*library_ms=*/0.9);  // 15x the library
  RunRecord r = run(gpu);
  EXPECT_EQ(r.find_stage(StageId::time)->status, StageStatus::failed);
  EXPECT_NE(r.find_stage(StageId::time)->summary.find("suspicious: 15.0x faster than a library on 'large'"), std::string::npos)
      << r.find_stage(StageId::time)->summary;
  RunRecord allowed = run(gpu, true);
  EXPECT_EQ(allowed.find_stage(StageId::time)->status, StageStatus::passed);
  EXPECT_EQ(allowed.flags.size(), 1u);
}

TEST_F(TimeGateTest, WithoutPeaksTheGateSaysItDidNotCheck) {
  gpu::FakeWorker gpu;
  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = gpu_timing_large(0.01, 0.05)(job);
    if (job.kind == gpu::JobKind::peaks) {
      o = gpu::Outcome{};
      o.failure = gpu::Failure{gpu::FailureKind::launch, "no room", ""};
    }
    return o;
  };
  RunRecord r = run(gpu);
  const StageResult* t = r.find_stage(StageId::time);
  EXPECT_EQ(t->status, StageStatus::passed);
  EXPECT_NE(t->summary.find("not checked against the GPU's peaks: measuring the peaks failed: launch: no room"),
            std::string::npos)
      << t->summary;
}

TEST_F(PipelineTest, StagesRunInTableOrderAndTheHooksSeeEach) {
  gpu::FakeWorker gpu;
  gpu.answer = healthy_gpu;
  Pipeline p(gpu);
  std::vector<std::string> seen;
  p.set_hooks({[&](StageId id) { seen.push_back("before " + std::string(to_string(id))); },
               [&](const StageResult& s, double seconds) {
                 EXPECT_GE(seconds, 0);
                 seen.push_back("after " + std::string(to_string(s.id)));
               }});
  RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", {});
  EXPECT_TRUE(r.passed) << render_report_text(r);
  EXPECT_TRUE(r.gpu_verified);
  EXPECT_EQ(r.verdict(), "passed");
  EXPECT_EQ(r.arch, "sm_80") << "the target comes from the worker's answer about the GPU";
  std::vector<std::string> order;
  for (auto& s : r.stages) order.push_back(std::string(to_string(s.id)));
  EXPECT_EQ(order, (std::vector<std::string>{"check", "assemble", "verify", "time", "prove"}));
  EXPECT_EQ(seen, (std::vector<std::string>{"before check", "after check", "before assemble", "after assemble", "before verify",
                                            "after verify", "before time", "after time", "before prove", "after prove"}));
  EXPECT_GT(r.find_stage(StageId::prove)->seconds, 0) << "prove disassembles the cubin, and its time is shown";
  EXPECT_GT(r.find_stage(StageId::assemble)->seconds, 0);
  EXPECT_NE(r.find_stage(StageId::verify)->summary.find("2 cases passed (1 on held-back sizes)"), std::string::npos);
  ASSERT_NE(gpu.last(gpu::JobKind::time), nullptr);
  EXPECT_EQ(gpu.last(gpu::JobKind::time)->budget_s, task_.time_budget_s);
}

TEST_F(PipelineTest, TheWorkerGetsTheResolvedLaunchSpecAndTheCubin) {
  gpu::FakeWorker gpu;
  gpu.answer = healthy_gpu;
  Pipeline p(gpu);
  RunOptions opts;
  opts.time = false;
  opts.seeds = 2;
  RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", opts);
  const gpu::Job* job = gpu.last(gpu::JobKind::verify);
  ASSERT_NE(job, nullptr);
  ASSERT_EQ(job->launch.launches.size(), 1u);
  const task::Launch& l = job->launch.launches[0];
  EXPECT_EQ(l.entry, "vector_add") << "the default entry is filled in by check";
  EXPECT_EQ(l.args, (std::vector<std::string>{"a", "b", "c", "n"})) << "so are the default arguments";
  EXPECT_EQ(l.grid.text(), "(min(ceil_div(n, 256), 1056), 1, 1)");
  EXPECT_EQ(job->task_dir, task_.dir);
  EXPECT_EQ(job->seeds, 2);
  EXPECT_TRUE(fs::exists(job->candidate_cubin));
  EXPECT_EQ(r.find_stage(StageId::time)->status, StageStatus::skipped);
  EXPECT_EQ(r.find_stage(StageId::time)->seconds, 0);
  EXPECT_TRUE(r.passed);
}

TEST_F(PipelineTest, AHeldBackFailureIsFlaggedAndTheModelsVerdictLeavesTheSetUnnamed) {
  gpu::FakeWorker gpu;
  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = healthy_gpu(job);
    if (job.kind == gpu::JobKind::verify) {
      auto& c = o.verify->cases[1];
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
  RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", {});
  const StageResult* v = r.find_stage(StageId::verify);
  EXPECT_EQ(v->status, StageStatus::failed);
  EXPECT_TRUE(v->held_back);
  EXPECT_EQ(r.verdict(), "FAILED at verify: size set 'odd' (held back), seed 1: 'c' has 3 of 1000003 elements wrong");
  // For a model, no number that depends on the held-back size (eval/held_back.h).
  EXPECT_EQ(r.verdict(Audience::model), "FAILED at verify: a held-back size, seed 1: output 'c' is wrong");
  EXPECT_EQ(r.find_stage(StageId::time)->status, StageStatus::not_run) << "a failing stage stops the flow";
  EXPECT_EQ(r.find_stage(StageId::prove)->status, StageStatus::passed) << "prove reads the PTX only";
  EXPECT_EQ(gpu.last(gpu::JobKind::time), nullptr);
  auto j = nlohmann::json::parse(render_report_json(r));
  EXPECT_EQ(j["stages"][2]["name"], "verify");
  EXPECT_EQ(j["stages"][2]["held_back"], true);
  EXPECT_FALSE(j["stages"][0].contains("held_back"));

  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = healthy_gpu(job);
    if (job.kind == gpu::JobKind::verify) {
      o.verify.reset();
      o.failure = gpu::Failure{gpu::FailureKind::fault, "CUDA_ERROR_ILLEGAL_ADDRESS (700)", "size set 'tiny', seed 2", true};
    }
    return o;
  };
  r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", {});
  EXPECT_EQ(r.verdict(), "FAILED at verify: fault: CUDA_ERROR_ILLEGAL_ADDRESS (700) (size set 'tiny', seed 2)");
  EXPECT_EQ(r.verdict(Audience::model).find("tiny"), std::string::npos) << r.verdict(Audience::model);
  EXPECT_EQ(nlohmann::json::parse(render_report_json(r))["failure"]["kind"], "fault");
}

TEST_F(PipelineTest, ATimingThatFailsItsReverifyFailsTheTimeStage) {
  gpu::FakeWorker gpu;
  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = healthy_gpu(job);
    if (o.time) {
      o.time->reverify_pass = false;
      o.time->reverify_problem = "after timing, a launch with fresh inputs on 'small' failed";
    }
    return o;
  };
  Pipeline p(gpu);
  RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", {});
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.gpu_verified);
  EXPECT_EQ(r.verdict(), "FAILED at time: after timing, a launch with fresh inputs on 'small' failed");
}

TEST_F(PipelineTest, SanitizeIsListedAfterVerifyOnlyWhenAskedFor) {
  gpu::FakeWorker gpu;
  gpu.answer = healthy_gpu;
  Pipeline p(gpu);
  RunOptions opts;
  opts.sanitize = true;
  RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", opts);
  std::vector<std::string> order;
  for (auto& s : r.stages) order.push_back(std::string(to_string(s.id)));
  EXPECT_EQ(order, (std::vector<std::string>{"check", "assemble", "verify", "sanitize", "time", "prove"}));
  EXPECT_EQ(r.find_stage(StageId::sanitize)->status, StageStatus::skipped) << "a fake worker is no process to sanitize";
  EXPECT_TRUE(r.passed) << "a skipped stage fails nothing";
  EXPECT_EQ(nlohmann::json::parse(render_report_json(r))["stages"][3]["name"], "sanitize");

  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = healthy_gpu(job);
    if (o.verify) o.verify->cases[0].pass = false;
    return o;
  };
  r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", opts);
  EXPECT_EQ(r.find_stage(StageId::sanitize), nullptr) << "after a failed verify, sanitize does not run and is not listed";
}

TEST_F(PipelineTest, AnOutOfBoundsFaultIsRunAgainToNameTheBuffer) {
  gpu::FakeWorker gpu;
  gpu.answer = [](const gpu::Job& job) {
    gpu::Outcome o = healthy_gpu(job);
    if (job.kind == gpu::JobKind::device) return o;
    o = {};
    o.guard = gpu::GuardMode::vmm;
    if (job.kind == gpu::JobKind::locate && job.open_buffer == "c") {
      o.verify = gpu::VerifyReport{};  // with c's windows mapped the case runs through
      o.verify->cases.push_back(gpu::CaseResult{});
      return o;
    }
    gpu::Failure f{gpu::FailureKind::fault, "out-of-bounds access: running the candidate: CUDA_ERROR_ILLEGAL_ADDRESS (700)",
                   "size set 'small', seed 1"};
    f.out_of_bounds = true;
    f.size_set = "small";
    f.seed = 1;
    f.guarded = {"a", "b", "c"};
    o.failure = f;
    o.fatal = true;
    return o;
  };
  Pipeline p(gpu);
  RunOptions opts;
  opts.time = false;
  RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", opts);
  EXPECT_EQ(r.verdict(), "FAILED at verify: fault: out-of-bounds access near buffer 'c': running the candidate: "
                         "CUDA_ERROR_ILLEGAL_ADDRESS (700) (size set 'small', seed 1)");
  size_t locates = 0;
  for (auto& j : gpu.jobs) locates += j.kind == gpu::JobKind::locate;
  EXPECT_EQ(locates, 3u);
  auto j = nlohmann::json::parse(render_report_json(r));
  EXPECT_EQ(j["guard"], "vmm");
  EXPECT_EQ(j["failure"]["out_of_bounds"], true);
}

TEST(StageIds, SpelledOnceBothWays) {
  for (auto& st : stage_table()) EXPECT_EQ(stage_id_from_string(to_string(st.id)), st.id);
  EXPECT_EQ(stage_table().size(), 7u);
  EXPECT_FALSE(stage_id_from_string("extract").has_value());
}

TEST(Prove, CountsRequiredFamiliesInThePtx) {
  auto proofs = prove_in_ptx(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() {\n"
                             "  .reg .b32 %r<2>;\n  wgmma.fence.sync.aligned;\n  mov.u32 %r1, 0;\n  ret;\n}\n",
                             {"wgmma.fence", "wgmma.mma_async", "mov"});
  ASSERT_EQ(proofs.size(), 3u);
  EXPECT_TRUE(proofs[0].in_ptx);
  EXPECT_FALSE(proofs[1].in_ptx);
  EXPECT_EQ(proofs[2].ptx_count, 1);
  EXPECT_FALSE(proofs[0].in_sass.has_value()) << "SASS proofs are not claimed";
}

}  // namespace
}  // namespace ptxforge::eval
