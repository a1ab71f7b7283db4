// The scheduler over a real store and a fake verifier that can be held mid-run: the order
// runs are taken in, which slot may take which run, the queue and per-client limits (whole
// batches refused, nothing stored), idempotent replays, waiting, shutdown, and restarts (the
// runs a stopped server left queued or running are run by the next; a run started too often
// is given up with a record that says so). Every wait is on a condition, with generous bounds.
#include "serve/scheduler.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>

#include <nlohmann/json.hpp>

#include "util/subprocess.h"

namespace ptxforge::serve {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Runs every candidate at once, or holds each one until released. The candidate's text picks
// the verdict: "fail" fails at verify with a fault, "throw" throws, anything else passes.
class FakeVerifier : public Verifier {
 public:
  struct Shared {
    std::mutex m;
    std::condition_variable cv;
    bool hold = false;
    int released = 0;  // runs let through while holding
    int entered = 0;
    std::vector<std::string> order;  // candidates, in the order they started
    // Waits until `n` runs have started.
    bool wait_entered(int n) {
      std::unique_lock lock(m);
      return cv.wait_for(lock, 60s, [&] { return entered >= n; });
    }
    void release(int n = 1) {
      std::lock_guard lock(m);
      released += n;
      cv.notify_all();
    }
    void open() {
      std::lock_guard lock(m);
      hold = false;
      cv.notify_all();
    }
  };
  explicit FakeVerifier(std::shared_ptr<Shared> s) : s_(std::move(s)) {}
  Verified verify(const RunRequest& q, const TaskCatalog::Entry&) override {
    std::unique_lock lock(s_->m);
    s_->order.push_back(q.candidate);
    ++s_->entered;
    s_->cv.notify_all();
    // Bounded, so that a test that fails while holding a run ends instead of hanging.
    s_->cv.wait_for(lock, 120s, [&] { return !s_->hold || s_->released > 0; });
    if (s_->hold && s_->released > 0) --s_->released;
    lock.unlock();
    if (q.candidate == "throw") throw std::runtime_error("the fake broke");
    Verified v;
    if (q.candidate == "fail") {
      v.outcome = Outcome::failed;
      v.failed_stage = eval::StageId::verify;
      v.failure = gpu::FailureKind::fault;
    } else {
      v.outcome = Outcome::passed;
    }
    v.record_json = json({{"candidate", q.candidate}, {"passed", v.outcome == Outcome::passed}}).dump();
    return v;
  }

