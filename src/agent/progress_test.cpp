// The history section of a round's feedback: silent in round 1; a regression beyond the noise
// margin, or a failure after a verified round, names the best verified round as the base; a
// round verified on the CPU engine alone is never faster than anything; the best kernel's text
// comes only under the budget; the base (nvcc or library) decides; held-back sets never appear;
// and summaries read back from disk (a resumed session) give the same words.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "agent/compile.h"
#include "agent/progress.h"
#include "util/text.h"

namespace ptxforge::agent {
namespace {

namespace fs = std::filesystem;

RoundSummary timed(int round, double vs_nvcc, double vs_library = 0) {
  RoundSummary s;
  s.round = round;
  s.verdict = "passed";
  s.extracted = s.assembled = s.passed = s.gpu_verified = true;
  s.speedup_vs_nvcc = vs_nvcc;
  s.speedup_vs_library = vs_library;
  s.registers = 40 + round;
  s.spill_bytes = 0;
  return s;
}

RoundSummary failed(int round, const std::string& stage, bool assembled = false) {
  RoundSummary s;
  s.round = round;
  s.extracted = true;
  s.assembled = assembled;
  s.stage = stage;
  s.verdict = "FAILED at " + stage;
  return s;
}

RoundSummary on_engine(int round) {
  RoundSummary s;
  s.round = round;
  s.verdict = "passed on the CPU engine";
  s.extracted = s.assembled = s.passed = s.on_engine = true;
  s.no_gpu = true;
  // Never measured on the engine; a stray number must still not make it "faster".
  s.speedup_vs_nvcc = 9;
  return s;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Progress, NothingInTheFirstRound) {
  EXPECT_EQ(progress_section({}, timed(1, 0.8), SpeedupBase::nvcc), "");
  EXPECT_EQ(progress_section({}, failed(1, "check"), SpeedupBase::library), "");
  EXPECT_NE(progress_section({timed(1, 0.8)}, timed(2, 0.9), SpeedupBase::nvcc), "") << "from round 2 on";
}

TEST(Progress, ARegressionNamesTheBestRoundAsTheBase) {
  std::string text = progress_section({timed(1, 0.79), timed(2, 0.70)}, timed(3, 0.56), SpeedupBase::nvcc);
  EXPECT_TRUE(has(text, "## Your rounds so far\n")) << text;
  EXPECT_TRUE(has(text, "| 1 (best) | passed | 0.79x nvcc | 41 | 0 |\n")) << text;
  EXPECT_TRUE(has(text, "| 3 (this round) | passed | 0.56x nvcc | 43 | 0 |\n")) << text;
  EXPECT_TRUE(has(text, "Round 2 -> 3: 0.70x -> 0.56x nvcc, 20% slower.\n")) << "against the previous timed round: " << text;
  EXPECT_TRUE(has(text, "slower than round 1 (0.79x nvcc), the fastest verified kernel so far")) << text;
  EXPECT_TRUE(has(text, "Start from round 1's kernel (your reply in round 1), not this one.\n")) << text;
  EXPECT_FALSE(has(text, "round 2's kernel")) << "the previous round is not the best";
}

TEST(Progress, AnImprovementIsNotCalledARegression) {
  std::string text = progress_section({timed(1, 0.79)}, timed(2, 0.90), SpeedupBase::nvcc);
  EXPECT_TRUE(has(text, "Round 1 -> 2: 0.79x -> 0.90x nvcc, 14% faster.\n")) << text;
  EXPECT_TRUE(has(text, "| 2 (this round) |")) << text;
  EXPECT_FALSE(has(text, "(best)")) << "this round is the best: no other row is marked";
  EXPECT_FALSE(has(text, "Start from")) << text;
}

TEST(Progress, TiesWithinTheMarginAreNotRegressions) {
  // 2% below the best: noise.
  std::string tie = progress_section({timed(1, 1.00)}, timed(2, 0.98), SpeedupBase::nvcc);
  EXPECT_TRUE(has(tie, "about the same (within the 3% noise margin)")) << tie;
  EXPECT_FALSE(has(tie, "Start from")) << tie;
  // 4% below: a regression.
  std::string worse = progress_section({timed(1, 1.00)}, timed(2, 0.96), SpeedupBase::nvcc);
  EXPECT_TRUE(has(worse, "4% slower")) << worse;
  EXPECT_TRUE(has(worse, "Start from round 1's kernel")) << worse;
  // Within the margin of the previous round, but beyond it below the best: still a regression.
  std::string drift = progress_section({timed(1, 1.00), timed(2, 0.90)}, timed(3, 0.91), SpeedupBase::nvcc);
  EXPECT_TRUE(has(drift, "Round 2 -> 3: 0.90x -> 0.91x nvcc, about the same")) << drift;
  EXPECT_TRUE(has(drift, "Start from round 1's kernel")) << drift;
}

TEST(Progress, AFailureAfterAVerifiedRoundNamesTheVerifiedOne) {
  std::string text = progress_section({timed(1, 0.5), timed(2, 0.8), failed(3, "check")}, failed(4, "verify", true),
                                      SpeedupBase::nvcc);
  EXPECT_TRUE(has(text, "| 3 | failed at check | - | - | - |\n")) << text;
  EXPECT_TRUE(has(text, "| 4 (this round) | failed at verify | - | 0 | 0 |\n")) << text;
  EXPECT_TRUE(has(text, "This round failed; round 2 is the best verified kernel so far (0.80x nvcc).")) << text;
  EXPECT_TRUE(has(text, "Start from round 2's kernel")) << text;
  EXPECT_FALSE(has(text, "->")) << "no change in speed without a timed round now: " << text;
  // A reply with no kernel after a verified round, too.
  RoundSummary none = failed(2, "extract");
  EXPECT_TRUE(has(progress_section({timed(1, 0.7)}, none, SpeedupBase::nvcc), "| 2 (this round) | no usable kernel |"));
  EXPECT_TRUE(has(progress_section({timed(1, 0.7)}, none, SpeedupBase::nvcc), "Start from round 1's kernel"));
  // Failures with nothing verified before: the table, and no base to name.
  std::string nothing = progress_section({failed(1, "check")}, failed(2, "assemble"), SpeedupBase::nvcc);
  EXPECT_TRUE(has(nothing, "| 1 | failed at check |")) << nothing;
  EXPECT_FALSE(has(nothing, "Start from")) << nothing;
}

TEST(Progress, EngineOnlyRoundsAreNeverFaster) {
  RoundSummary engine = on_engine(1), gpu = timed(2, 0.5);
  EXPECT_TRUE(better_round(gpu, engine, SpeedupBase::nvcc));
  EXPECT_FALSE(better_round(engine, gpu, SpeedupBase::nvcc)) << "its stray 9x is no measurement";
  EXPECT_FALSE(timed_toward(engine, SpeedupBase::nvcc));
  std::string text = progress_section({engine}, gpu, SpeedupBase::nvcc);
  EXPECT_TRUE(has(text, "| 1 | passed on the CPU engine | not timed (CPU engine) |")) << text;
  EXPECT_FALSE(has(text, "Start from")) << "a GPU-timed round is not slower than an untimed one: " << text;
  EXPECT_FALSE(has(text, "->")) << text;
  // Once a GPU-timed round exists, an engine-only round after it is no regression and no best.
  std::string later = progress_section({gpu}, on_engine(3), SpeedupBase::nvcc);
  EXPECT_TRUE(has(later, "| 2 (best) | passed | 0.50x nvcc |")) << later;
  EXPECT_FALSE(has(later, "Start from")) << later;
  // Verified on a GPU but not timed ranks above the engine, below any timed round.
  RoundSummary untimed = timed(4, 0);
  EXPECT_TRUE(better_round(untimed, engine, SpeedupBase::nvcc));
  EXPECT_FALSE(better_round(untimed, gpu, SpeedupBase::nvcc));
  EXPECT_FALSE(better_round(engine, untimed, SpeedupBase::nvcc));
}

TEST(Progress, TheSessionsBestOrderForRoundsThatDidNotPass) {
  EXPECT_TRUE(better_round(failed(2, "verify", true), failed(1, "check"), SpeedupBase::nvcc)) << "assembled over not";
  EXPECT_FALSE(better_round(failed(2, "check"), failed(1, "verify", true), SpeedupBase::nvcc));
  EXPECT_FALSE(better_round(failed(2, "verify", true), failed(1, "time", true), SpeedupBase::nvcc)) << "first kept";
  EXPECT_TRUE(better_round(on_engine(2), failed(1, "time", true), SpeedupBase::nvcc)) << "any verified over failed";
  EXPECT_FALSE(better_round(timed(2, 1.0), timed(1, 1.0), SpeedupBase::nvcc)) << "a tie keeps the earlier";
}

class ProgressKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/progress-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/round-01");
    best_ = timed(1, 1.0);
    best_.candidate = dir_ + "/round-01/candidate.ptx";
    ASSERT_TRUE(write_file(best_.candidate, kernel_).ok());
  }
  std::string dir_;
  const std::string kernel_ = ".version 8.0\n.target sm_90a\n.address_size 64\n// the round-1 kernel\n";
  RoundSummary best_;
};

