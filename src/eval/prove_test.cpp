// The prove stage's executed proof without a GPU: a scripted worker answers the extra verify
// job of the instrumented copy, so what prove sends, what it accepts and the verdicts it gives
// are tested in CI. The instrumented copy is assembled by the real ptxas.
#include <gtest/gtest.h>

#include <memory>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/feedback.h"
#include "eval/pipeline.h"
#include "testing/fake_worker.h"
#include "task/task_spec.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;

// A GPU that passes every case; the instrumented copy's verify job gets `counts` back.
struct ScriptedGpu {
  std::vector<uint64_t> counts;  // warps per family, in each case
  std::vector<std::string> families = {"add.f32", "bra"};
  bool other_outputs = false;  // the copy's outputs differ from the candidate's
  bool instrumented_fails_held_back = false;
  bool tamper = false;  // the kernel adds 1 to slot 0 by address
  std::shared_ptr<std::string> instrumented_ptx = std::make_shared<std::string>();  // read while the run's folder exists

  gpu::Outcome operator()(const gpu::Job& job) const {
    gpu::Outcome o;
    if (job.kind == gpu::JobKind::device) {
      o.device = gpu::DeviceInfo{};
      o.device->name = "Fake GPU";
      o.device->cc_major = 8;
      return o;
    }
    if (job.kind != gpu::JobKind::verify) return o;  // no timing: the runs pass --no-time
    gpu::VerifyReport v;
    for (auto [set, shown] : {std::pair{"small", true}, std::pair{"odd", false}}) {
      gpu::CaseResult c;
      c.size_set = set;
      c.shown = shown;
      c.seed_index = 1;
      c.pass = !(job.executed_slots > 0 && instrumented_fails_held_back && !shown);
      if (!c.pass) c.problems.push_back("'c' has 3 of 1000 elements wrong");
      v.cases.push_back(c);
    }
    if (job.executed_slots > 0) {
      auto text = read_file(job.candidate_cubin.substr(0, job.candidate_cubin.size() - 5) + "ptx");
      *instrumented_ptx = text ? *text : "";
      // What the inserted code adds per warp: the secret increment written into the copy. Each
      // slot counts what `counts` says of the family of the first instruction after its code.
      uint64_t k = 1;
      size_t at = instrumented_ptx->find("red.global.add.u64 [%__ptxforge_base+0], ");
      if (at != std::string::npos) k = std::stoull(instrumented_ptx->substr(at + 41));
      std::vector<uint64_t> slots;
      for (int slot = 0; slot < job.executed_slots; ++slot) {
        size_t here = instrumented_ptx->find(fmt::format("[%__ptxforge_base+{}], ", 8 * slot));
        size_t after = instrumented_ptx->find("} ", here) + 2;
        std::string rest = instrumented_ptx->substr(after, 80);
        if (rest[0] == '@') rest = rest.substr(rest.find(' ') + 1);
        std::string opcode = rest.substr(0, rest.find_first_of(" \t"));
        uint64_t n = 0;
        for (size_t i = 0; i < families.size() && i < counts.size(); ++i)
          if (starts_with_dotted(opcode, families[i])) n = counts[i];
        slots.push_back(n);
      }
      for (auto& c : v.cases) {
        for (size_t i = 0; i < slots.size(); ++i) {
          c.executed.push_back(slots[i] * k + (tamper && i == 0 ? 1 : 0));
          if (v.executed.size() <= i) v.executed.push_back(0);
          v.executed[i] += c.executed[i];
        }
        if (counts.empty()) c.executed.clear();
        c.output_digest = other_outputs ? 2 : 1;
      }
    } else {
      for (auto& c : v.cases) c.output_digest = 1;
    }
    o.verify = v;
    return o;
  }
};

class ProveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
    auto t = task::load_task(kRoot + "/tasks/level1/vector_add");
    ASSERT_TRUE(t.ok()) << t.error().message;
    task_ = *t;
    // The solution's add and its guarded branch stand in for a required family.
    task_.required_instructions = {"add.f32", "bra"};
    opts_.time = false;
  }
  RunRecord run(gpu::FakeWorker& w, const std::string& path) {
    Pipeline p(w);
    return p.run(task_, path, opts_);
  }
  std::string solution() const { return kRoot + "/tasks/level1/vector_add/solution.ptx"; }
  task::Task task_;
  RunOptions opts_;
};

