// Seeds in a compile session: each round draws its own base seed (derived from --seed when
// given), records it in round.json, result.json and report.json, and session.json keeps
// --seed for resume. The feedback of a round that failed while timed says so, without seeds.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "agent/compile.h"
#include "agent/feedback.h"
#include "agent/session_layout.h"
#include "task/seeds.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
const std::string kRoot = PTXFORGE_SOURCE_DIR;

TEST(RoundSeed, DerivedFromTheSessionSeedElseFresh) {
  EXPECT_EQ(round_seed(42, 1, 1), round_seed(42, 1, 1));
  std::set<uint64_t> seen;
  for (int sample = 1; sample <= 3; ++sample)
    for (int round = 1; round <= 8; ++round) seen.insert(round_seed(42, sample, round));
  EXPECT_EQ(seen.size(), 24u) << "every round of every sample has its own inputs";
  EXPECT_NE(round_seed(42, 1, 1), round_seed(43, 1, 1));
  EXPECT_NE(round_seed(std::nullopt, 1, 1), round_seed(std::nullopt, 1, 1)) << "fresh without --seed";
}

TEST(RoundSeed, RoundJsonKeepsTheSeedExactly) {
  std::string dir = ::testing::TempDir() + "/round-seed";
  fs::create_directories(dir);
  RoundSummary s;
  s.round = 1;
  s.verdict = "passed";
  s.seed = UINT64_MAX;
  ASSERT_TRUE(save_round(dir, s).ok());
  auto text = read_file(layout::summary(dir));
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(json::parse(*text)["seed"], "18446744073709551615");
  auto back = load_round(dir);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->seed, UINT64_MAX);
}

class SessionSeeds : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
    dir_ = ::testing::TempDir() + "/seeds-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    std::string broken = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
    broken.replace(broken.find("add.f32 %z, %x, %y;"), 19, "add.f32 %z, %x, %w;");
    std::string reply = "```ptx\n" + broken + "```\n";
    ASSERT_TRUE(write_file(dir_ + "-replies.json", json({{"replies", {reply, reply}}}).dump()).ok());
  }
  CompileOptions options() {
    CompileOptions o;
    o.task_dir = kRoot + "/tasks/level1/vector_add";
    o.model = "replay:" + dir_ + "-replies.json";
    o.out = dir_;
    o.rounds = 2;
    o.cache = false;
    o.prompt.knowledge = KnowledgeLevel::hardware;
    o.hardware_profile = "h200";
    return o;
  }
  std::vector<std::string> no_gpu() {
    return {"/bin/sh", "-c",
            R"(while read l; do echo '{"failure":{"kind":"driver","message":"no CUDA driver"},"fatal":false}'; done)"};
  }
  uint64_t seed_in(const std::string& file) {
    auto text = read_file(file);
    EXPECT_TRUE(text.ok()) << file;
    if (!text) return 0;
    auto s = task::parse_seed(json::parse(*text)["seed"].get<std::string>());
    return s ? *s : 0;
  }
  std::string dir_;
};

TEST_F(SessionSeeds, EveryRoundRecordsTheSeedItDrew) {
  CompileOptions o = options();
  o.run.seed = 77;
  auto res = compile(o, llm::make_provider, no_gpu());
  ASSERT_TRUE(res.ok()) << res.error().message;
  ASSERT_EQ(res->rounds.size(), 2u);
  for (int r = 1; r <= 2; ++r) {
    std::string d = layout::round(dir_, r);
    EXPECT_EQ(seed_in(layout::summary(d)), round_seed(77, 1, r)) << "round.json of round " << r;
    EXPECT_EQ(seed_in(layout::result(d)), round_seed(77, 1, r)) << "result.json of round " << r;
    EXPECT_EQ(res->rounds[static_cast<size_t>(r - 1)].seed, round_seed(77, 1, r));
  }
  auto report = json::parse(*read_file(layout::report(dir_)));
  EXPECT_EQ(report["rounds"][1]["seed"], task::seed_text(round_seed(77, 1, 2)));
  auto session = json::parse(*read_file(layout::session_options(dir_)));
  EXPECT_EQ(session["seed"], "77");
  auto back = session_options_from(session.dump(), dir_);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->run.seed, std::optional<uint64_t>(77)) << "--seed comes back on resume";
  for (auto& r : res->rounds) {
    auto fb = read_file(layout::feedback(layout::round(dir_, r.round)));
    ASSERT_TRUE(fb.ok());
    EXPECT_EQ(fb->find(task::seed_text(r.seed)), std::string::npos) << "the model never sees a seed";
  }
}

TEST_F(SessionSeeds, WithoutASeedEachRoundDrawsAFreshOne) {
  auto res = compile(options(), llm::make_provider, no_gpu());
  ASSERT_TRUE(res.ok()) << res.error().message;
  ASSERT_EQ(res->rounds.size(), 2u);
  EXPECT_NE(res->rounds[0].seed, res->rounds[1].seed);
  EXPECT_NE(res->rounds[0].seed, 0u);
  auto session = json::parse(*read_file(layout::session_options(dir_)));
  EXPECT_TRUE(session["seed"].is_null());
  auto back = session_options_from(session.dump(), dir_);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->run.seed.has_value());
}

TEST(FeedbackTiming, AFailedTimedTrialIsReportedInsteadOfTimes) {
  task::Task t = *task::load_task(kRoot + "/tasks/level1/vector_add");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  r.seed = 987654321;
  eval::StageResult& time = r.stage(eval::StageId::time);
  time.status = eval::StageStatus::failed;
  time.summary = "timed trial 9 of 40 on size set 'large' (input set 4): 'c': 16777216 of 16777216 elements wrong";
  gpu::TimeReport tr;
  gpu::SizeTiming st;
  st.size_set = "large";
  st.candidate.median_ms = 0.003;
  tr.sizes.push_back(st);
  tr.trials_pass = false;
  tr.trial_problem = time.summary;
  r.time = tr;
  std::string fb = feedback_for(t, r, hw);
  EXPECT_NE(fb.find("## Wrong results while timed\n- timed trial 9 of 40"), std::string::npos) << fb;
  EXPECT_EQ(fb.find("## Performance"), std::string::npos) << "times of a kernel that skipped work mean nothing";
  EXPECT_EQ(fb.find("987654321"), std::string::npos);
}

}  // namespace
}  // namespace ptxforge::agent
