// The executed proof on the CPU engine, end to end on the real engine: the pipeline runs
// reduce_sum candidates with --device cpu, the engine (emu::Executor, in process) verifies them
// and counts every instruction, and prove holds the required families to those counts and to
// [min_work] floors. Each kernel here is correct (verify passes): only the proof can fail them.
// The cheats: a required instruction behind a branch no case takes, one run by one lane of one
// warp where the floor needs one per warp (guarded, so that every warp issues it), one run only
// on the shown size. And an instruction the engine does not execute leaves execution unproven.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "emu/executor.h"
#include "eval/pipeline.h"
#include "eval/record_json.h"
#include "task/task_spec.h"
#include "testing/fake_worker.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = PTXFORGE_SOURCE_DIR;

// One CTA of 256 threads sums x into a shared accumulator; `reduce` is how each warp's part
// gets there, `extra` goes before the end.
std::string kernel(const std::string& reduce, const std::string& extra = "") {
  return R"(// @launch grid=(1, 1, 1) block=(256, 1, 1)
.version 8.0
.target sm_80
.address_size 64

.visible .entry reduce_sum(.param .u64 x, .param .u64 out, .param .u32 n)
{
  .reg .pred %p<8>;
  .reg .b32 %r<24>;
  .reg .f32 %f<24>;
  .reg .b64 %rd<8>;
  .shared .align 4 .f32 acc;
  .shared .align 16 .f32 warps[8];
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r2, %tid.x;
  setp.eq.u32 %p1, %r2, 0;
  mov.f32 %f1, 0f00000000;
  @%p1 st.shared.f32 [acc], %f1;
  bar.sync 0;
  mov.u32 %r3, %r2;
LOOP:
  setp.ge.u32 %p2, %r3, %r1;
  @%p2 bra DONE;
  mul.wide.u32 %rd3, %r3, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f2, [%rd4];
  add.f32 %f1, %f1, %f2;
  add.u32 %r3, %r3, 256;
  bra LOOP;
DONE:
  and.b32 %r5, %r2, 31;
  setp.eq.u32 %p3, %r5, 0;
)" + reduce + extra +
         R"(
  bar.sync 0;
  @%p1 ld.shared.f32 %f3, [acc];
  @%p1 st.global.f32 [%rd2], %f3;
  ret;
}
)";
}

// The warp's sum in every lane, by five butterfly shuffles.
const std::string kShuffles = R"(
  mov.b32 %r6, %f1;
  shfl.sync.bfly.b32 %r7, %r6, 16, 31, -1;
  mov.b32 %f4, %r7;
  add.f32 %f1, %f1, %f4;
  mov.b32 %r6, %f1;
  shfl.sync.bfly.b32 %r7, %r6, 8, 31, -1;
  mov.b32 %f4, %r7;
  add.f32 %f1, %f1, %f4;
  mov.b32 %r6, %f1;
  shfl.sync.bfly.b32 %r7, %r6, 4, 31, -1;
  mov.b32 %f4, %r7;
  add.f32 %f1, %f1, %f4;
  mov.b32 %r6, %f1;
  shfl.sync.bfly.b32 %r7, %r6, 2, 31, -1;
  mov.b32 %f4, %r7;
  add.f32 %f1, %f1, %f4;
  mov.b32 %r6, %f1;
  shfl.sync.bfly.b32 %r7, %r6, 1, 31, -1;
  mov.b32 %f4, %r7;
  add.f32 %f1, %f1, %f4;
)";

// Honest: the shuffles, then lane 0 of each warp adds the warp's sum (8 warp executions of red).
const std::string kHonest = kShuffles + "  @%p3 red.shared.add.f32 [acc], %f1;\n";

// Every lane adds its own part: correct, and no shuffle needed.
const std::string kPerLane = "  red.shared.add.f32 [acc], %f1;\n";

// A shuffle behind a branch on n that no size set takes: in the PTX and in the SASS, never run.
const std::string kDeadShuffle = R"(
  setp.ne.u32 %p4, %r1, 2147483647;
  @%p4 bra SKIP;
  mov.b32 %r8, %f1;
  shfl.sync.bfly.b32 %r9, %r8, 1, 31, -1;
  mov.b32 %f9, %r9;
  add.f32 %f1, %f1, %f9;
SKIP:
)";

// The warps' sums go to shared memory; thread 0 adds them up and makes the one `red` itself.
// Every warp issues the red (it is guarded, not branched around), so counting issues instead of
// executions with a lane's guard true would see 8 per case, the floor.
const std::string kOneLaneRed = kShuffles + R"(
  shr.u32 %r10, %r2, 5;
  shl.b32 %r11, %r10, 2;
  mov.u32 %r12, warps;
  add.u32 %r12, %r12, %r11;
  @%p3 st.shared.f32 [%r12], %f1;
  bar.sync 0;
  mov.f32 %f10, 0f00000000;
  @%p1 ld.shared.v4.f32 {%f11, %f12, %f13, %f14}, [warps];
  @%p1 ld.shared.v4.f32 {%f15, %f16, %f17, %f18}, [warps+16];
  @%p1 add.f32 %f10, %f11, %f12;
  @%p1 add.f32 %f10, %f10, %f13;
  @%p1 add.f32 %f10, %f10, %f14;
  @%p1 add.f32 %f10, %f10, %f15;
  @%p1 add.f32 %f10, %f10, %f16;
  @%p1 add.f32 %f10, %f10, %f17;
  @%p1 add.f32 %f10, %f10, %f18;
  @%p1 red.shared.add.f32 [acc], %f10;
)";

