// The results store reads a cell's session through the session reader and its records through
// record_from_json: the rows it derives (checked, error ids, proofs; stages, timings,
// diagnostics) are those the records hold, every round up to the session's count is kept,
// and a gap or a damaged record is reported while the rounds around it are still stored.
#include "bench/store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "testing/fake_session.h"

namespace ptxforge::bench {
namespace {

namespace fs = std::filesystem;
using testing::FakeRound;

class StoreSessions : public testing::SessionFolderTest {
 protected:
  // The rows of one table, each as a JSON object.
  static std::vector<nlohmann::json> rows(const Store& s, const std::string& table) {
    std::vector<nlohmann::json> out;
    auto lines = s.export_jsonl(table);
    EXPECT_TRUE(lines.ok());
    if (lines)
      for (auto& l : *lines) out.push_back(nlohmann::json::parse(l));
    return out;
  }
};

TEST_F(StoreSessions, RowsComeFromTheRecordsOfEveryRound) {
  std::string s = testing::write_fake_session(root_ + "/cell", testing::fake_session_options(4));
  testing::write_fake_round(s, 1, 1);                                      // the front end rejected it
  testing::write_fake_round(s, 1, 2, {.assembled = true});                 // assembled, not verified
  testing::write_fake_round(s, 1, 3, {.assembled = true, .passed = true});  // verified
  std::vector<std::string> issues;
  auto rounds = read_session_rounds("c1", s, &issues);
  EXPECT_TRUE(issues.empty()) << issues[0];
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_FALSE(rounds[0].checked);
  EXPECT_EQ(rounds[0].error_ids, (std::vector<std::string>{"undeclared-reg"}));
  EXPECT_TRUE(rounds[1].checked);
  EXPECT_TRUE(rounds[1].error_ids.empty());
  EXPECT_EQ(rounds[2].families, 1);
  EXPECT_EQ(rounds[0].in_sass, 0);
  EXPECT_EQ(rounds[2].in_sass, 1);
  EXPECT_EQ(rounds[2].executed, 0);
  EXPECT_EQ(rounds[2].summary.round, 3);
  EXPECT_EQ(rounds[2].record, *read_file(agent::layout::result(agent::layout::round(s, 3)))) << "kept as written";

  auto store = Store::open(root_ + "/bench.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  CellRow cell;
  cell.id = "c1";
  ASSERT_TRUE(store->put_cell(cell, rounds).ok());
  auto stages = rows(*store, "stages");
  ASSERT_EQ(stages.size(), 1u + 2u + 3u);  // check; check, assemble; check, assemble, verify
  EXPECT_EQ(stages[0]["stage"], "check");
  EXPECT_EQ(stages[0]["status"], "FAILED");
  EXPECT_EQ(stages[5]["round"], 3);
  EXPECT_EQ(stages[5]["stage"], "verify");
  EXPECT_EQ(stages[5]["summary"], "2 size sets");
  auto diags = rows(*store, "diagnostics");
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0]["check_id"], "undeclared-reg");
  EXPECT_EQ(diags[0]["severity"], "error");
  EXPECT_EQ(diags[0]["line"], 3);
  auto proofs = rows(*store, "proofs");
  ASSERT_EQ(proofs.size(), 3u);
  EXPECT_EQ(proofs[0]["in_sass"], 0);
  EXPECT_EQ(proofs[2]["in_sass"], 1);
  EXPECT_EQ(proofs[2]["executed"], -1) << "not run: neither yes nor no";
}

TEST_F(StoreSessions, EveryRoundUpToTheSessionsCountIsStoredPast100) {
  std::string s = testing::write_fake_session(root_ + "/long", testing::fake_session_options(101));
  for (int n = 1; n <= 101; ++n) testing::write_fake_round(s, 1, n);
  auto rounds = read_session_rounds("c", s);
  ASSERT_EQ(rounds.size(), 101u);
  EXPECT_EQ(rounds.back().summary.round, 101);
}

TEST_F(StoreSessions, AGapAndADamagedRecordAreReportedAndTheOtherRoundsKept) {
  std::string s = testing::write_fake_session(root_ + "/gap", testing::fake_session_options(4));
  testing::write_fake_round(s, 1, 1, {.assembled = true});
  testing::write_fake_round(s, 1, 3, {.assembled = true});
  testing::write_fake_round(s, 1, 4, {.assembled = true});
  std::string damaged = agent::layout::result(agent::layout::round(s, 3));
  ASSERT_TRUE(write_file(damaged, "{\"task\": \"level1/vector_add\", \"stages\": [").ok());
  std::vector<std::string> issues;
  auto rounds = read_session_rounds("c", s, &issues);
  ASSERT_EQ(rounds.size(), 3u);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_NE(issues[0].find("round-02: missing, though round 3 follows"), std::string::npos) << issues[0];
  EXPECT_EQ(issues[1].rfind(agent::layout::round(s, 3) + ": not a complete JSON document", 0), 0u) << issues[1];
  EXPECT_FALSE(rounds[1].checked) << "nothing read from a damaged record";
  EXPECT_EQ(rounds[1].record, "{\"task\": \"level1/vector_add\", \"stages\": [");
  auto store = Store::open(root_ + "/bench.db");
  ASSERT_TRUE(store.ok());
  CellRow cell;
  cell.id = "c";
  ASSERT_TRUE(store->put_cell(cell, rounds).ok());
  EXPECT_EQ(rows(*store, "rounds").size(), 3u);
  EXPECT_EQ(rows(*store, "stages").size(), 4u) << "rounds 1 and 4 only";
}

TEST_F(StoreSessions, ASessionItCannotReadIsReportedWithNoRows) {
  std::vector<std::string> issues;
  EXPECT_TRUE(read_session_rounds("c", root_ + "/nowhere", &issues).empty());
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].find("holds no session"), std::string::npos) << issues[0];
}

}  // namespace
}  // namespace ptxforge::bench