TEST_F(ProveTest, AnInstrumentedCopyRunsOnceAndItsCountsProveExecution) {
  gpu::FakeWorker w;
  ScriptedGpu g{{4096, 12}};
  w.answer = g;
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  ASSERT_NE(prove, nullptr);
  EXPECT_EQ(prove->status, StageStatus::passed) << prove->summary;
  EXPECT_NE(prove->summary.find("executed (warp executions: add.f32 8192, bra 24)"), std::string::npos)
      << prove->summary << " (two cases)";
  // The counts sum held-back cases too: the model reads the verdict without them.
  EXPECT_TRUE(prove->held_back);
  const std::string& model = prove->text(Audience::model);
  EXPECT_TRUE(model.starts_with("all 2 required instruction families ") && model.ends_with(" and executed")) << model;
  EXPECT_EQ(model.find("warp executions"), std::string::npos) << model;
  EXPECT_EQ(model.find("8192"), std::string::npos) << model;
  ASSERT_EQ(r.proofs.size(), 2u);
  EXPECT_EQ(r.proofs[0].executed, true);
  EXPECT_EQ(r.proofs[0].executed_warps, 8192u);
  EXPECT_TRUE(r.passed) << r.verdict();

  size_t verifies = 0;
  const gpu::Job* counted = nullptr;
  for (auto& j : w.jobs)
    if (j.kind == gpu::JobKind::verify) {
      ++verifies;
      if (j.executed_slots > 0) counted = &j;
    }
  EXPECT_EQ(verifies, 2u) << "the candidate's verify, then one run of the instrumented copy";
  ASSERT_NE(counted, nullptr);
  EXPECT_EQ(counted->executed_slots, 2);
  EXPECT_EQ(counted->seeds, 1);
  EXPECT_TRUE(ends_with(counted->candidate_cubin, "/instrumented.cubin")) << counted->candidate_cubin;
  EXPECT_EQ(counted->seed, r.seed) << "the copy sees the run's inputs";
  size_t slot1 = g.instrumented_ptx->find("red.global.add.u64 [%__ptxforge_base+8], ");
  ASSERT_NE(slot1, std::string::npos) << "a second slot";
  uint64_t k = std::stoull(g.instrumented_ptx->substr(slot1 + 41));
  EXPECT_EQ(g.instrumented_ptx->find(".global .align 8 .u64"), std::string::npos) << "no counters in the module";
  EXPECT_TRUE(k % 2 == 1 && k > 1000) << "a secret odd increment, not 1: " << k;

  auto j = nlohmann::json::parse(render_report_json(r));
  EXPECT_EQ(j["proofs"][0]["executed"], true);
  EXPECT_EQ(j["proofs"][0]["executed_warps"], 8192);
  EXPECT_NE(render_report_text(r).find("executed yes (8192 warps)"), std::string::npos) << render_report_text(r);
}

TEST_F(ProveTest, AFamilyNoWarpReachedFailsProve) {
  task_.min_executed.emplace("bra", *task::SizeExpr::parse("1"));  // a floor does not hide "never executed"
  gpu::FakeWorker w;
  w.answer = ScriptedGpu{{4096, 0}};
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::failed);
  EXPECT_NE(prove->summary.find("bra is in the "), std::string::npos) << prove->summary;
  EXPECT_NE(prove->summary.find("but never executed"), std::string::npos) << prove->summary;
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.proofs[1].executed, false);
  std::string feedback = agent::feedback_for(task_, r, *agent::find_hardware("h200"), 20000);
  EXPECT_NE(feedback.find("## Required instructions that never ran\nbra is in the machine code"), std::string::npos) << feedback;
}

TEST_F(ProveTest, AFamilyThatCarriesOnlyATokenPartOfTheWorkFailsOnTheCaseItShortchanges) {
  // One warp execution of add.f32 per 32 elements at least, on each case: small (n = 1024)
  // needs 32, odd (n = 1000003, held back) 31251.
  task_.min_executed.emplace("add.f32", *task::SizeExpr::parse("ceil_div(n, 32)"));
  gpu::FakeWorker w;
  w.answer = ScriptedGpu{{4096, 12}};
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::failed);
  EXPECT_NE(prove->summary.find("add.f32 ran 4096 warp executions on size set 'odd' (held back): 13% of the work the task "
                                "needs of it (at least 31251 warp executions): the required instructions do only part of "
                                "the work"),
            std::string::npos)
      << prove->summary;
  EXPECT_EQ(prove->summary.find("'small'"), std::string::npos) << "small's 4096 are above its floor of 32";
  EXPECT_EQ(prove->text(Audience::model).find("odd"), std::string::npos) << prove->text(Audience::model);
  EXPECT_EQ(r.proofs[0].min_warps, 31251u);

  gpu::FakeWorker enough;
  enough.answer = ScriptedGpu{{31251, 12}};
  RunRecord ok = run(enough, solution());
  EXPECT_EQ(ok.find_stage(StageId::prove)->status, StageStatus::passed) << ok.find_stage(StageId::prove)->summary;
  EXPECT_NE(render_report_text(ok).find("executed yes (62502 warps; per-case floor up to 31251 warp executions)"), std::string::npos)
      << render_report_text(ok);
}