 private:
  std::shared_ptr<Shared> s_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::create("ptxforge-scheduler-test");
    ASSERT_TRUE(d.ok());
    dir_.emplace(std::move(*d));
    auto s = RunStore::open(dir_->path() + "/serve.db");
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(*s);
    fake_ = std::make_shared<FakeVerifier::Shared>();
  }
  TaskCatalog catalog() {
    task::Task t;
    t.name = "vector_add";
    return TaskCatalog({{"level1/vector_add", "/nowhere", t}});
  }
  Slot slot(std::string name, SlotKind kind) { return {std::move(name), kind, std::make_unique<FakeVerifier>(fake_)}; }
  std::unique_ptr<Scheduler> start(std::vector<Slot> slots, SchedulerLimits limits = {}) {
    auto s = Scheduler::start(*store_, catalog(), std::move(slots), limits);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<Scheduler> start_one_cpu(SchedulerLimits limits = {}) {
    std::vector<Slot> slots;
    slots.push_back(slot("cpu0", SlotKind::cpu));
    return start(std::move(slots), limits);
  }
  static RunRequest request(std::string candidate, std::string client = "", std::string key = "",
                            eval::Device device = eval::Device::automatic) {
    RunRequest q;
    q.task = "level1/vector_add";
    q.candidate = std::move(candidate);
    q.client = std::move(client);
    q.idempotency_key = std::move(key);
    q.options.device = device;
    return q;
  }
  static std::string submit_one(Scheduler& s, RunRequest q) {
    Submitted sub = s.submit({std::move(q)});
    EXPECT_FALSE(sub.refusal) << sub.message;
    return sub.runs.empty() ? "" : sub.runs[0].id;
  }
  static RunView wait_done(Scheduler& s, const std::string& id) {
    auto v = s.get(id, 60s);
    EXPECT_TRUE(v.ok() && *v);
    EXPECT_EQ((*v)->state, RunState::done) << id;
    return **v;
  }
  std::optional<TempDir> dir_;
  std::unique_ptr<RunStore> store_;
  std::shared_ptr<FakeVerifier::Shared> fake_;
};

TEST_F(SchedulerTest, RunsAreTakenOldestFirst) {
  fake_->hold = true;
  auto s = start_one_cpu();
  std::string a = submit_one(*s, request("A"));
  ASSERT_TRUE(fake_->wait_entered(1));
  std::string b = submit_one(*s, request("B"));
  Submitted cd = s->submit({request("C"), request("D")});
  ASSERT_EQ(cd.runs.size(), 2u);
  EXPECT_EQ(cd.runs[0].state, RunState::queued);
  EXPECT_EQ(s->health().queue_depth, 3u);
  fake_->open();
  for (auto& id : {a, b, cd.runs[0].id, cd.runs[1].id}) wait_done(*s, id);
  EXPECT_EQ(fake_->order, (std::vector<std::string>{"A", "B", "C", "D"}));
  RunView v = wait_done(*s, a);
  EXPECT_EQ(v.device, "cpu0");
  EXPECT_EQ(json::parse(v.record_json)["candidate"], "A");
  EXPECT_GT(v.started_ms, 0);
  EXPECT_GE(v.finished_ms, v.started_ms);
}

TEST_F(SchedulerTest, ARunGoesOnlyToASlotOfItsKind) {
  std::vector<Slot> slots;
  slots.push_back(slot("gpu0", SlotKind::gpu));
  slots.push_back(slot("cpu0", SlotKind::cpu));
  auto s = start(std::move(slots));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(wait_done(*s, submit_one(*s, request("x", "", "", eval::Device::gpu))).device, "gpu0");
    EXPECT_EQ(wait_done(*s, submit_one(*s, request("x", "", "", eval::Device::cpu))).device, "cpu0");
    // auto takes a GPU where the server has one.
    EXPECT_EQ(wait_done(*s, submit_one(*s, request("x"))).device, "gpu0");
  }
  Health h = s->health();
  EXPECT_EQ(h.gpu_workers, 1);
  EXPECT_EQ(h.cpu_workers, 1);
}

TEST_F(SchedulerTest, ARunNoSlotHereMayRunIsFinishedSayingSo) {
  auto s = start_one_cpu();
  Submitted sub = s->submit({request("x", "", "", eval::Device::gpu)});
  ASSERT_EQ(sub.runs.size(), 1u);
  EXPECT_EQ(sub.runs[0].state, RunState::done);
  json r = json::parse(sub.runs[0].record_json);
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["verdict"], "NOT verified: the server could not carry out the run: this server has no GPU workers");
  EXPECT_TRUE(fake_->order.empty());
}

TEST_F(SchedulerTest, ABatchPastTheQueueLimitIsRefusedWhole) {
  fake_->hold = true;
  auto s = start_one_cpu({.max_queue = 2});
  std::string a = submit_one(*s, request("A"));
  ASSERT_TRUE(fake_->wait_entered(1));  // A runs: it takes no place in the queue
  Submitted two = s->submit({request("B", "", "kb"), request("C")});
  ASSERT_FALSE(two.refusal) << two.message;
  Submitted more = s->submit({request("D"), request("E")});
  ASSERT_TRUE(more.refusal);
  EXPECT_EQ(*more.refusal, Refusal::queue_full);
  EXPECT_TRUE(more.runs.empty());
  EXPECT_GE(more.retry_after_s, 1);
  EXPECT_EQ(store_->counts()->queued + store_->counts()->running, 3) << "nothing of the refused batch was stored";
  // A replay is no new run: it takes no room and is answered while the queue is full.
  Submitted replay = s->submit({request("B again", "", "kb")});
  ASSERT_FALSE(replay.refusal) << replay.message;
  EXPECT_TRUE(replay.runs[0].replayed);
  EXPECT_EQ(replay.runs[0].id, two.runs[0].id);
  EXPECT_TRUE(s->submit({request("B")}).refusal) << "without a key, the same body is a new run";
  fake_->open();
  for (auto& id : {a, two.runs[0].id, two.runs[1].id}) wait_done(*s, id);
  EXPECT_FALSE(s->submit({request("D"), request("E")}).refusal);
}

