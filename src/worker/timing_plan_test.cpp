// The timing plan without a GPU: the seed-drawn number of input sets and trial cap, the
// input-set rotation, the judgement of the GPU's per-trial mismatch counts and the words of a
// failed check.
#include "worker/timing_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "task/seeds.h"

namespace ptxforge::gpu {
namespace {

TEST(TimingPlan, TheRotationUsesEverySetEquallyAndNeverTwiceInARow) {
  for (int sets : {2, 3, 8}) {
    Rotation rot(sets, 0xABCDEF);
    std::map<int, int> uses;
    int previous = -1;
    for (int t = 0; t < sets * 50; ++t) {
      int s = rot.set_for(t);
      ASSERT_GE(s, 0);
      ASSERT_LT(s, sets);
      EXPECT_NE(s, previous) << "trial " << t << " with " << sets << " sets";
      previous = s;
      ++uses[s];
    }
    for (auto& [s, n] : uses) EXPECT_EQ(n, 50) << "set " << s << " of " << sets;
  }
}

TEST(TimingPlan, TheRotationOrderComesFromTheKeyAndIsReproducible) {
  auto order = [](uint64_t key) {
    Rotation rot(8, key);
    std::vector<int> v;
    for (int t = 0; t < 40; ++t) v.push_back(rot.set_for(t));
    return v;
  };
  EXPECT_EQ(order(7), order(7));
  EXPECT_NE(order(7), order(8));
  std::vector<int> identity;
  for (int t = 0; t < 40; ++t) identity.push_back(t % 8);
  EXPECT_NE(order(7), identity) << "not the fixed order 0, 1, 2, ...";
  Rotation rot(8, 7);
  std::vector<int> cycle1, cycle2;
  for (int t = 0; t < 8; ++t) cycle1.push_back(rot.set_for(t));
  for (int t = 8; t < 16; ++t) cycle2.push_back(rot.set_for(t));
  EXPECT_NE(cycle1, cycle2) << "each cycle is drawn afresh";
  Rotation again(8, 7);
  EXPECT_EQ(again.set_for(13), cycle2[5]) << "asking out of order gives the same set";
}

// The number of input sets and the trial cap differ between runs and between size sets, so a
// kernel cannot count its way to a known trial or to the end of a rotation cycle; the same
// seed gives the same plan (a run is reproducible from its recorded seed).
TEST(TimingPlan, SetsAndTrialCapVaryWithTheSeed) {
  std::set<int> sets, caps;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    TimingPlan p = plan_timing(seed, "large", 100);
    EXPECT_GE(p.wanted_sets, kMinInputSets);
    EXPECT_LE(p.wanted_sets, kMaxInputSets);
    EXPECT_GE(p.trial_cap, 75) << "at most a quarter fewer trials";
    EXPECT_LE(p.trial_cap, 100);
    sets.insert(p.wanted_sets);
    caps.insert(p.trial_cap);
  }
  EXPECT_EQ(sets.size(), 4u) << "every count from 5 to 8 occurs";
  EXPECT_GT(caps.size(), 20u) << "the cap is not one of a few values";
  TimingPlan a = plan_timing(42, "large", 100), b = plan_timing(42, "large", 100);
  EXPECT_EQ(a.wanted_sets, b.wanted_sets);
  EXPECT_EQ(a.trial_cap, b.trial_cap);
  EXPECT_EQ(a.rotation_key, b.rotation_key);
  int differ = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    TimingPlan x = plan_timing(seed, "small", 100), y = plan_timing(seed, "large", 100);
    differ += x.trial_cap != y.trial_cap || x.rotation_key != y.rotation_key;
  }
  EXPECT_EQ(differ, 50) << "each size set draws its own plan";
  EXPECT_EQ(plan_timing(7, "x", 1).trial_cap, 1) << "a cap of one trial stays one";
  EXPECT_GE(plan_timing(7, "x", 0).trial_cap, 1) << "never zero trials";
}

