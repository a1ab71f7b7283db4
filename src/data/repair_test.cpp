#include "data/repair.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "agent/session.h"
#include "agent/session_layout.h"
#include "testing/fake_session.h"
#include "util/text.h"

namespace ptxforge::data {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = PTXFORGE_SOURCE_DIR;

// A session folder written the way compile writes one: session.json, and per round its
// summary, candidate and feedback.
class FindFailures : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/failures-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
  }
  std::string session(const std::string& name, int samples) {
    std::string dir = root_ + "/" + name;
    fs::create_directories(dir);
    agent::CompileOptions o;
    o.task_dir = kRoot + "/tasks/level1/vector_add";
    o.model = "replay:x.json";
    o.samples = samples;
    o.run.arch = "sm_80";
    EXPECT_TRUE(write_file(agent::layout::session_options(dir), agent::session_options_json(o)).ok());
    return dir;
  }
  void round(const std::string& traj, int n, bool passed, bool assembled, bool no_gpu, bool files = true) {
    std::string d = agent::layout::round(traj, n);
    fs::create_directories(d);
    agent::RoundSummary s;
    s.round = n;
    s.extracted = true;
    s.passed = passed;
    s.gpu_verified = passed;
    s.assembled = assembled;
    s.no_gpu = no_gpu;
    s.verdict = passed ? "verified" : "failed in round " + std::to_string(n);
    ASSERT_TRUE(agent::save_round(d, s).ok());
    if (!files) return;
    ASSERT_TRUE(write_file(agent::layout::candidate(d, false), "// kernel of round " + std::to_string(n) + "\n").ok());
    ASSERT_TRUE(write_file(agent::layout::feedback(d), "feedback on round " + std::to_string(n) + "\n").ok());
  }
  std::string root_;
};

TEST_F(FindFailures, TheLastRoundOfEveryTrajectoryThatNeverPassedIsRepaired) {
  std::string a = session("a-failed", 1);
  round(a, 1, false, false, false);
  round(a, 2, false, true, false);  // assembled, then failed verify on the GPU
  std::string b = session("b-verified", 1);
  round(b, 1, false, false, false);
  round(b, 2, true, true, false);
  std::string c = session("c-two-samples", 2);
  round(agent::layout::trajectory(c, 1, 2), 1, false, true, true);  // assembled, no GPU: not known to fail
  round(agent::layout::trajectory(c, 2, 2), 1, false, false, true);
  std::vector<std::string> skipped;
  auto f = find_failures({root_}, skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].session, a);
  EXPECT_EQ(f[0].round, 2);
  EXPECT_EQ(f[0].candidate, "// kernel of round 2\n");
  EXPECT_EQ(f[0].feedback, "feedback on round 2\n");
  EXPECT_TRUE(f[0].assembled);
  EXPECT_EQ(f[0].task, "level1/vector_add");
  EXPECT_EQ(f[0].options.run.arch, "sm_80") << "the repair runs as the failed session did";
  EXPECT_EQ(fs::weakly_canonical(f[0].options.task_dir), fs::weakly_canonical(kRoot + "/tasks/level1/vector_add"));
  EXPECT_EQ(f[1].session, c);
  EXPECT_EQ(f[1].sample, 2);
  EXPECT_FALSE(f[1].assembled);
}

TEST_F(FindFailures, ARoundWithoutItsFilesOrASessionThatDoesNotLoadIsSkippedWithTheReason) {
  std::string a = session("a", 1);
  round(a, 1, false, false, false, /*files=*/false);
  std::string b = root_ + "/b";
  fs::create_directories(b);
  ASSERT_TRUE(write_file(agent::layout::session_options(b), "{not json").ok());
  std::vector<std::string> skipped;
  EXPECT_TRUE(find_failures({root_}, skipped).empty());
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_NE(skipped[0].find("has no PTX candidate"), std::string::npos) << skipped[0];
  EXPECT_EQ(skipped[1].rfind(b + ": ", 0), 0u) << skipped[1];
}

// The round bound is the session's own count: a fix in round 101 means no failure (the old
// bound of 100 repaired round 100 of a session that had succeeded), and rounds after a gap
// are read, the gap reported.
TEST_F(FindFailures, EveryRoundUpToTheSessionsCountCountsAndAGapIsReported) {
  std::string a = testing::write_fake_session(root_ + "/a-long", testing::fake_session_options(101));
  for (int n = 1; n <= 101; ++n) testing::write_fake_round(a, 1, n, {.assembled = n == 101, .passed = n == 101});
  std::string b = testing::write_fake_session(root_ + "/b-gap", testing::fake_session_options(3));
  testing::write_fake_round(b, 1, 1);
  testing::write_fake_round(b, 1, 3, {.assembled = true});
  std::vector<std::string> skipped;
  auto f = find_failures({root_}, skipped);
  ASSERT_EQ(f.size(), 1u) << "a-long succeeded in round 101";
  EXPECT_EQ(f[0].session, b);
  EXPECT_EQ(f[0].round, 3) << "the last evaluated round, past the gap";
  EXPECT_TRUE(f[0].assembled);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("round-02: missing, though round 3 follows"), std::string::npos) << skipped[0];
}

}  // namespace
}  // namespace ptxforge::data