TEST_F(SchedulerTest, AKeySeenBeforeReplaysItsRun) {
  fake_->hold = true;
  auto s = start_one_cpu();
  Submitted first = s->submit({request("A", "alice", "k")});
  ASSERT_EQ(first.runs.size(), 1u);
  EXPECT_FALSE(first.runs[0].replayed);
  Submitted again = s->submit({request("something else", "alice", "k")});
  ASSERT_EQ(again.runs.size(), 1u);
  EXPECT_TRUE(again.runs[0].replayed);
  EXPECT_EQ(again.runs[0].id, first.runs[0].id);
  EXPECT_NE(again.runs[0].state, RunState::done);
  fake_->open();
  wait_done(*s, first.runs[0].id);
  Submitted done = s->submit({request("B", "alice", "k")});
  EXPECT_TRUE(done.runs[0].replayed);
  EXPECT_EQ(done.runs[0].state, RunState::done);
  EXPECT_EQ(json::parse(done.runs[0].record_json)["candidate"], "A");
  EXPECT_EQ(fake_->order, std::vector<std::string>{"A"}) << "a replay never runs";
  EXPECT_NE(s->metrics_text().find("ptxforge_runs_accepted_total 1\n"), std::string::npos) << s->metrics_text();
}

TEST_F(SchedulerTest, AClientHasAtMostItsShareInFlight) {
  fake_->hold = true;
  auto s = start_one_cpu({.max_queue = 100, .max_inflight_per_client = 2});
  std::string a = submit_one(*s, request("A", "alice"));
  std::string b = submit_one(*s, request("B", "alice"));
  Submitted c = s->submit({request("C", "alice")});
  ASSERT_TRUE(c.refusal);
  EXPECT_EQ(*c.refusal, Refusal::rate_limited);
  Submitted bob = s->submit({request("D", "bob"), request("E", "bob")});
  EXPECT_FALSE(bob.refusal) << "another client's share is its own";
  Submitted three = s->submit({request("F", "carol"), request("G", "carol"), request("H", "carol")});
  EXPECT_TRUE(three.refusal) << "a batch over the share is refused whole";
  fake_->open();
  wait_done(*s, a);
  wait_done(*s, b);
  EXPECT_FALSE(s->submit({request("C", "alice")}).refusal);
}

TEST_F(SchedulerTest, WaitingEndsWhenTheRunIsDoneOrTheWaitPasses) {
  fake_->hold = true;
  auto s = start_one_cpu();
  std::string a = submit_one(*s, request("A"));
  ASSERT_TRUE(fake_->wait_entered(1));
  auto v = s->get(a, 20ms);
  ASSERT_TRUE(v.ok() && *v);
  EXPECT_EQ((*v)->state, RunState::running);
  EXPECT_EQ((*v)->record_json, "");
  auto waiting = std::async(std::launch::async, [&] { return s->get(a, 120s); });
  fake_->release();
  auto done = waiting.get();
  ASSERT_TRUE(done.ok() && *done);
  EXPECT_EQ((*done)->state, RunState::done);
  auto unknown = s->get("r_0123", 10s);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(*unknown);
}

TEST_F(SchedulerTest, ShutdownLetsTheRunningFinishAndLeavesTheQueuedStored) {
  fake_->hold = true;
  std::string a, b, c;
  {
    auto s = start_one_cpu();
    a = submit_one(*s, request("A"));
    ASSERT_TRUE(fake_->wait_entered(1));
    b = submit_one(*s, request("B"));
    c = submit_one(*s, request("C"));
    auto waiter = std::async(std::launch::async, [&] { return s->get(b, 120s); });
    auto stopping = std::async(std::launch::async, [&] { s->shutdown(120s); });
    // A waiter on a queued run is answered when shutdown begins, and submissions are refused.
    auto w = waiter.get();
    ASSERT_TRUE(w.ok() && *w);
    EXPECT_EQ((*w)->state, RunState::queued);
    while (!s->health().shutting_down) std::this_thread::yield();
    Submitted refused = s->submit({request("D")});
    ASSERT_TRUE(refused.refusal);
    EXPECT_EQ(*refused.refusal, Refusal::shutting_down);
    fake_->release();
    stopping.get();  // returns once A is done
    EXPECT_EQ((*store_->get(a))->state, RunState::done);
    s->shutdown(0ms);  // idempotent
  }
  EXPECT_EQ((*store_->get(b))->state, RunState::queued);
  EXPECT_EQ((*store_->get(c))->state, RunState::queued);
  // The next server runs them, oldest first.
  fake_->open();
  auto s = start_one_cpu();
  wait_done(*s, b);
  wait_done(*s, c);
  EXPECT_EQ(fake_->order, (std::vector<std::string>{"A", "B", "C"}));
}