// The shuffles only where n is 1000 (the shown size set 'small'); elsewhere every lane adds.
const std::string kShuffleOnShownSize = R"(
  setp.ne.u32 %p5, %r1, 1000;
  @%p5 bra PERLANE;
)" + kHonest + R"(
  bra JOIN;
PERLANE:
  red.shared.add.f32 [acc], %f1;
JOIN:
)";

class ProveEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "prove runs on an assembled candidate: needs ptxas";
    auto t = task::load_task(kRoot + "/tasks/level1/reduce_sum");
    ASSERT_TRUE(t.ok()) << t.error().message;
    task_ = *t;
    task_.required_instructions = {"shfl.sync", "red", "bar.sync"};
    engine_.answer = [](const gpu::Job& job) {
      emu::Executor ex(&emu::Machine::create);
      return ex.run(job);
    };
    opts_.device = Device::cpu;
    opts_.seeds = 1;
    opts_.seed = 5;
    opts_.time = false;
    dir_ = fs::temp_directory_path() / fmt::format("prove_engine_{}", getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void floor(const std::string& family, const std::string& expr) {
    auto e = task::SizeExpr::parse(expr);
    ASSERT_TRUE(e.ok());
    task_.min_executed[family] = *e;
  }
  RunRecord run(const std::string& text) {
    std::string path = (dir_ / fmt::format("k{}.ptx", ++n_)).string();
    std::ofstream(path) << text;
    Pipeline p(gpu_, engine_);
    return p.run(task_, path, opts_);
  }
  const StageResult& prove(const RunRecord& r) {
    const StageResult* s = r.find_stage(StageId::prove);
    EXPECT_NE(s, nullptr);
    return *s;
  }
  // Verify passed on the engine: whatever prove says, only the proof decides.
  void expect_verified(const RunRecord& r) {
    const StageResult* v = r.find_stage(StageId::verify);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->status, StageStatus::passed) << v->summary;
    EXPECT_EQ(r.verified_by, VerifiedBy::cpu_engine);
  }
  // The engine's summed count of the instruction whose text starts with `opcode`.
  const gpu::InstructionCount* count_of(const RunRecord& r, const std::string& opcode) {
    for (auto& c : r.verify->counts)
      if (starts_with(c.opcode, opcode)) return &c;
    return nullptr;
  }
  task::Task task_;
  gpu::FakeWorker gpu_, engine_;
  RunOptions opts_;
  fs::path dir_;
  int n_ = 0;
};

TEST_F(ProveEngine, TheEnginesExactCountsProveExecution) {
  floor("shfl.sync", "40");  // 8 warps x 5 shuffles on every case
  floor("red", "8");
  RunRecord r = run(kernel(kHonest));
  expect_verified(r);
  const StageResult& s = prove(r);
  ASSERT_EQ(s.status, StageStatus::passed) << s.summary;
  // The CPU sets of reduce_sum: 'small' shown, 'one' and 'tail' held back, one seed each.
  ASSERT_EQ(r.verify->cases.size(), 3u);
  EXPECT_NE(s.summary.find("and executed on the CPU engine (warp executions: shfl.sync 120, red 24, bar.sync 48)"),
            std::string::npos)
      << s.summary;
  EXPECT_EQ(r.executed_by, VerifiedBy::cpu_engine);
  EXPECT_TRUE(starts_with(r.executed_note, "counted by the CPU engine")) << r.executed_note;
  EXPECT_NE(r.executed_note.find("on size set small, 2 of them on held-back sizes"), std::string::npos) << r.executed_note;
  EXPECT_NE(r.executed_note.find("not the GPU's"), std::string::npos) << r.executed_note;
  EXPECT_EQ(r.executed_note.find("tail"), std::string::npos) << "the note names no held-back set: " << r.executed_note;
  ASSERT_EQ(r.proofs.size(), 3u);
  EXPECT_EQ(r.proofs[0].executed, true);
  EXPECT_EQ(r.proofs[0].executed_warps, 120u);
  EXPECT_EQ(r.proofs[0].min_warps, 40u);
  EXPECT_EQ(r.proofs[1].executed_warps, 24u);
  // Held-back cases are in the counts: the model reads the verdict without them.
  EXPECT_TRUE(s.held_back);
  EXPECT_EQ(s.text(Audience::model).find("120"), std::string::npos) << s.text(Audience::model);
  EXPECT_TRUE(r.passed) << r.verdict();
  // Per case: the counts of each case, not the sum (the floors are held per case).
  for (auto& c : r.verify->cases) EXPECT_EQ(c.executed.size(), r.verify->counts.size()) << c.size_set;
  // The record says whose counts these were, and reads back.
  auto back = record_from_json(render_report_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->executed_by, VerifiedBy::cpu_engine);
}

