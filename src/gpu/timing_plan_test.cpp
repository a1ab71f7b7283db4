// The timing plan without a GPU: the input-set rotation, the choice of checked trials and
// the words of a failed check.
#include "gpu/timing_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "task/seeds.h"

namespace ptxforge::gpu {
namespace {

TEST(TimingPlan, EightInputSetsUnlessMemoryIsShort) {
  EXPECT_EQ(timing_input_sets(128 << 20, size_t{100} << 30), 8);
  EXPECT_EQ(timing_input_sets(0, 0), 8) << "a task without inputs";
  EXPECT_EQ(timing_input_sets(size_t{1} << 30, size_t{8} << 30), 4)
      << "8 copies would take more than half the free memory";
  EXPECT_EQ(timing_input_sets(size_t{1} << 30, size_t{1} << 30), 2) << "never fewer than 2";
}

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

TEST(TimingPlan, TheLastTrialAndAtLeastThreeOthersAreChecked) {
  for (int trials = 1; trials <= 120; ++trials) {
    TrialSampler sampler(kCheckSlots,
                         task::derive_seed(99, task::SeedUse::trial_pick, 0, static_cast<uint64_t>(trials)));
    for (int t = 0; t < trials; ++t) sampler.offer(t);
    std::vector<int> checked = checked_trials(sampler.held(), trials);
    ASSERT_FALSE(checked.empty());
    EXPECT_EQ(checked.back(), trials - 1) << "the last trial is always checked";
    EXPECT_GE(static_cast<int>(checked.size()) - 1, std::min(3, trials - 1)) << trials << " trials";
    EXPECT_TRUE(std::is_sorted(checked.begin(), checked.end()));
    EXPECT_EQ(std::set<int>(checked.begin(), checked.end()).size(), checked.size()) << "each once";
    for (int t : checked) {
      EXPECT_GE(t, 0);
      EXPECT_LT(t, trials);
    }
  }
}

TEST(TimingPlan, OfferSaysWhichSlotToSaveInto) {
  TrialSampler sampler(4, 5);
  for (int t = 0; t < 4; ++t) EXPECT_EQ(sampler.offer(t), t) << "the first trials fill the slots";
  int saves = 0;
  for (int t = 4; t < 100; ++t) {
    int slot = sampler.offer(t);
    if (slot < 0) continue;
    ++saves;
    EXPECT_LT(slot, 4);
    EXPECT_EQ(sampler.held()[static_cast<size_t>(slot)], t) << "the slot now holds the trial just saved";
  }
  EXPECT_GT(saves, 3) << "later trials replace earlier ones";
  EXPECT_LT(saves, 40) << "few copies: about 4 ln(100/4)";
}

// The kernel cannot know which trials are checked: the choice depends on a key it never sees,
// and over keys every trial is as likely to be checked as any other.
TEST(TimingPlan, CheckedTrialsAreSecretAndUniform) {
  const int trials = 40, runs = 4000;
  std::vector<int> hits(trials, 0);
  std::set<std::vector<int>> choices;
  for (int k = 0; k < runs; ++k) {
    TrialSampler sampler(kCheckSlots, task::derive_seed(static_cast<uint64_t>(k), task::SeedUse::trial_pick, 1));
    for (int t = 0; t < trials; ++t) sampler.offer(t);
    auto checked = checked_trials(sampler.held(), trials);
    choices.insert(checked);
    for (int t : checked)
      if (t != trials - 1) ++hits[static_cast<size_t>(t)];
  }
  EXPECT_GT(choices.size(), 3000u) << "the choice changes with the key";
  // Each of the first 39 trials is held with probability 4/40 (less when the last trial took a slot).
  for (int t = 0; t < trials - 1; ++t) {
    EXPECT_GT(hits[static_cast<size_t>(t)], runs * 0.065) << "trial " << t;
    EXPECT_LT(hits[static_cast<size_t>(t)], runs * 0.135) << "trial " << t;
  }
  TrialSampler a(kCheckSlots, 17), b(kCheckSlots, 17);
  for (int t = 0; t < 50; ++t) EXPECT_EQ(a.offer(t), b.offer(t)) << "the same key, the same choice";
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
