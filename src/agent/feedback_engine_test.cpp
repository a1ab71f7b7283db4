// Feedback on a round the CPU engine judged: the model is told which engine verified, a
// shown case's wrong elements come with their indices, values and last writer, and a
// held-back case (or finding) stays hidden exactly as on a GPU: no index, value, thread or line.
#include <gtest/gtest.h>

#include "agent/feedback.h"
#include "task/task_spec.h"

namespace ptxforge::agent {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;

gpu::WrongElement wrong(uint64_t index, std::vector<int64_t> at, std::string expected, std::string actual, uint32_t cta,
                        uint32_t thread, uint32_t line) {
  gpu::WrongElement w;
  w.output = "c";
  w.index = index;
  w.multi_index = std::move(at);
  w.expected = std::move(expected);
  w.actual = std::move(actual);
  w.writer = gpu::WrongElement::Writer{gpu::EmuThread{{cta, 0, 0}, {thread, 0, 0}}, line};
  return w;
}

gpu::CaseResult failing(const std::string& set, bool shown, gpu::WrongElement w) {
  gpu::CaseResult c;
  c.size_set = set;
  c.shown = shown;
  c.seed_index = 1;
  task::Comparison cmp;
  cmp.output = "c";
  cmp.count = 4099;
  cmp.mismatches = 1;
  cmp.pass = false;
  c.outputs.push_back(cmp);
  c.wrong.push_back(std::move(w));
  return c;
}

class EngineFeedback : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = task::load_task(kRoot + "/tasks/level1/vector_add");
    ASSERT_TRUE(t.ok()) << t.error().message;
    task_ = *t;
    hw_ = *find_hardware("h200");
  }
  task::Task task_;
  Hardware hw_;
};

TEST_F(EngineFeedback, AShownCaseNamesTheWrongElementAndItsWriter) {
  eval::RunRecord r;
  gpu::VerifyReport v;
  v.engine = gpu::Engine::cpu;
  v.cases.push_back(failing("small", true, wrong(1041, {}, "3.5", "0.25", 4, 17, 44)));
  r.verify = v;
  eval::StageResult& s = r.stage(eval::StageId::verify);
  s.status = eval::StageStatus::failed;
  s.summary = "size set 'small', seed 1: 'c' has 1 of 4099 elements wrong";
  std::string fb = feedback_for(task_, r, hw_);
  EXPECT_NE(fb.find("Run on the CPU engine"), std::string::npos) << fb;
  EXPECT_NE(fb.find("On size set 'small', seed 1:"), std::string::npos) << fb;
  EXPECT_NE(fb.find("  'c'[1041]: expected 3.5, got 0.25, last written by thread (17,0,0) of CTA (4,0,0) at line 44\n"),
            std::string::npos)
      << fb;
}

TEST_F(EngineFeedback, AHeldBackCaseKeepsItsElementsHidden) {
  eval::RunRecord r;
  gpu::VerifyReport v;
  v.engine = gpu::Engine::cpu;
  v.cases.push_back(failing("odd", false, wrong(999983, {}, "0.123", "7.5", 3906, 47, 44)));
  r.verify = v;
  eval::StageResult& s = r.stage(eval::StageId::verify);
  s.status = eval::StageStatus::failed;
  s.summary = "size set 'odd' (held back), seed 1: ...";
  s.held_back = true;
  s.model_summary = "a held-back size, seed 1: output 'c' is wrong";
  std::string fb = feedback_for(task_, r, hw_);
  EXPECT_NE(fb.find("On a held-back size (not shown to you), seed 1:"), std::string::npos) << fb;
  for (const char* leak : {"999983", "0.123", "7.5", "3906", "(47,0,0)", "line 44", "'odd'"})
    EXPECT_EQ(fb.find(leak), std::string::npos) << "'" << leak << "' of a held-back case reached the model:\n" << fb;
}

TEST_F(EngineFeedback, AHeldBackFindingGivesItsClassAndCheckOnly) {
  eval::RunRecord r;
  gpu::Failure f{gpu::FailureKind::race, "solution.ptx:31:5: write of 4 bytes races with a read (thread (6,0,0) of CTA (3,0,0))",
                 "size set 'odd', seed 1"};
  f.held_back = true;
  f.finding = gpu::EmuFinding{"emu-race", 31, 5, gpu::EmuThread{{3, 0, 0}, {6, 0, 0}}, "c", 24, std::nullopt};
  r.failure = f;
  eval::StageResult& s = r.stage(eval::StageId::verify);
  s.status = eval::StageStatus::failed;
  s.summary = "race: ...";
  s.held_back = true;
  s.model_summary = "race: a data race (on a held-back size, not shown to you)";
  std::string fb = feedback_for(task_, r, hw_);
  EXPECT_NE(fb.find("## Runtime failure (race)\nrace: a data race: two threads access one address, one writes, nothing orders "
                    "them [emu-race] — on a held-back size (not shown to you)"),
            std::string::npos)
      << fb;
  for (const char* leak : {"31:5", "(6,0,0)", "(3,0,0)", "'odd'"})
    EXPECT_EQ(fb.find(leak), std::string::npos) << "'" << leak << "' of a held-back finding reached the model:\n" << fb;
}

TEST_F(EngineFeedback, AShownFindingGivesItsLineThreadAndCheck) {
  eval::RunRecord r;
  gpu::Failure f{gpu::FailureKind::uninitialized,
                 "solution.ptx:40:3: a value read from never-written shared memory decided a branch (thread (1,0,0) of CTA (0,0,0))",
                 "size set 'small', seed 1"};
  f.finding = gpu::EmuFinding{"emu-uninit", 40, 3, gpu::EmuThread{{0, 0, 0}, {1, 0, 0}}, "", 0, std::nullopt};
  r.failure = f;
  r.stage(eval::StageId::verify).status = eval::StageStatus::failed;
  std::string fb = feedback_for(task_, r, hw_);
  EXPECT_NE(fb.find("## Runtime failure (uninitialized)\nsolution.ptx:40:3: a value read from never-written shared memory "
                    "decided a branch (thread (1,0,0) of CTA (0,0,0)) [emu-uninit] — size set 'small', seed 1"),
            std::string::npos)
      << fb;
}

TEST_F(EngineFeedback, TheModelIsToldWhichEngineVerified) {
  eval::RunRecord r;
  r.stage(eval::StageId::verify).status = eval::StageStatus::passed;
  r.verified_by = eval::VerifiedBy::cpu_engine;
  r.passed = true;
  std::string fb = feedback_for(task_, r, hw_);
  EXPECT_NE(fb.find("Result: passed (verified on the CPU engine)"), std::string::npos) << fb;
  EXPECT_NE(fb.find("not on a GPU"), std::string::npos) << fb;
  r.verified_by = eval::VerifiedBy::gpu;
  r.gpu_verified = true;
  std::string on_gpu = feedback_for(task_, r, hw_);
  EXPECT_NE(on_gpu.find("Verified on a GPU."), std::string::npos) << on_gpu;
  EXPECT_EQ(on_gpu.find("CPU engine"), std::string::npos) << on_gpu;
}

}  // namespace
}  // namespace ptxforge::agent