TEST(TimingPlan, TheWantedSetsUnlessMemoryIsShort) {
  EXPECT_EQ(timing_input_sets(128 << 20, size_t{100} << 30, 7), 7);
  EXPECT_EQ(timing_input_sets(0, 0, 6), 6) << "a task without inputs";
  EXPECT_EQ(timing_input_sets(size_t{1} << 30, size_t{8} << 30, 8), 4)
      << "8 sets (inputs and reference outputs) would take more than half the free memory";
  EXPECT_EQ(timing_input_sets(size_t{1} << 30, size_t{1} << 30, 5), 2) << "never fewer than 2";
}

// Small sets: one per trial and warm-up run, so none comes round again and there is nothing
// to replay; large ones rotate.
TEST(TimingPlan, SmallSetsAreFreshForEveryTrialLargeOnesRotate) {
  const size_t plenty = size_t{80} << 30;
  EXPECT_EQ(fresh_timing_sets(12 << 10, plenty, 90), 90 + kWarmupRuns) << "12 KiB a set: fresh";
  EXPECT_EQ(fresh_timing_sets(0, plenty, 1), 1 + kWarmupRuns) << "a task without inputs";
  EXPECT_EQ(fresh_timing_sets(size_t{12} << 20, plenty, 90), 0) << "93 sets of 12 MiB are over 64 MiB: they rotate";
  EXPECT_EQ(fresh_timing_sets(kFreshSetsBytes / 100, plenty, 100 - kWarmupRuns), 100) << "exactly at the limit";
  EXPECT_EQ(fresh_timing_sets(kFreshSetsBytes / 100 + 1, plenty, 100 - kWarmupRuns), 0) << "a byte over it";
  EXPECT_EQ(fresh_timing_sets(1024, plenty, kMaxFreshSets), 0) << "more sets than kMaxFreshSets";
  EXPECT_EQ(fresh_timing_sets(1 << 20, 40 << 20, 30), 0) << "more than half the free device memory";
  EXPECT_EQ(fresh_timing_sets(SIZE_MAX / 2, plenty, 90), 0) << "a size that wraps";

  // Fresh: the trials use each of their sets once, the warm-up runs only theirs.
  const int trials = 90;
  Rotation rot(trials + kWarmupRuns, 0x5EED, kWarmupRuns);
  EXPECT_EQ(rot.sets(), trials);
  std::set<int> seen;
  for (int t = 0; t < trials; ++t) {
    int s = rot.set_for(t);
    ASSERT_GE(s, 0);
    ASSERT_LT(s, trials);
    EXPECT_TRUE(seen.insert(s).second) << "trial " << t << " met set " << s << " again";
  }
  std::set<int> warm;
  for (int i = 0; i < kWarmupRuns; ++i) warm.insert(rot.warmup_set(i));
  EXPECT_EQ(warm, (std::set<int>{trials, trials + 1, trials + 2})) << "no trial sees a warm-up run's set";
  Rotation plain(6, 0x5EED);
  EXPECT_EQ(plain.warmup_set(0), 0);
  EXPECT_EQ(plain.warmup_set(7), 1) << "rotating sets: the warm-up runs share them";
}

// The host judges the GPU's counts as compare_output judges its own: min_match, and integers
// exact whatever the tolerance says.
TEST(TimingPlan, ACountIsJudgedAsCompareOutputJudgesIt) {
  CheckedOutput strict{"c", 1000, task::DType::f32, {1e-5, 1e-6, 1.0}};
  EXPECT_TRUE(comparison_from_count(strict, 0).pass);
  EXPECT_FALSE(comparison_from_count(strict, 1).pass) << "one wrong element fails min_match = 1";
  CheckedOutput loose{"c", 1000, task::DType::f32, {1e-5, 1e-6, 0.99}};
  EXPECT_TRUE(comparison_from_count(loose, 10).pass) << "990 of 1000 matched";
  EXPECT_FALSE(comparison_from_count(loose, 11).pass);
  EXPECT_EQ(comparison_from_count(loose, 11).mismatches, 11u);
  EXPECT_DOUBLE_EQ(comparison_from_count(loose, 11).matched_fraction, 0.989);
  EXPECT_FALSE(comparison_from_count(strict, 5000).pass) << "a count above the element count is never a pass";
  CheckedOutput empty{"c", 0, task::DType::u32, {}};
  EXPECT_TRUE(comparison_from_count(empty, 0).pass);
  // The same counts through compare_output itself.
  std::vector<float> e(1000, 1.0f), a(1000, 1.0f);
  for (int i = 0; i < 11; ++i) a[static_cast<size_t>(i)] = 2.0f;
  auto ref = task::compare_output("c", e.data(), a.data(), task::DType::f32, 1000, loose.tol);
  EXPECT_EQ(ref.pass, comparison_from_count(loose, ref.mismatches).pass);
  EXPECT_DOUBLE_EQ(ref.matched_fraction, comparison_from_count(loose, ref.mismatches).matched_fraction);
}