TEST_F(ProgressKernel, TheBestKernelIsShownOnlyUnderTheBudget) {
  std::string text = progress_section({best_}, timed(2, 0.5), SpeedupBase::nvcc);
  EXPECT_TRUE(has(text, "Start from round 1's kernel, not this one:\n```ptx\n" + kernel_ + "```\n")) << text;
  EXPECT_LE(text.size(), kProgressMaxChars);
  EXPECT_EQ(progress_section({best_}, timed(2, 0.5), SpeedupBase::nvcc, text.size()), text) << "exactly at the budget";
  std::string tight = progress_section({best_}, timed(2, 0.5), SpeedupBase::nvcc, text.size() - 1);
  EXPECT_FALSE(has(tight, "the round-1 kernel")) << tight;
  EXPECT_TRUE(has(tight, "Start from round 1's kernel (your reply in round 1), not this one.\n")) << tight;
  EXPECT_LT(tight.size(), text.size());
  // A missing file: the round is named, nothing invented.
  fs::remove(best_.candidate);
  std::string gone = progress_section({best_}, failed(2, "verify"), SpeedupBase::nvcc);
  EXPECT_TRUE(has(gone, "(your reply in round 1)")) << gone;
  EXPECT_FALSE(has(gone, "```")) << gone;
  // No advice, no kernel.
  ASSERT_TRUE(write_file(best_.candidate, kernel_).ok());
  EXPECT_FALSE(has(progress_section({best_}, timed(2, 1.5), SpeedupBase::nvcc), "the round-1 kernel"));
}

