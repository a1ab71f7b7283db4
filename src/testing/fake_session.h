// Test support: a compile session folder written as the loop writes one (session.json; per
// round its summary, candidate, reply, feedback and run record), with a round left out or
// half written on request, for the tests of what reads sessions back (the session reader,
// the results store, `data fixit`, `ptxforge fixit`).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "agent/compile.h"
#include "agent/session.h"
#include "agent/session_layout.h"
#include "eval/record.h"
#include "util/text.h"

namespace ptxforge::testing {

// A fixture whose root_ is a fresh, empty folder named after the test.
class SessionFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/sessions-" + ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  std::string root_;
};

// The session's options: the suite's vector_add, `rounds` rounds, `samples` trajectories.
inline agent::CompileOptions fake_session_options(int rounds, int samples = 1) {
  agent::CompileOptions o;
  o.task_dir = std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add";
  o.model = "replay:x.json";
  o.rounds = rounds;
  o.samples = samples;
  o.run.arch = "sm_80";
  return o;
}

// Writes session.json into `dir` (created); returns `dir`.
inline std::string write_fake_session(const std::string& dir, agent::CompileOptions o) {
  std::filesystem::create_directories(dir);
  o.out = dir;  // a task outside the suite is saved relative to the session
  (void)write_file(agent::layout::session_options(dir), agent::session_options_json(o));
  return dir;
}

struct FakeRound {
  bool extracted = true;  // a candidate came back and was evaluated: candidate, record
  bool assembled = false, passed = false, no_gpu = false;
  bool summary = true;    // round.json
  bool record = true;     // result.json, where extracted
  bool cuda = false;      // candidate.cu rather than candidate.ptx
};

inline eval::StageResult fake_stage(eval::StageId id, eval::StageStatus status, std::string summary, double seconds) {
  eval::StageResult s;
  s.id = id;
  s.status = status;
  s.summary = std::move(summary);
  s.seconds = seconds;
  return s;
}

// The run record a round of that kind would hold: check (and assemble, verify) as the
// summary says, one proof, one diagnostic when the check failed.
inline eval::RunRecord fake_record(const FakeRound& f, int round) {
  eval::RunRecord r;
  r.task = "level1/vector_add";
  r.candidate = f.cuda ? "candidate.cu" : "candidate.ptx";
  r.arch = "sm_80";
  r.seed = 1000 + round;
  bool checked = f.assembled || f.passed;
  r.stages.push_back(fake_stage(eval::StageId::check, checked ? eval::StageStatus::passed : eval::StageStatus::failed, "", 0.001));
  if (checked)
    r.stages.push_back(fake_stage(eval::StageId::assemble, f.assembled ? eval::StageStatus::passed : eval::StageStatus::failed, "", 0.2));
  if (f.passed) r.stages.push_back(fake_stage(eval::StageId::verify, eval::StageStatus::passed, "2 size sets", 1));
  if (!checked) r.diagnostics.error({3, 1}, "register '%r9' is not declared", "undeclared-reg");
  r.source_name = r.candidate;
  r.source_text = "a\nb\nmov.u32 %r9, 0;\n";
  eval::InstructionProof p;
  p.family = "ld.global";
  p.in_ptx = true;
  p.in_sass = f.assembled;
  r.proofs.push_back(p);
  r.gpu_verified = f.passed;
  r.passed = f.passed;
  return r;
}

// Writes round `n` of the trajectory folder `traj` (sample `sample`).
inline void write_fake_round(const std::string& traj, int sample, int n, const FakeRound& f = {}) {
  std::string d = agent::layout::round(traj, n);
  std::filesystem::create_directories(d);
  (void)write_file(agent::layout::reply(d), "reply of round " + std::to_string(n) + "\n");
  (void)write_file(agent::layout::feedback(d), "feedback on round " + std::to_string(n) + "\n");
  if (f.extracted) {
    (void)write_file(agent::layout::candidate(d, f.cuda), "// kernel of round " + std::to_string(n) + "\n");
    if (f.record) (void)write_file(agent::layout::result(d), eval::render_report_json(fake_record(f, n)));
  }
  if (!f.summary) return;
  agent::RoundSummary s;
  s.round = n;
  s.sample = sample;
  s.extracted = f.extracted;
  s.passed = f.passed;
  s.gpu_verified = f.passed;
  s.assembled = f.assembled;
  s.no_gpu = f.no_gpu;
  s.verdict = f.passed ? "verified" : "failed in round " + std::to_string(n);
  s.seed = 1000 + n;
  if (f.extracted) s.candidate = agent::layout::candidate(d, f.cuda);
  (void)agent::save_round(d, s);
}

}  // namespace ptxforge::testing