TEST(TimingPlan, TheFirstFailedTrialIsNamedWithEveryOutput) {
  std::vector<CheckedOutput> outs = {{"c", 100, task::DType::f32, {}}, {"d", 10, task::DType::u32, {}}};
  std::vector<uint64_t> counters(5 * 2 * 2, 0);
  EXPECT_FALSE(first_failed_trial(counters, outs, 5).has_value()) << "all zero: every trial passed";
  counters[(3 * 2 + 1) * 2] = 4;  // trial 3, output d: 4 wrong
  counters[(3 * 2 + 1) * 2 + 1] = 3;  // 3 of them never written
  counters[(4 * 2 + 0) * 2] = 100;
  auto f = first_failed_trial(counters, outs, 5);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->trial, 3);
  ASSERT_EQ(f->outputs.size(), 2u);
  EXPECT_TRUE(f->outputs[0].pass);
  EXPECT_FALSE(f->outputs[1].pass);
  EXPECT_EQ(f->outputs[1].mismatches, 4u);
  EXPECT_EQ(describe_trial_failure(f->trial, 5, 1, "small", {}, f->outputs),
            "timed trial 4 of 5 on size set 'small' (input set 2): 'd': 4 of 10 elements wrong, 3 never written");
  EXPECT_FALSE(first_failed_trial(counters, outs, 3).has_value()) << "only the trials that ran are judged";
  auto missing = first_failed_trial({0, 0, 0, 0}, outs, 2);
  ASSERT_TRUE(missing.has_value()) << "a trial whose counters were not read back is not a pass";
  EXPECT_EQ(missing->trial, 1);
}

// A trial that wrote nothing reads as verify's words do, so the reason names it.
TEST(TimingPlan, AnOutputNeverWrittenSaysSo) {
  CheckedOutput c{"c", 1024, task::DType::f32, {}};
  task::Comparison all = comparison_from_count(c, 1024, 1024);
  EXPECT_FALSE(all.pass);
  EXPECT_NE(all.hint.find("never written"), std::string::npos);
  EXPECT_EQ(describe_trial_failure(6, 40, 2, "large", {}, {all}),
            "timed trial 7 of 40 on size set 'large' (input set 3): 'c': 1024 of 1024 elements wrong, 1024 never "
            "written (the output was never written (every element still holds the poison pattern))");
  EXPECT_TRUE(comparison_from_count(c, 10, 4).hint.empty());
  EXPECT_FALSE(comparison_from_count(c, 2, 3).pass) << "more unwritten than wrong is no count a comparison gives";
}

TEST(TimingPlan, AFailedTrialSaysWhichTrialAndWhy) {
  task::Comparison c;
  c.output = "c";
  c.count = 1024;
  c.mismatches = 1021;
  c.never_written = 1021;
  c.pass = false;
  c.hint = "most elements were never written";
  task::Comparison ok;
  ok.output = "d";
  EXPECT_EQ(
      describe_trial_failure(6, 40, 2, "small", {}, {ok, c}),
      "timed trial 7 of 40 on size set 'small' (input set 3): 'c': 1021 of 1024 elements wrong, 1021 never written "
      "(most elements were never written)");
  EXPECT_EQ(describe_trial_failure(39, 40, 0, "large", {"write past the end of 'c': 4 guard bytes changed"}, {c}),
            "timed trial 40 of 40 on size set 'large' (input set 1): write past the end of 'c': 4 guard bytes changed")
      << "a guard or input problem comes first";
}

}  // namespace
}  // namespace ptxforge::gpu
