// The verifier: which slot may run which request, the three-way summary the metrics count,
// the record of a run the server could not carry out, and the whole core end to end: the
// store, the scheduler and a real PipelineVerifier on a CPU slot (the built ptxforge's
// emu-worker) running vector_add's solution and a broken copy of it.
#include "serve/verifier.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "serve/scheduler.h"
#include "util/text.h"

namespace ptxforge::serve {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

const std::string kRoot = PTXFORGE_SOURCE_DIR;

TEST(Verifier, ARequestRunsOnlyOnASlotOfItsKind) {
  using eval::Device;
  EXPECT_TRUE(runs_on(Device::gpu, SlotKind::gpu, true));
  EXPECT_FALSE(runs_on(Device::gpu, SlotKind::cpu, true));
  EXPECT_FALSE(runs_on(Device::gpu, SlotKind::cpu, false));
  EXPECT_TRUE(runs_on(Device::cpu, SlotKind::cpu, true));
  EXPECT_FALSE(runs_on(Device::cpu, SlotKind::gpu, true));
  EXPECT_TRUE(runs_on(Device::automatic, SlotKind::gpu, true));
  EXPECT_FALSE(runs_on(Device::automatic, SlotKind::cpu, true)) << "auto takes a GPU where the server has one";
  EXPECT_TRUE(runs_on(Device::automatic, SlotKind::cpu, false));
}

TEST(Verifier, TheSummaryIsTheFirstFailedStageAndTheFailureKind) {
  eval::RunRecord r;
  r.stage(eval::StageId::check).status = eval::StageStatus::passed;
  r.stage(eval::StageId::verify).status = eval::StageStatus::failed;
  r.stage(eval::StageId::prove).status = eval::StageStatus::failed;
  r.failure = gpu::Failure{gpu::FailureKind::timeout, "no answer", ""};
  Verified v = summarize(r, "{}");
  EXPECT_EQ(v.outcome, Outcome::failed);
  EXPECT_EQ(v.failed_stage, eval::StageId::verify);
  EXPECT_EQ(v.failure, gpu::FailureKind::timeout);
  EXPECT_EQ(v.record_json, "{}");
  eval::RunRecord ok;
  ok.stage(eval::StageId::verify).status = eval::StageStatus::passed;
  ok.passed = true;
  EXPECT_EQ(summarize(ok, "").outcome, Outcome::passed);
  ok.passed = false;  // nothing failed, nothing verified
  EXPECT_EQ(summarize(ok, "").outcome, Outcome::not_verified);
}

TEST(Verifier, ARunNotCarriedOutIsStillARecord) {
  task::Task t;
  t.name = "vector_add";
  Verified v = not_carried_out(t, "the worker could not start");
  EXPECT_EQ(v.outcome, Outcome::not_verified);
  json j = json::parse(v.record_json);
  EXPECT_EQ(j["task"], "vector_add");
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["verified_by"], "none");
  EXPECT_EQ(j["verdict"], "NOT verified: the server could not carry out the run: the worker could not start");
  ASSERT_TRUE(j["stages"].is_array());
  EXPECT_EQ(j["stages"].size(), 5u) << "check, assemble, verify, time, prove";
}

TEST(Verifier, ServeSlotsAreNamedByGpuOrdinalThenCpuIndex) {
  std::vector<Slot> slots = pipeline_slots({0, 2}, 2, "/nonexistent/ptxforge");  // no worker starts before a run
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[0].name, "gpu0");
  EXPECT_EQ(slots[1].name, "gpu2");
  EXPECT_EQ(slots[1].kind, SlotKind::gpu);
  EXPECT_EQ(slots[2].name, "cpu0");
  EXPECT_EQ(slots[3].name, "cpu1");
  EXPECT_EQ(slots[3].kind, SlotKind::cpu);
  for (auto& s : slots) EXPECT_TRUE(s.verifier);
}

