// The run store: rows as submitted and read back (options included), idempotent replays, the
// all-or-nothing batch, the life of a run (queued, running, done, queued again after a
// restart), ids no one can guess, and a clear refusal of a file that is not ours.
#include "serve/run_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <regex>
#include <set>

#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::serve {
namespace {

class RunStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::create("ptxforge-run-store-test");
    ASSERT_TRUE(d.ok());
    dir_.emplace(std::move(*d));
    path_ = dir_->path() + "/serve.db";
  }
  std::unique_ptr<RunStore> open() {
    auto s = RunStore::open(path_);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(*s) : nullptr;
  }
  static RunRequest request(std::string client, std::string key, std::string candidate = "// ptx") {
    RunRequest q;
    q.task = "level1/vector_add";
    q.candidate = std::move(candidate);
    q.client = std::move(client);
    q.idempotency_key = std::move(key);
    return q;
  }
  std::optional<TempDir> dir_;
  std::string path_;
};

TEST(RunIds, AreLongRandomAndDistinct) {
  std::set<std::string> seen;
  std::regex form("r_[0-9a-f]{32}");
  for (int i = 0; i < 1000; ++i) {
    std::string id = new_run_id();
    ASSERT_TRUE(std::regex_match(id, form)) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(RunOptionsJson, EveryFieldARequestSetsComesBack) {
  eval::RunOptions o;
  o.device = eval::Device::cpu;
  o.arch = "sm_80";
  o.time = false;
  o.seeds = 7;
  o.seed = 0xfedcba9876543210ull;  // past 2^53: a JSON number would lose it
  o.sanitize = true;
  o.prove_ncu = true;
  o.verify_timeout = std::chrono::milliseconds(4500);
  auto back = options_from_json(options_to_json(o));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->device, eval::Device::cpu);
  EXPECT_EQ(back->arch, "sm_80");
  EXPECT_FALSE(back->time);
  EXPECT_EQ(back->seeds, 7);
  EXPECT_EQ(back->seed, o.seed);
  EXPECT_TRUE(back->sanitize);
  EXPECT_TRUE(back->prove_ncu);
  EXPECT_EQ(back->verify_timeout, std::chrono::milliseconds(4500));
  eval::RunOptions fresh;  // no seed: a fresh one per run
  back = options_from_json(options_to_json(fresh));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->seed);
  EXPECT_EQ(back->device, eval::Device::automatic);
  EXPECT_FALSE(options_from_json(R"({"device": "tpu"})").ok());
  EXPECT_FALSE(options_from_json("not json").ok());
}

TEST_F(RunStoreTest, ARunIsStoredAndReadBack) {
  auto s = open();
  RunRequest q = request("alice", "");
  q.language = Language::cuda;
  q.options.device = eval::Device::cpu;
  q.options.seeds = 2;
  auto in = s->insert_batch({q}, 1000);
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_EQ(in->runs.size(), 1u);
  EXPECT_FALSE(in->replayed[0]);
  std::string id = in->runs[0].id;
  auto got = s->get(id);
  ASSERT_TRUE(got.ok() && *got);
  const StoredRun& r = **got;
  EXPECT_EQ(r.request.candidate, "// ptx");
  EXPECT_EQ(r.request.client, "alice");
  EXPECT_EQ(r.request.language, Language::cuda);
  EXPECT_EQ(r.request.options.device, eval::Device::cpu);
  EXPECT_EQ(r.request.options.seeds, 2);
  EXPECT_EQ(r.state, RunState::queued);
  EXPECT_EQ(r.created_ms, 1000);
  EXPECT_EQ(r.view().record_json, "");
  auto none = s->get("r_00000000000000000000000000000000");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
}

TEST_F(RunStoreTest, AKeySeenBeforeAnswersWithItsRun) {
  auto s = open();
  auto first = s->insert_batch({request("alice", "k1", "first")}, 1);
  ASSERT_TRUE(first.ok());
  // The same key: the first run, whatever the body says. Another client's key is its own.
  auto again = s->insert_batch({request("alice", "k1", "second"), request("bob", "k1", "bob's")}, 2);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->replayed[0]);
  EXPECT_EQ(again->runs[0].id, first->runs[0].id);
  EXPECT_EQ(again->runs[0].request.candidate, "first");
  EXPECT_FALSE(again->replayed[1]);
  EXPECT_NE(again->runs[1].id, first->runs[0].id);
  // Two requests of one batch with one key: one run.
  auto twice = s->insert_batch({request("carol", "k2"), request("carol", "k2"), request("carol", "")}, 3);
  ASSERT_TRUE(twice.ok());
  EXPECT_FALSE(twice->replayed[0]);
  EXPECT_TRUE(twice->replayed[1]);
  EXPECT_EQ(twice->runs[0].id, twice->runs[1].id);
  EXPECT_FALSE(twice->replayed[2]);
  auto c = s->counts();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->queued, 4);  // alice k1, bob k1, carol k2, carol without a key
}