TEST_F(SchedulerTest, ARunLeftRunningByADeadServerRunsAgain) {
  auto in = store_->insert_batch({request("A")}, 1);
  ASSERT_TRUE(in.ok());
  std::string a = in->runs[0].id;
  ASSERT_TRUE(store_->mark_running(a, "cpu0", 2).ok());  // and then the server was killed
  auto s = start_one_cpu();
  RunView v = wait_done(*s, a);
  EXPECT_EQ(json::parse(v.record_json)["candidate"], "A");
  EXPECT_EQ((*store_->get(a))->attempts, 2);
}

TEST_F(SchedulerTest, ARunStartedTooOftenIsGivenUp) {
  auto in = store_->insert_batch({request("killer"), request("second chance")}, 1);
  ASSERT_TRUE(in.ok());
  std::string killer = in->runs[0].id, second = in->runs[1].id;
  for (int i = 0; i < 3; ++i) {  // three servers died running it
    ASSERT_TRUE(store_->mark_running(killer, "cpu0", 2).ok());
    ASSERT_TRUE(store_->requeue_running().ok());
  }
  ASSERT_TRUE(store_->mark_running(second, "cpu0", 2).ok());
  ASSERT_TRUE(store_->mark_running(second, "cpu0", 3).ok());
  auto s = start_one_cpu();
  auto k = store_->get(killer);
  ASSERT_TRUE(k.ok() && *k);
  EXPECT_EQ((*k)->state, RunState::done) << "finished at start, never run again";
  json r = json::parse((*k)->record_json);
  EXPECT_EQ(r["passed"], false);
  EXPECT_NE(r["verdict"].get<std::string>().find("started 3 times"), std::string::npos) << r["verdict"];
  wait_done(*s, second);
  EXPECT_EQ(fake_->order, std::vector<std::string>{"second chance"});
}

TEST_F(SchedulerTest, AVerifierThatThrowsStillFinishesTheRun) {
  auto s = start_one_cpu();
  RunView v = wait_done(*s, submit_one(*s, request("throw")));
  json r = json::parse(v.record_json);
  EXPECT_EQ(r["passed"], false);
  EXPECT_NE(r["verdict"].get<std::string>().find("could not carry out the run"), std::string::npos);
  // The slot goes on serving.
  EXPECT_EQ(json::parse(wait_done(*s, submit_one(*s, request("after"))).record_json)["passed"], true);
}

TEST_F(SchedulerTest, MetricsCountVerdictsFailuresAndBusyTime) {
  std::vector<Slot> slots;
  slots.push_back(slot("cpu0", SlotKind::cpu));
  slots.push_back(slot("cpu1", SlotKind::cpu));
  auto s = start(std::move(slots));
  Submitted sub = s->submit({request("ok"), request("fail"), request("ok")});
  for (auto& r : sub.runs) wait_done(*s, r.id);
  std::string m = s->metrics_text();
  EXPECT_NE(m.find("ptxforge_queue_depth 0\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_runs_accepted_total 3\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_runs_total{stage=\"none\",verdict=\"passed\"} 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_runs_total{stage=\"verify\",verdict=\"failed\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_failures_total{kind=\"fault\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_worker_busy_seconds_total{worker=\"cpu0\"}"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_worker_busy_seconds_total{worker=\"cpu1\"}"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_run_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos) << m;
  EXPECT_NE(m.find("ptxforge_run_seconds_count 3\n"), std::string::npos) << m;
}

}  // namespace
}  // namespace ptxforge::serve