TEST_F(ProgressKernel, ACudaRoundIsFencedAsCuda) {
  best_.candidate = dir_ + "/round-01/candidate.cu";
  ASSERT_TRUE(write_file(best_.candidate, "__global__ void k() {}").ok());
  std::string text = progress_section({best_}, failed(2, "assemble"), SpeedupBase::nvcc);
  EXPECT_TRUE(has(text, "```cuda\n__global__ void k() {}\n```\n")) << text;
}

TEST(Progress, TheBaseDecidesWhatIsARegression) {
  // Faster than nvcc's kernel but slower than the library's, and the other way round.
  std::vector<RoundSummary> earlier = {timed(1, 1.20, 0.50)};
  RoundSummary now = timed(2, 1.00, 0.60);
  std::string nvcc = progress_section(earlier, now, SpeedupBase::nvcc);
  EXPECT_TRUE(has(nvcc, "Round 1 -> 2: 1.20x -> 1.00x nvcc, 17% slower.")) << nvcc;
  EXPECT_TRUE(has(nvcc, "Start from round 1's kernel")) << nvcc;
  std::string library = progress_section(earlier, now, SpeedupBase::library);
  EXPECT_TRUE(has(library, "Round 1 -> 2: 0.50x -> 0.60x the library, 20% faster.")) << library;
  EXPECT_TRUE(has(library, "| 2 (this round) | passed | 0.60x the library |")) << library;
  EXPECT_FALSE(has(library, "Start from")) << library;
  EXPECT_FALSE(has(library, "nvcc")) << library;
  // No library time for a round: not timed against that base.
  std::string none = progress_section({timed(1, 1.2, 0)}, timed(2, 1.0, 0.5), SpeedupBase::library);
  EXPECT_TRUE(has(none, "| 1 | passed | not timed |")) << none;
  EXPECT_FALSE(has(none, "Start from")) << none;
}