TEST_F(RunStoreTest, AnAdmitThatSaysNoStoresNothing) {
  auto s = open();
  ASSERT_TRUE(s->insert_batch({request("alice", "old")}, 1).ok());
  std::vector<size_t> asked;
  auto in = s->insert_batch({request("alice", "old"), request("alice", "a"), request("alice", "b")}, 2,
                            [&](const std::vector<const RunRequest*>& fresh) {
                              asked.push_back(fresh.size());
                              return false;
                            });
  ASSERT_TRUE(in.ok());
  EXPECT_FALSE(in->admitted);
  EXPECT_EQ(asked, std::vector<size_t>{2}) << "the replay is not a new run";
  EXPECT_EQ(s->counts()->queued, 1);
  // The refused keys were not taken: the same batch admitted later stores them.
  auto later = s->insert_batch({request("alice", "a")}, 3);
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->replayed[0]);
}

TEST_F(RunStoreTest, ARunsLifeSurvivesReopening) {
  std::string a, b;
  {
    auto s = open();
    auto in = s->insert_batch({request("x", ""), request("x", "")}, 5);
    ASSERT_TRUE(in.ok());
    a = in->runs[0].id;
    b = in->runs[1].id;
    ASSERT_TRUE(s->mark_running(a, "cpu0", 6).ok());
    ASSERT_TRUE(s->mark_running(b, "cpu1", 6).ok());
    ASSERT_TRUE(s->mark_done(b, R"({"passed": true})", 7).ok());
    EXPECT_FALSE(s->mark_running(b, "cpu0", 8).ok()) << "a done run never starts again";
    EXPECT_FALSE(s->mark_done("r_unknown", "{}", 8).ok());
  }
  auto s = open();  // as after a restart
  auto un = s->unfinished();
  ASSERT_TRUE(un.ok());
  ASSERT_EQ(un->size(), 1u);
  EXPECT_EQ((*un)[0].id, a);
  EXPECT_EQ((*un)[0].state, RunState::running);
  EXPECT_EQ((*un)[0].attempts, 1);
  EXPECT_EQ((*un)[0].device, "cpu0");
  auto n = s->requeue_running();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_EQ((*s->get(a))->state, RunState::queued);
  ASSERT_TRUE(s->mark_running(a, "cpu1", 9).ok());
  EXPECT_EQ((*s->get(a))->attempts, 2);
  auto done = s->get(b);
  ASSERT_TRUE(done.ok() && *done);
  EXPECT_EQ((*done)->state, RunState::done);
  EXPECT_EQ((*done)->view().record_json, R"({"passed": true})");
  EXPECT_EQ((*done)->finished_ms, 7);
}

TEST_F(RunStoreTest, UnfinishedRunsComeOldestFirst) {
  auto s = open();
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(s->insert_batch({request("x", "")}, i)->runs[0].id);
  ASSERT_TRUE(s->mark_done(ids[1], "{}", 9).ok());
  ASSERT_TRUE(s->mark_running(ids[3], "cpu0", 9).ok());
  auto un = s->unfinished();
  ASSERT_TRUE(un.ok());
  std::vector<std::string> got;
  for (auto& r : *un) got.push_back(r.id);
  EXPECT_EQ(got, (std::vector<std::string>{ids[0], ids[2], ids[3], ids[4]}));
}

TEST_F(RunStoreTest, AFileThatIsNotOursIsRefusedClearly) {
  ASSERT_TRUE(write_file(path_, std::string(4096, 'x')).ok());
  auto s = RunStore::open(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("is not a ptxforge serve database"), std::string::npos) << s.error().message;

  std::string other = dir_->path() + "/other.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE cells(id TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  s = RunStore::open(other);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("another program"), std::string::npos) << s.error().message;
}

TEST_F(RunStoreTest, ANewerSchemaIsRefused) {
  ASSERT_TRUE(open() != nullptr);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 2", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto s = RunStore::open(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("newer ptxforge (schema version 2"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace ptxforge::serve
