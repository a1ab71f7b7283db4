// The session reader over folders written as the loop writes them: typed options, rounds and
// records; the one round bound (the rounds on disk up to the session's count, past 100 too);
// every gap, half-written round and damaged file reported with its folder, never a crash.
#include "agent/session_reader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "eval/record_json.h"
#include "testing/fake_session.h"

namespace ptxforge::agent {
namespace {

namespace fs = std::filesystem;
using testing::FakeRound;

class SessionReaderTest : public testing::SessionFolderTest {};

const RoundIssue* find_issue(const Trajectory& t, RoundIssueKind kind) {
  for (auto& i : t.issues)
    if (i.kind == kind) return &i;
  return nullptr;
}

TEST_F(SessionReaderTest, GivesTheOptionsRoundsRecordsAndFilesOfASession) {
  std::string s = testing::write_fake_session(root_ + "/s", testing::fake_session_options(3));
  testing::write_fake_round(s, 1, 1, {.extracted = true});
  testing::write_fake_round(s, 1, 2, {.assembled = true, .passed = true});
  auto r = SessionReader::open(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->task(), "level1/vector_add");
  EXPECT_EQ(r->samples(), 1);
  EXPECT_EQ(r->round_count(), 3);
  ASSERT_TRUE(r->options().ok()) << r->options().error().message;
  EXPECT_EQ(r->options()->run.arch, "sm_80");
  EXPECT_EQ(r->options()->rounds, 3);
  auto ts = r->trajectories();
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_EQ(ts[0].dir, s);
  EXPECT_TRUE(ts[0].issues.empty()) << ts[0].issues[0].message << " (a session that stopped early has no gap)";
  ASSERT_EQ(ts[0].rounds.size(), 2u);
  const SessionRound& second = ts[0].rounds[1];
  EXPECT_EQ(second.round, 2);
  EXPECT_TRUE(second.summary.passed);
  EXPECT_EQ(second.summary.seed, 1002u);
  auto rec = r->record(second);
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  EXPECT_TRUE(rec->passed);
  EXPECT_EQ(rec->seed, 1002u);
  EXPECT_EQ(rec->find_stage(eval::StageId::verify)->status, eval::StageStatus::passed);
  EXPECT_EQ(eval::render_report_json(*rec), *r->record_text(second)) << "the record as written, typed";
  auto first = r->record(ts[0].rounds[0]);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->diagnostics.list().at(0).check_id, "undeclared-reg");
  auto c = r->candidate(second);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->cuda);
  EXPECT_EQ(c->text, "// kernel of round 2\n");
  EXPECT_EQ(r->reply(second), "reply of round 2\n");
  EXPECT_EQ(r->feedback(second), "feedback on round 2\n");
}

// The one rule: every round folder from 1 to the session's own count. A bound of 100 (as
// `data fixit` and `fixit` once had) would drop round 101; a bound below the count would drop
// round 3 here.
TEST_F(SessionReaderTest, ReadsEveryRoundUpToTheSessionsCountPast100) {
  std::string s = testing::write_fake_session(root_ + "/long", testing::fake_session_options(101));
  for (int n = 1; n <= 101; ++n) testing::write_fake_round(s, 1, n, {.assembled = n == 101, .passed = n == 101});
  auto r = SessionReader::open(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto ts = r->trajectories();
  ASSERT_EQ(ts.size(), 1u);
  ASSERT_EQ(ts[0].rounds.size(), 101u);
  EXPECT_TRUE(ts[0].issues.empty());
  EXPECT_EQ(ts[0].rounds.back().round, 101);
  EXPECT_EQ(fs::path(ts[0].rounds.back().dir).filename(), "round-101");
  EXPECT_TRUE(ts[0].rounds.back().summary.passed);
}

TEST_F(SessionReaderTest, AGapAHalfWrittenRoundAndAFolderPastTheCountAreReportedNotSkipped) {
  std::string s = testing::write_fake_session(root_ + "/gappy", testing::fake_session_options(6));
  testing::write_fake_round(s, 1, 1);
  testing::write_fake_round(s, 1, 2, {.record = false});  // evaluated, but result.json is gone
  // round 3: no folder at all
  testing::write_fake_round(s, 1, 4, {.summary = false});  // a folder without round.json, round 5 after it
  testing::write_fake_round(s, 1, 5);
  testing::write_fake_round(s, 1, 6, {.summary = false});  // the last: the model call failed
  ASSERT_TRUE(write_file(layout::error(layout::round(s, 6)), "rate limited (429)\nretry later\n").ok());
  testing::write_fake_round(s, 1, 7);  // past the count
  fs::create_directories(s + "/round-8x");  // not one of the loop's names: no round at all
  auto r = SessionReader::open(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  Trajectory t = r->trajectories().at(0);
  std::vector<int> read;
  for (auto& x : t.rounds) read.push_back(x.round);
  EXPECT_EQ(read, (std::vector<int>{1, 2, 5})) << "rounds after a gap are still read";
  ASSERT_EQ(t.issues.size(), 5u);
  auto missing = find_issue(t, RoundIssueKind::missing);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->round, 3);
  EXPECT_NE(missing->message.find("round-03: missing, though round 4 follows"), std::string::npos) << missing->message;
  auto no_record = find_issue(t, RoundIssueKind::no_record);
  ASSERT_TRUE(no_record);
  EXPECT_EQ(no_record->round, 2);
  EXPECT_NE(no_record->message.find("result.json is missing"), std::string::npos) << no_record->message;
  auto no_summary = find_issue(t, RoundIssueKind::no_summary);
  ASSERT_TRUE(no_summary);
  EXPECT_EQ(no_summary->round, 4);
  auto unfinished = find_issue(t, RoundIssueKind::unfinished);
  ASSERT_TRUE(unfinished);
  EXPECT_EQ(unfinished->round, 6);
  EXPECT_NE(unfinished->message.find("rate limited (429)"), std::string::npos) << unfinished->message;
  auto beyond = find_issue(t, RoundIssueKind::beyond);
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond->round, 7);
  EXPECT_NE(beyond->message.find("outside the session's rounds (1 to 6)"), std::string::npos) << beyond->message;
  // What readers of summaries report: what hides a round, not how a stopped session ends.
  EXPECT_TRUE(hides_rounds(missing->kind) && hides_rounds(no_summary->kind) && hides_rounds(beyond->kind));
  EXPECT_FALSE(hides_rounds(unfinished->kind) || hides_rounds(no_record->kind));
  auto rec = r->record(t.rounds[1]);
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find(layout::result(layout::round(s, 2))), std::string::npos) << rec.error().message;
}