TEST_F(ProveTest, ACounterTheKernelWroteToByAddressFails) {
  gpu::FakeWorker w;
  ScriptedGpu g{{4096, 12}};
  g.tamper = true;
  w.answer = g;
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::failed);
  EXPECT_NE(prove->summary.find("was changed by something other than the inserted code: the kernel writes to memory it "
                                "was not given"),
            std::string::npos)
      << prove->summary;
}

TEST_F(ProveTest, TheCopyMustStillVerifyAndAHeldBackFailureIsNotNamedToTheModel) {
  gpu::FakeWorker w;
  ScriptedGpu g{{1, 1}};
  g.instrumented_fails_held_back = true;
  w.answer = g;
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::failed);
  EXPECT_NE(prove->summary.find("does not verify (size set 'odd', held back)"), std::string::npos) << prove->summary;
  EXPECT_TRUE(prove->held_back);
  EXPECT_EQ(prove->text(Audience::model).find("odd"), std::string::npos) << prove->text(Audience::model);
  EXPECT_FALSE(r.proofs[0].executed.has_value()) << "no counts are claimed from a copy that did not verify";
}

TEST_F(ProveTest, TooFewCountersIsAFailureNotAPass) {
  gpu::FakeWorker w;
  w.answer = ScriptedGpu{{}};
  RunRecord r = run(w, solution());
  EXPECT_EQ(r.find_stage(StageId::prove)->status, StageStatus::failed);
  EXPECT_NE(r.find_stage(StageId::prove)->summary.find("returned 0 execution counters for 2 counter slots"),
            std::string::npos)
      << r.find_stage(StageId::prove)->summary;
}

TEST_F(ProveTest, WithoutAGpuExecutionIsNotClaimed) {
  gpu::FakeWorker w;  // answers every job as a machine without a driver
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::passed) << prove->summary;
  EXPECT_NE(prove->summary.find("execution not proven"), std::string::npos) << prove->summary;
  EXPECT_FALSE(r.proofs[0].executed.has_value());
  EXPECT_FALSE(r.passed);
}

TEST_F(ProveTest, ACandidateThatNamesTheCountersIsRefused) {
  std::string text = *read_file(solution());
  text.replace(text.find(".visible .entry"), 0, ".global .u64 __ptxforge_executed[2];\n");
  std::string path = ::testing::TempDir() + "/names_counters.ptx";
  ASSERT_TRUE(write_file(path, text).ok());
  gpu::FakeWorker w;
  w.answer = ScriptedGpu{{1, 1}};
  RunRecord r = run(w, path);
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::failed);
  EXPECT_NE(prove->summary.find("reserves for its counters"), std::string::npos) << prove->summary;
}