TEST_F(ProveEngine, ARequiredInstructionBehindANeverTakenBranchFails) {
  RunRecord r = run(kernel(kPerLane, kDeadShuffle));
  expect_verified(r);
  const StageResult& s = prove(r);
  EXPECT_EQ(s.status, StageStatus::failed) << s.summary;
  EXPECT_NE(s.summary.find("shfl.sync is in the"), std::string::npos) << s.summary;
  EXPECT_NE(s.summary.find("but never executed: the CPU engine counted no warp running it on any verify case"),
            std::string::npos)
      << s.summary;
  ASSERT_EQ(r.proofs.size(), 3u);
  EXPECT_EQ(r.proofs[0].executed, false);
  EXPECT_EQ(r.proofs[1].executed, true) << "the per-lane red ran";
  EXPECT_FALSE(r.passed);
}

TEST_F(ProveEngine, OneLaneOfOneWarpDoesNotMeetAFloorOfOnePerWarp) {
  floor("red", "8");
  RunRecord r = run(kernel(kOneLaneRed));
  expect_verified(r);
  // Every warp issued the red; one lane of one warp ran it: one warp execution per case.
  const gpu::InstructionCount* red = count_of(r, "red.shared");
  ASSERT_NE(red, nullptr);
  EXPECT_EQ(red->warp_issues, 3u) << "warp executions with a lane's guard true, over 3 cases";
  EXPECT_EQ(red->lane_executions, 3u);
  const StageResult& s = prove(r);
  EXPECT_EQ(s.status, StageStatus::failed) << s.summary;
  EXPECT_NE(s.summary.find("red ran 1 warp executions on size set 'small': 12% of the work the task needs of it (at "
                           "least 8 warp executions)"),
            std::string::npos)
      << s.summary;
  // Its held-back cases fall short too: the model is told without their names.
  EXPECT_TRUE(s.held_back);
  EXPECT_EQ(s.text(Audience::model),
            "a required instruction family did less of the work than the task needs on a held-back size: the required "
            "instructions do only part of the work");
  EXPECT_FALSE(r.passed);
}

TEST_F(ProveEngine, AnInstructionRunOnlyOnTheShownSizeFailsItsFloorOnTheHeldBackOnes) {
  floor("shfl.sync", "40");
  RunRecord r = run(kernel(kShuffleOnShownSize));
  expect_verified(r);
  const StageResult& s = prove(r);
  EXPECT_EQ(s.status, StageStatus::failed) << s.summary;
  EXPECT_EQ(s.summary.find("on size set 'small'"), std::string::npos) << "the shown set met the floor: " << s.summary;
  EXPECT_NE(s.summary.find("shfl.sync ran 0 warp executions on size set 'one' (held back)"), std::string::npos) << s.summary;
  EXPECT_TRUE(s.held_back);
  EXPECT_EQ(s.text(Audience::model).find("'one'"), std::string::npos) << s.text(Audience::model);
  EXPECT_EQ(s.text(Audience::model).find("tail"), std::string::npos) << s.text(Audience::model);
  EXPECT_EQ(r.proofs[0].executed_warps, 40u) << "the shown case's 40, nothing on the held-back ones";
  // Without a floor, having run at all is what "executed" asks, as on a GPU.
  task_.min_executed.clear();
  RunRecord again = run(kernel(kShuffleOnShownSize));
  EXPECT_EQ(prove(again).status, StageStatus::passed) << prove(again).summary;
}

TEST_F(ProveEngine, AnInstructionTheEngineDoesNotExecuteLeavesExecutionUnproven) {
  // An mma behind a branch no case takes: the engine refuses the whole kernel before it runs.
  task_.required_instructions = {"mma"};
  std::string mma = R"(
  setp.ne.u32 %p6, %r1, 2147483647;
  @%p6 bra NOMMA;
  mov.b32 %r13, 0;
  mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f19, %f20, %f21, %f22}, {%r13, %r13}, {%r13}, {%f1, %f1, %f1, %f1};
  add.f32 %f1, %f1, %f19;
NOMMA:
)";
  RunRecord r = run(kernel(kHonest, mma));
  const StageResult* v = r.find_stage(StageId::verify);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->status, StageStatus::skipped) << v->summary;
  const StageResult& s = prove(r);
  EXPECT_EQ(s.status, StageStatus::passed) << s.summary;
  EXPECT_TRUE(starts_with(r.executed_note, "execution not proven: not executed on the CPU engine: unsupported ("))
      << r.executed_note;
  EXPECT_EQ(r.executed_by, VerifiedBy::none);
  EXPECT_FALSE(r.proofs[0].executed.has_value());
  EXPECT_FALSE(r.passed) << "not verified";
}

}  // namespace
}  // namespace ptxforge::eval