TEST(Progress, HeldBackSetsAndVerdictsNeverAppear) {
  RoundSummary hidden = failed(2, "verify", true);
  hidden.verdict = "FAILED at verify: size set 'odd' (held back), seed 2: 'c' 3 of 1000003 elements wrong";
  RoundSummary hidden_now = failed(3, "time", true);
  hidden_now.verdict = "FAILED at time: size set 'tail' trial 4";
  std::string text = progress_section({timed(1, 0.9), hidden}, hidden_now, SpeedupBase::nvcc);
  for (auto word : {"odd", "tail", "1000003", "held back", "seed", "FAILED"}) EXPECT_FALSE(has(text, word)) << word << "\n" << text;
  EXPECT_TRUE(has(text, "| 3 (this round) | failed at time |")) << text;
}

TEST(Progress, LongSessionsKeepTheRecentRoundsAndTheBest) {
  std::vector<RoundSummary> earlier = {timed(1, 2.0)};
  for (int r = 2; r <= 14; ++r) earlier.push_back(timed(r, 1.0));
  std::string text = progress_section(earlier, timed(15, 1.0), SpeedupBase::nvcc);
  EXPECT_TRUE(has(text, "| 1 (best) | passed | 2.00x nvcc |")) << text;
  EXPECT_FALSE(has(text, "| 2 |")) << "older rounds drop out: " << text;
  EXPECT_FALSE(has(text, "| 4 |")) << text;
  EXPECT_TRUE(has(text, "| 5 |")) << text;
  EXPECT_TRUE(has(text, "| 14 |")) << text;
  EXPECT_TRUE(has(text, "Start from round 1's kernel")) << text;
}

TEST(Progress, SummariesReadBackGiveTheSameSection) {
  std::string dir = ::testing::TempDir() + "/progress-resume";
  fs::remove_all(dir);
  std::vector<RoundSummary> rounds = {timed(1, 0.79, 0.6), failed(2, "check"), timed(3, 0.5, 0.4), on_engine(4)};
  std::vector<RoundSummary> loaded;
  for (auto& s : rounds) {
    std::string d = fmt::format("{}/round-{:02}", dir, s.round);
    fs::create_directories(d);
    s.candidate = d + "/candidate.ptx";
    ASSERT_TRUE(write_file(s.candidate, fmt::format("// kernel of round {}\n", s.round)).ok());
    ASSERT_TRUE(save_round(d, s).ok());
    auto back = load_round(d);
    ASSERT_TRUE(back.has_value());
    loaded.push_back(*back);
  }
  RoundSummary now = failed(5, "verify", true);
  for (auto base : {SpeedupBase::nvcc, SpeedupBase::library}) {
    std::string fresh = progress_section(rounds, now, base), resumed = progress_section(loaded, now, base);
    EXPECT_EQ(fresh, resumed);
    EXPECT_TRUE(has(fresh, "// kernel of round 1")) << fresh;
  }
}

}  // namespace
}  // namespace ptxforge::agent