TEST_F(SessionReaderTest, ADamagedRecordOrSummaryIsAnErrorNamingTheFile) {
  std::string s = testing::write_fake_session(root_ + "/damaged", testing::fake_session_options(3));
  testing::write_fake_round(s, 1, 1);
  testing::write_fake_round(s, 1, 2);
  testing::write_fake_round(s, 1, 3);
  std::string result1 = layout::result(layout::round(s, 1));
  auto text = read_file(result1);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(write_file(result1, text->substr(0, text->size() / 2)).ok());  // cut off mid-write
  ASSERT_TRUE(write_file(layout::summary(layout::round(s, 2)), "{\"round\": 2, \"verd").ok());
  auto r = SessionReader::open(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  Trajectory t = r->trajectories().at(0);
  ASSERT_EQ(t.rounds.size(), 2u);
  auto rec = r->record(t.rounds[0]);
  ASSERT_FALSE(rec.ok());
  EXPECT_EQ(rec.error().message.rfind(result1 + ": not a complete JSON document", 0), 0u) << rec.error().message;
  auto damaged = find_issue(t, RoundIssueKind::no_summary);
  ASSERT_TRUE(damaged);
  EXPECT_EQ(damaged->round, 2);
  EXPECT_NE(damaged->message.find("round.json is damaged"), std::string::npos);
}

TEST_F(SessionReaderTest, SamplesAreReadFromTheirFoldersUpToTheSessionsCount) {
  std::string s = testing::write_fake_session(root_ + "/samples", testing::fake_session_options(2, 2));
  testing::write_fake_round(layout::trajectory(s, 1, 2), 1, 1);
  testing::write_fake_round(layout::trajectory(s, 2, 2), 2, 1);
  testing::write_fake_round(layout::trajectory(s, 2, 2), 2, 2, {.assembled = true});
  testing::write_fake_round(layout::trajectory(s, 3, 3), 3, 1);  // sample-3: not one of this session's
  auto r = SessionReader::open(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto ts = r->trajectories();
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].sample, 1);
  EXPECT_EQ(ts[1].sample, 2);
  EXPECT_EQ(ts[1].rounds.size(), 2u);
  EXPECT_EQ(ts[1].rounds[1].sample, 2);
}

TEST_F(SessionReaderTest, ASessionWhoseTaskMovedStillReadsItsRoundsAndSaysWhyItsOptionsDoNot) {
  std::string task = root_ + "/task-copy";
  fs::create_directories(task);
  fs::copy(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add", task, fs::copy_options::recursive);
  auto o = testing::fake_session_options(2);
  o.task_dir = task;
  std::string s = testing::write_fake_session(root_ + "/moved", o);
  testing::write_fake_round(s, 1, 1);
  fs::remove_all(task);
  auto r = SessionReader::open(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->task(), "task-copy");
  ASSERT_FALSE(r->options().ok());
  EXPECT_NE(r->options().error().message.find("has no task.toml"), std::string::npos) << r->options().error().message;
  EXPECT_EQ(r->trajectories().at(0).rounds.size(), 1u);
}

TEST_F(SessionReaderTest, ASessionJsonThatIsMissingOrDamagedIsAnError) {
  fs::create_directories(root_ + "/none");
  auto none = SessionReader::open(root_ + "/none");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("holds no session"), std::string::npos) << none.error().message;
  struct Case {
    const char* text;
    const char* expect;
  };
  for (auto c : {Case{"{not json", "is damaged"}, Case{"[1]", "not a JSON object"},
                 Case{"{\"samples\": \"two\", \"rounds\": 3}", "'samples' is \"two\""},
                 Case{"{\"samples\": 1, \"rounds\": 0}", "'rounds' is 0"},
                 Case{"{\"samples\": 1, \"rounds\": 99999999999}", "'rounds' is 99999999999"}}) {
    std::string d = root_ + "/bad";
    fs::create_directories(d);
    ASSERT_TRUE(write_file(layout::session_options(d), c.text).ok());
    auto r = SessionReader::open(d);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << c.text << ": " << r.error().message;
    EXPECT_NE(r.error().message.find(layout::session_options(d)), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace ptxforge::agent
