// Repair pairs from compile sessions (`data fixit`), read through the session reader: the
// pair's exact line, the pairs past round 100 that the old bound dropped, and a gap that is
// reported and never bridged into a pair.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "testing/fake_session.h"

namespace ptxforge::data {
namespace {

namespace fs = std::filesystem;
using testing::FakeRound;

class FixitPairs : public testing::SessionFolderTest {};

TEST_F(FixitPairs, AFailedRoundAndTheNextThatVerifiedMakeOnePair) {
  std::string s = testing::write_fake_session(root_ + "/s1", testing::fake_session_options(3));
  testing::write_fake_round(s, 1, 1);
  testing::write_fake_round(s, 1, 2, {.assembled = true, .passed = true});
  FixitStats st;
  auto lines = make_fixit_pairs({root_}, st);
  ASSERT_TRUE(lines.ok()) << lines.error().message;
  EXPECT_EQ(st.sessions, 1);
  EXPECT_EQ(st.pairs, 1);
  EXPECT_TRUE(st.skipped.empty());
  ASSERT_EQ(lines->size(), 1u);
  EXPECT_EQ((*lines)[0],
            "{\"kind\":\"fixit\",\"source_id\":\"task:level1/vector_add\",\"task\":\"level1/vector_add\",\"session\":\"s1\","
            "\"sample\":1,\"round\":1,\"failed_verdict\":\"\",\"fixed_verdict\":\"\",\"verified\":true,"
            "\"verified_by\":\"gpu\",\"failed_ptx\":\"// kernel of round 1\\n\",\"feedback\":\"feedback on round 1\\n\","
            "\"fixed_ptx\":\"// kernel of round 2\\n\"}");
}

// The old bound read rounds 1 to 100 and so never saw round 101's fix; the session's own
// count (101) is the bound now.
TEST_F(FixitPairs, AFixInRound101IsAPair) {
  std::string s = testing::write_fake_session(root_ + "/long", testing::fake_session_options(101));
  for (int n = 1; n <= 101; ++n) testing::write_fake_round(s, 1, n, {.assembled = n == 101, .passed = n == 101});
  FixitStats st;
  auto lines = make_fixit_pairs({root_}, st);
  ASSERT_TRUE(lines.ok());
  ASSERT_EQ(lines->size(), 1u);
  auto j = nlohmann::json::parse((*lines)[0]);
  EXPECT_EQ(j["round"], 100);
  EXPECT_EQ(j["fixed_ptx"], "// kernel of round 101\n");
}

TEST_F(FixitPairs, AGapIsReportedAndNoPairSpansIt) {
  std::string s = testing::write_fake_session(root_ + "/gap", testing::fake_session_options(5));
  testing::write_fake_round(s, 1, 1);
  testing::write_fake_round(s, 1, 3, {.assembled = true, .passed = true});  // round 2 lost: not the fix of round 1
  testing::write_fake_round(s, 1, 4);
  testing::write_fake_round(s, 1, 5, {.assembled = true, .passed = true});
  std::string bad = root_ + "/damaged";
  fs::create_directories(bad);
  ASSERT_TRUE(write_file(agent::layout::session_options(bad), "{\"samples\": ").ok());
  FixitStats st;
  auto lines = make_fixit_pairs({root_}, st);
  ASSERT_TRUE(lines.ok());
  ASSERT_EQ(lines->size(), 1u) << "4 -> 5 only; the old reader stopped at the gap and found none";
  EXPECT_EQ(nlohmann::json::parse((*lines)[0])["round"], 4);
  EXPECT_EQ(st.sessions, 2);
  ASSERT_EQ(st.skipped.size(), 2u);
  EXPECT_NE(st.skipped[0].find(bad + "/session.json is damaged"), std::string::npos) << st.skipped[0];
  EXPECT_NE(st.skipped[1].find("round-02: missing, though round 3 follows"), std::string::npos) << st.skipped[1];
}

TEST_F(FixitPairs, ACudaCandidateMakesNoPair) {
  std::string s = testing::write_fake_session(root_ + "/cu", testing::fake_session_options(2));
  testing::write_fake_round(s, 1, 1, {.cuda = true});
  testing::write_fake_round(s, 1, 2, {.assembled = true, .passed = true});
  FixitStats st;
  auto lines = make_fixit_pairs({root_}, st);
  ASSERT_TRUE(lines.ok());
  EXPECT_TRUE(lines->empty());
}

}  // namespace
}  // namespace ptxforge::data
