// The worker protocol's timing and seed fields: the base seed and the .global switch travel in
// the job, the checked trials and their verdicts in the answer, 64-bit seeds exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpu/protocol.h"

namespace ptxforge::gpu {
namespace {

TEST(TimingProtocol, TheJobCarriesTheBaseSeedExactly) {
  Job j;
  j.kind = JobKind::time;
  j.seed = UINT64_MAX - 1;  // beyond a double's 53 bits
  j.reset_globals = false;
  std::string line = encode_job(j);
  EXPECT_NE(line.find("\"seed\":\"18446744073709551614\""), std::string::npos) << "a decimal string: " << line;
  auto back = decode_job(line);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->seed, UINT64_MAX - 1);
  EXPECT_FALSE(back->reset_globals);
  auto old = decode_job(R"({"op":"verify"})");
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->reset_globals) << "the restore is on unless a job turns it off";
  EXPECT_FALSE(decode_job(R"({"op":"verify","seed":"12x"})").ok()) << "a damaged seed is refused";
}

TEST(TimingProtocol, CheckedTrialsAndCaseSeedsRoundTrip) {
  Outcome o;
  TimeReport t;
  SizeTiming st;
  st.size_set = "large";
  st.candidate.trials = 40;
  st.input_sets = 8;
  st.checked = {{3, 2, false, true, ""},
                {40, 5, true, false, "timed trial 40 of 40 on size set 'large' (input set 5): ..."}};
  t.sizes.push_back(st);
  t.trials_pass = false;
  t.trial_problem = st.checked[1].problem;
  t.notes = {"the .global variable 'x' could not be restored between timed trials"};
  o.time = t;
  auto back = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(back.ok()) << back.error().message;
  const SizeTiming& b = back->time->sizes[0];
  EXPECT_EQ(b.input_sets, 8);
  ASSERT_EQ(b.checked.size(), 2u);
  EXPECT_EQ(b.checked[0].trial, 3);
  EXPECT_EQ(b.checked[0].input_set, 2);
  EXPECT_TRUE(b.checked[0].pass);
  EXPECT_TRUE(b.checked[1].last);
  EXPECT_FALSE(b.checked[1].pass);
  EXPECT_EQ(b.checked[1].problem, t.trial_problem);
  EXPECT_FALSE(back->time->trials_pass);
  EXPECT_EQ(back->time->trial_problem, t.trial_problem);
  EXPECT_EQ(back->time->notes, t.notes);

  auto unchecked = decode_outcome(R"({"time":{"sizes":[],"reverify_pass":true,"reverify_problem":"","seconds":1}})");
  ASSERT_TRUE(unchecked.ok()) << unchecked.error().message;
  EXPECT_FALSE(unchecked->time->trials_pass) << "a report that does not say its trials were checked did not check them";

  Outcome v;
  v.verify = VerifyReport{};
  CaseResult c;
  c.size_set = "small";
  c.seed = 0xFEDCBA9876543210ull;
  c.seed_index = 2;
  v.verify->cases.push_back(c);
  std::string line = encode_outcome(v);
  EXPECT_NE(line.find("\"seed\":\"18364758544493064720\""), std::string::npos) << line;
  auto vb = decode_outcome(line);
  ASSERT_TRUE(vb.ok());
  EXPECT_EQ(vb->verify->cases[0].seed, 0xFEDCBA9876543210ull);
  EXPECT_EQ(vb->verify->cases[0].seed_index, 2);
}

// What checking every trial cost, per size set, reaches the record; a passing trial is written
// without its empty problem, so a hundred of them stay short.
TEST(TimingProtocol, TheCostOfTheChecksAndTheTrialCapRoundTrip) {
  Outcome o;
  TimeReport t;
  SizeTiming st;
  st.size_set = "large";
  st.trial_cap = 87;
  st.cost = {0.5, 2.25, 0.125, 0.0625, 1.5};
  st.checked = {{1, 3, false, true, ""}};
  t.sizes.push_back(st);
  o.time = t;
  std::string line = encode_outcome(o);
  EXPECT_EQ(line.find("\"problem\""), std::string::npos) << line;
  auto back = decode_outcome(line);
  ASSERT_TRUE(back.ok()) << back.error().message;
  const SizeTiming& b = back->time->sizes[0];
  EXPECT_EQ(b.trial_cap, 87);
  EXPECT_DOUBLE_EQ(b.cost.expected_s, 0.5);
  EXPECT_DOUBLE_EQ(b.cost.candidate_s, 2.25);
  EXPECT_DOUBLE_EQ(b.cost.compare_gpu_s, 0.125);
  EXPECT_DOUBLE_EQ(b.cost.check_s, 0.0625);
  EXPECT_DOUBLE_EQ(b.cost.baselines_s, 1.5);
  ASSERT_EQ(b.checked.size(), 1u);
  EXPECT_TRUE(b.checked[0].pass);
  EXPECT_FALSE(b.checked[0].last);
}

}  // namespace
}  // namespace ptxforge::gpu