// "add.f32 | wgmma.mma_async": the kernel uses the first, the second is absent, and the group
// stands; the absent family is neither missing nor idle in the verdict or the feedback.
TEST_F(ProveTest, OneOfTwoAlternativesProvesItsGroup) {
  task_.required_instructions = {"add.f32", "wgmma.mma_async", "bra"};
  task_.required_groups = {{"add.f32", "wgmma.mma_async"}, {"bra"}};
  task_.min_executed.emplace("add.f32", *task::SizeExpr::parse("4096"));
  task_.min_executed.emplace("wgmma.mma_async", *task::SizeExpr::parse("128"));
  gpu::FakeWorker w;
  ScriptedGpu g{{4096, 0, 12}};
  g.families = task_.required_instructions;
  w.answer = g;
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  ASSERT_NE(prove, nullptr);
  EXPECT_EQ(prove->status, StageStatus::passed) << prove->summary;
  EXPECT_NE(prove->summary.find("all 2 required instruction families"), std::string::npos) << prove->summary;
  EXPECT_NE(prove->summary.find("(warp executions: add.f32 8192, bra 24)"), std::string::npos) << prove->summary;
  ASSERT_EQ(r.proofs.size(), 3u);
  EXPECT_EQ(r.proofs[0].alternatives, std::vector<std::string>{"wgmma.mma_async"});
  EXPECT_FALSE(r.proofs[1].in_ptx);
  EXPECT_TRUE(r.proofs[2].alternatives.empty());
  EXPECT_TRUE(r.passed) << r.verdict();
  std::string feedback = agent::feedback_for(task_, r, *agent::find_hardware("h200"), 20000);
  EXPECT_EQ(feedback.find("## Missing required instructions"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("never ran"), std::string::npos) << feedback;
  EXPECT_NE(render_report_text(r).find("(or wgmma.mma_async)"), std::string::npos) << render_report_text(r);
  auto j = nlohmann::json::parse(render_report_json(r));
  EXPECT_EQ(j["proofs"][1]["alternatives"][0], "add.f32");
}

TEST_F(ProveTest, AGroupIsMissingOnlyWhenAllItsFamiliesAre) {
  task_.required_instructions = {"fma.rn.f64", "wgmma.mma_async"};
  task_.required_groups = {{"wgmma.mma_async", "fma.rn.f64"}};
  gpu::FakeWorker w;
  w.answer = ScriptedGpu{{0, 0}};
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::failed);
  EXPECT_NE(prove->summary.find("missing from the PTX: one of wgmma.mma_async, fma.rn.f64"), std::string::npos)
      << prove->summary;
  std::string feedback = agent::feedback_for(task_, r, *agent::find_hardware("h200"), 20000);
  EXPECT_NE(feedback.find("The task requires fma.rn.f64 or wgmma.mma_async.\n"), std::string::npos) << feedback;
}

// Two alternatives may split the work; their counts, each over its own floor, must add up to
// one on every case.
TEST_F(ProveTest, AlternativesShareTheFloor) {
  task_.required_instructions = {"add.f32", "bra"};
  task_.required_groups = {{"add.f32", "bra"}};
  task_.min_executed.emplace("add.f32", *task::SizeExpr::parse("4096"));
  task_.min_executed.emplace("bra", *task::SizeExpr::parse("24"));
  {
    gpu::FakeWorker w;
    w.answer = ScriptedGpu{{2048, 12}};  // half of each floor
    RunRecord r = run(w, solution());
    const StageResult* prove = r.find_stage(StageId::prove);
    EXPECT_EQ(prove->status, StageStatus::passed) << prove->summary;
  }
  gpu::FakeWorker w;
  w.answer = ScriptedGpu{{2048, 6}};  // a half and a quarter
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::failed);
  EXPECT_NE(
      prove->summary.find("add.f32 ran 2048 warp executions and bra ran 6 warp executions on size set 'small': 75% of "
                          "the work the task needs of them together (at least 4096 warp executions or 24 warp executions)"),
      std::string::npos)
      << prove->summary;
}

// The copy's outputs must be the timed binary's: a kernel that notices it is being counted and
// takes another path there fails, naming the size set only to people.
TEST_F(ProveTest, TheCopyMustGiveTheCandidatesOutputs) {
  gpu::FakeWorker w;
  ScriptedGpu g{{4096, 12}};
  g.other_outputs = true;
  w.answer = g;
  RunRecord r = run(w, solution());
  const StageResult* prove = r.find_stage(StageId::prove);
  EXPECT_EQ(prove->status, StageStatus::failed);
  EXPECT_NE(prove->summary.find("gave other outputs than the candidate on the same inputs (size set 'small')"),
            std::string::npos)
      << prove->summary;
}