TEST(Verifier, AWorkerThatCannotStartIsARecordNotALostRun) {
  auto v = PipelineVerifier::for_cpu("/nonexistent/ptxforge");
  auto loaded = task::load_task(kRoot + "/tasks/level1/vector_add");
  ASSERT_TRUE(loaded.ok());
  RunRequest q;
  q.task = "level1/vector_add";
  auto solution = read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  ASSERT_TRUE(solution.ok());
  q.candidate = *solution;
  Verified r = v->verify(q, {"level1/vector_add", kRoot + "/tasks/level1/vector_add", *loaded});
  EXPECT_NE(r.outcome, Outcome::passed);
  json j = json::parse(r.record_json);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["verdict"].get<std::string>().find("/nonexistent"), std::string::npos) << j["verdict"];
}

// The built ptxforge binary, beside this test binary's folder (build/tests -> build/tools/ptxforge).
std::string ptxforge_binary() {
  fs::path self = fs::read_symlink("/proc/self/exe");
  fs::path p = self.parent_path().parent_path() / "tools" / "ptxforge" / "ptxforge";
  return fs::exists(p) ? p.string() : "";
}

TEST(VerifierEndToEnd, TheCoreVerifiesOnTheCpuEngine) {
  std::string bin = ptxforge_binary();
  if (bin.empty()) GTEST_SKIP() << "the ptxforge binary is not built beside the tests";
  std::string dir = kRoot + "/tasks/level1/vector_add";
  auto t = task::load_task(dir);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto solution = read_file(dir + "/solution.ptx");
  ASSERT_TRUE(solution.ok());
  std::string broken = *solution;
  size_t add = broken.find("add.f32 %z, %x, %y;");
  ASSERT_NE(add, std::string::npos);
  broken.replace(add, 3, "sub");

  auto tmp = TempDir::create("ptxforge-verifier-test");
  ASSERT_TRUE(tmp.ok());
  auto store = RunStore::open(tmp->path() + "/serve.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto verifier = PipelineVerifier::for_cpu(bin);
  PipelineVerifier* cpu0 = verifier.get();
  std::vector<Slot> slots;
  slots.push_back({"cpu0", SlotKind::cpu, std::move(verifier)});
  auto s = Scheduler::start(**store, TaskCatalog({{"level1/vector_add", dir, *t}}), std::move(slots));
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto request = [](std::string candidate) {
    RunRequest q;
    q.task = "level1/vector_add";
    q.candidate = std::move(candidate);
    q.options.seeds = 1;
    q.options.seed = 11;
    return q;
  };
  Submitted sub = (*s)->submit({request(*solution), request(broken)});
  ASSERT_FALSE(sub.refusal) << sub.message;
  ASSERT_EQ(sub.runs.size(), 2u);
  auto good = (*s)->get(sub.runs[0].id, 300s);
  ASSERT_TRUE(good.ok() && *good);
  ASSERT_EQ((*good)->state, RunState::done);
  EXPECT_EQ((*good)->device, "cpu0");
  json g = json::parse((*good)->record_json);
  EXPECT_EQ(g["passed"], true) << g.dump(2);
  EXPECT_EQ(g["verified_by"], "cpu_engine");
  EXPECT_EQ(g["candidate"], "candidate.ptx");
  EXPECT_EQ(g["seed"], "11");
  auto bad = (*s)->get(sub.runs[1].id, 300s);
  ASSERT_TRUE(bad.ok() && *bad);
  ASSERT_EQ((*bad)->state, RunState::done);
  json b = json::parse((*bad)->record_json);
  EXPECT_EQ(b["passed"], false);
  EXPECT_EQ(b["verdict"].get<std::string>().rfind("FAILED at verify", 0), 0u) << b["verdict"];
  std::string m = (*s)->metrics_text();
  EXPECT_NE(m.find("ptxforge_runs_total{stage=\"none\",verdict=\"passed\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_runs_total{stage=\"verify\",verdict=\"failed\"} 1\n"), std::string::npos) << m;
  // The candidate's file is gone once its run is over; the folder is the slot's alone.
  ASSERT_FALSE(cpu0->folder().empty());
  EXPECT_TRUE(fs::is_empty(cpu0->folder()));
  EXPECT_EQ(fs::status(cpu0->folder()).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
}

}  // namespace
}  // namespace ptxforge::serve