// A kernel for vector_add that also runs one small mma.sync (m16n8k8: 1024 multiply-adds) per
// warp: the count of executions is what a floor sized for m16n8k16 would accept, the work half.
TEST_F(ProveTest, ASmallShapeCountsItsWorkNotItsExecutions) {
  std::string text = *read_file(solution());
  text.replace(text.find(".reg .pred %p;"), 0,
               ".reg .b32 %h<4>; .reg .f32 %d<4>;\n    mov.b32 %h0, 0; mov.b32 %h1, 0; mov.b32 %h2, 0; mov.f32 %d0, 0f00000000;\n"
               "    mov.f32 %d1, 0f00000000; mov.f32 %d2, 0f00000000; mov.f32 %d3, 0f00000000;\n"
               "    mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%d0, %d1, %d2, %d3}, {%h0, %h1}, {%h2}, "
               "{%d0, %d1, %d2, %d3};\n");
  std::string path = ::testing::TempDir() + "/small_mma.ptx";
  ASSERT_TRUE(write_file(path, text).ok());
  task_.required_instructions = {"mma.sync"};
  task_.required_groups = {{"mma.sync"}};
  // As if sized for m16n8k16: 100 executions' worth of 2048 multiply-adds on every case.
  task_.min_executed.emplace("mma.sync", *task::SizeExpr::parse("100 * 2048"));
  gpu::FakeWorker w;
  ScriptedGpu g{{100}};
  g.families = task_.required_instructions;
  w.answer = g;
  RunRecord r = run(w, path);
  const StageResult* prove = r.find_stage(StageId::prove);
  ASSERT_NE(prove, nullptr);
  EXPECT_EQ(prove->status, StageStatus::failed) << prove->summary;
  EXPECT_NE(prove->summary.find("mma.sync did 102400 multiply-adds (100 warp executions) on size set 'small': 50% of the "
                                "work the task needs of it (at least 204800 multiply-adds)"),
            std::string::npos)
      << prove->summary;

  gpu::FakeWorker twice;
  ScriptedGpu g2{{200}};
  g2.families = task_.required_instructions;
  twice.answer = g2;
  RunRecord ok = run(twice, path);
  EXPECT_EQ(ok.find_stage(StageId::prove)->status, StageStatus::passed) << ok.find_stage(StageId::prove)->summary;
  // The record says what the floor was held against: the work, in its unit, beside the count.
  ASSERT_EQ(ok.proofs.size(), 1u);
  EXPECT_EQ(ok.proofs[0].work_unit, "multiply-adds");
  EXPECT_EQ(ok.proofs[0].executed_work, ok.proofs[0].executed_warps * 1024) << "m16n8k8 is 1024 multiply-adds";
  EXPECT_EQ(ok.proofs[0].min_warps, 204800u);
}

// A task that requires a cluster family needs clusters of more than one CTA.
TEST_F(ProveTest, ClusterFamiliesNeedClustersOfMoreThanOneBlock) {
  std::string text = *read_file(solution());
  text.replace(text.find(".target sm_80"), 13, ".target sm_90");
  text.replace(text.find("    ret;"), 0, "    barrier.cluster.arrive;\n    barrier.cluster.wait;\n");
  std::string one = text, two = text;
  one.replace(one.find("smem=0"), 6, "smem=0 cluster=(1, 1, 1)");
  two.replace(two.find("smem=0"), 6, "smem=0 cluster=(2, 1, 1)");
  two.replace(two.find("min(ceil_div(n, 256), 1056)"), 27, "2 * min(ceil_div(n, 512), 528)");
  task_.required_instructions = {"barrier.cluster"};
  task_.required_groups = {{"barrier.cluster"}};
  opts_.arch = "sm_90a";
  for (auto [name, body, fails] : {std::tuple{"one", one, true}, std::tuple{"two", two, false}}) {
    std::string path = ::testing::TempDir() + "/cluster_" + name + ".ptx";
    ASSERT_TRUE(write_file(path, body).ok());
    gpu::FakeWorker w;
    ScriptedGpu g{{64}};
    g.families = task_.required_instructions;
    w.answer = g;
    RunRecord r = run(w, path);
    const StageResult* prove = r.find_stage(StageId::prove);
    ASSERT_NE(prove, nullptr) << name;
    EXPECT_EQ(prove->status, fails ? StageStatus::failed : StageStatus::passed) << name << ": " << prove->summary;
    if (fails)
      EXPECT_NE(prove->summary.find("barrier.cluster need clusters of more than one CTA, and no launch on size set 'small' "
                                    "has one"),
                std::string::npos)
          << prove->summary;
  }
}

TEST(FloorShare, SumsEachCountOverItsFloor) {
  std::vector<uint64_t> warps = {50, 30, 7};
  std::vector<std::optional<uint64_t>> floors = {100, 60, std::nullopt};
  EXPECT_DOUBLE_EQ(*floor_share({0}, warps, floors), 0.5);
  EXPECT_DOUBLE_EQ(*floor_share({0, 1}, warps, floors), 1.0);
  EXPECT_FALSE(floor_share({0, 2}, warps, floors)) << "a member without a floor: any execution will do";
  floors[0] = 0;
  EXPECT_DOUBLE_EQ(*floor_share({0}, warps, floors), 1.0) << "a floor of 0 is met";
}

}  // namespace
}  // namespace ptxforge::eval
