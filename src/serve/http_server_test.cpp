// The HTTP front over real loopback connections with a fake RunService: every route and error
// code of docs/serve.md, authentication, and the guards that keep one client from taking the
// server (a huge body, a trickling request, a client that hangs up, a flood of bad requests).
#include "serve/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

namespace ptxforge::serve {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

class FakeService : public RunService {
 public:
  std::optional<Refusal> refuse;
  bool done_on_submit = false;
  bool throw_on_get = false;
  std::vector<RunRequest> received;

  Submitted submit(const std::vector<RunRequest>& requests) override {
    std::lock_guard lock(m_);
    Submitted s;
    if (refuse) {
      s.refusal = refuse;
      s.message = "refused by the fake";
      s.retry_after_s = 7;
      return s;
    }
    for (auto& r : requests) {
      received.push_back(r);
      std::string key = r.client + "/" + r.idempotency_key;
      if (!r.idempotency_key.empty() && keys_.count(key)) {
        RunView v = runs_[keys_[key]];
        v.replayed = true;
        s.runs.push_back(v);
        continue;
      }
      RunView v;
      v.id = "run" + std::to_string(runs_.size() + 1);
      v.task = r.task;
      v.client = r.client;
      v.created_ms = 1764940000123;
      if (done_on_submit) finish_locked(v);
      runs_[v.id] = v;
      if (!r.idempotency_key.empty()) keys_[key] = v.id;
      s.runs.push_back(v);
    }
    return s;
  }
  Result<std::optional<RunView>> get(const std::string& id, std::chrono::milliseconds wait) override {
    if (throw_on_get) throw std::runtime_error("the fake's store is on fire");
    std::unique_lock lock(m_);
    if (!runs_.count(id)) return std::optional<RunView>();
    if (wait.count() > 0) {
      ++waiters_;
      changed_.notify_all();
      changed_.wait_for(lock, wait, [&] { return runs_[id].state == RunState::done; });
      --waiters_;
    }
    return std::optional<RunView>(runs_[id]);
  }
  Health health() override { return Health{3, 1, 2, shutting_down}; }
  std::string metrics_text() override { return "# TYPE ptxforge_queue_depth gauge\nptxforge_queue_depth 3\n"; }
  void shutdown(std::chrono::milliseconds) override { shutting_down = true; }

  void finish(const std::string& id) {
    std::lock_guard lock(m_);
    finish_locked(runs_[id]);
    changed_.notify_all();
  }
  // Blocks until `n` requests are inside get() with a wait (bounded, so a bug fails the test).
  bool await_waiters(int n) {
    std::unique_lock lock(m_);
    return changed_.wait_for(lock, 60s, [&] { return waiters_ == n; });
  }
  bool shutting_down = false;

 private:
  static void finish_locked(RunView& v) {
    v.state = RunState::done;
    v.started_ms = v.created_ms + 10;
    v.finished_ms = v.created_ms + 1500;
    v.device = "cpu0";
    v.record_json = R"({"passed": true, "verdict": "passed", "verified_by": "cpu_engine"})";
  }
  std::mutex m_;
  std::condition_variable changed_;
  std::map<std::string, RunView> runs_;
  std::map<std::string, std::string> keys_;
  int waiters_ = 0;
};

TaskCatalog test_catalog() {
  auto cat = TaskCatalog::load({});
  EXPECT_TRUE(cat.ok()) << cat.error().message;
  return cat.ok() ? std::move(*cat) : TaskCatalog({});
}

const std::string kGood = R"({"task": "vector_add", "candidate": "// @launch grid=1\n.version 8.0"})";

class HttpServerTest : public ::testing::Test {
 protected:
  void start(HttpOptions o = {}) {
    o.port = 0;
    server_ = std::make_unique<HttpServer>(fake_, catalog_, std::move(o));
    auto st = server_->bind();
    ASSERT_TRUE(st.ok()) << st.error().message;
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::Client client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(120, 0);
    return c;
  }
  static json body(const httplib::Result& r) { return json::parse(r->body); }
  static void expect_error(const httplib::Result& r, int status, const std::string& code, const std::string& field = "") {
    ASSERT_TRUE(r) << "no answer";
    EXPECT_EQ(r->status, status) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    json j = json::parse(r->body, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r->body;
    EXPECT_EQ(j["error"]["code"], code) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string());
    if (!field.empty()) {
      EXPECT_EQ(j["error"].value("field", ""), field) << r->body;
    }
  }
  // A raw connection to the server, for what httplib::Client would not send.
  int raw_connect() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(server_->port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  }

  FakeService fake_;
  TaskCatalog catalog_ = test_catalog();
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST_F(HttpServerTest, PostRunIsAcceptedWithLocation) {
  start();
  auto r = client().Post("/v1/runs", kGood, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202) << r->body;
  json j = body(r);
  EXPECT_EQ(j["id"], "run1");
  EXPECT_EQ(j["state"], "queued");
  EXPECT_EQ(j["created"], "2025-12-05T13:06:40.123Z");
  EXPECT_FALSE(j.contains("record"));
  EXPECT_EQ(r->get_header_value("Location"), "/v1/runs/run1");
  ASSERT_EQ(fake_.received.size(), 1u);
  EXPECT_EQ(fake_.received[0].task, "level1/vector_add");
  EXPECT_EQ(fake_.received[0].client, "");
}

TEST_F(HttpServerTest, DoneRunAnswers200WithRecord) {
  fake_.done_on_submit = true;
  start();
  auto r = client().Post("/v1/runs", kGood, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json j = body(r);
  EXPECT_EQ(j["state"], "done");
  EXPECT_EQ(j["record"]["verified_by"], "cpu_engine");
  EXPECT_EQ(j["device"], "cpu0");
  EXPECT_TRUE(j.contains("finished"));
}

TEST_F(HttpServerTest, WaitBlocksUntilTheRunIsDone) {
  start();
  auto pending = std::async(std::launch::async, [&] { return client().Post("/v1/runs?wait=60", kGood, "application/json"); });
  ASSERT_TRUE(fake_.await_waiters(1));
  fake_.finish("run1");
  auto r = pending.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(body(r)["record"]["passed"], true);

  auto g = client().Get("/v1/runs/run1?wait=0.5");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->status, 200);
  EXPECT_EQ(body(g)["state"], "done");
  expect_error(client().Get("/v1/runs/run1?wait=soon"), 400, "bad_request", "wait");
  expect_error(client().Post("/v1/runs?wait=-", kGood, "application/json"), 400, "bad_request", "wait");
}

TEST_F(HttpServerTest, WaitersPastTheCapAnswerAtOnce) {
  HttpOptions o;
  o.max_waiting = 1;
  start(o);
  auto first = std::async(std::launch::async, [&] { return client().Post("/v1/runs?wait=60", kGood, "application/json"); });
  ASSERT_TRUE(fake_.await_waiters(1));
  auto second = client().Post("/v1/runs?wait=60", kGood, "application/json");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 202);  // did not wait: the one waiting slot is taken
  fake_.finish("run1");
  EXPECT_EQ(first.get()->status, 200);
}

TEST_F(HttpServerTest, GetRun) {
  start();
  ASSERT_EQ(client().Post("/v1/runs", kGood, "application/json")->status, 202);
  auto r = client().Get("/v1/runs/run1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json j = body(r);
  EXPECT_EQ(j["task"], "level1/vector_add");
  EXPECT_FALSE(j.contains("record"));
  expect_error(client().Get("/v1/runs/run99"), 404, "not_found");
  expect_error(client().Get("/v1/runs/..%2f..%2fetc"), 404, "not_found");
  expect_error(client().Get("/v1/runs/a%00b"), 404, "not_found");
}

TEST_F(HttpServerTest, BadRequestsNameTheField) {
  start();
  auto c = client();
  expect_error(c.Post("/v1/runs", "{not json", "application/json"), 400, "bad_request");
  expect_error(c.Post("/v1/runs", "", "application/json"), 400, "bad_request");
  expect_error(c.Post("/v1/runs", R"({"task": 5, "candidate": "x"})", "application/json"), 400, "bad_request", "task");
  expect_error(c.Post("/v1/runs", R"({"task": "vector_add", "candidate": "x", "seedz": 1})", "application/json"), 400,
               "bad_request", "seedz");
  expect_error(c.Post("/v1/runs", R"({"task": "../../etc/passwd", "candidate": "x"})", "application/json"), 400, "bad_request", "task");
  auto unknown = c.Post("/v1/runs", R"({"task": "level1/nothing", "candidate": "x"})", "application/json");
  expect_error(unknown, 404, "unknown_task", "task");
  EXPECT_EQ(unknown->body.find(catalog_.entries()[0].dir), std::string::npos);
  EXPECT_TRUE(fake_.received.empty());
}

TEST_F(HttpServerTest, LimitsAnswer413WithTheirNames) {
  HttpOptions o;
  o.limits.max_body_bytes = 64 * 1024;
  o.limits.max_candidate_bytes = 1000;
  start(o);
  auto c = client();
  json big = {{"task", "vector_add"}, {"candidate", std::string(1001, 'x')}};
  auto r = c.Post("/v1/runs", big.dump(), "application/json");
  expect_error(r, 413, "too_large", "candidate");
  EXPECT_EQ(body(r)["error"]["limit"], "max_candidate_bytes");
  EXPECT_EQ(body(r)["error"]["value"], 1000);

  json huge = {{"task", "vector_add"}, {"candidate", std::string(200 * 1024, 'x')}};
  r = client().Post("/v1/runs", huge.dump(), "application/json");
  ASSERT_TRUE(r);
  expect_error(r, 413, "too_large");
  EXPECT_EQ(body(r)["error"]["limit"], "max_body_bytes");
  EXPECT_EQ(body(r)["error"]["value"], 64 * 1024);
  EXPECT_EQ(client().Get("/healthz")->status, 200);
}

TEST_F(HttpServerTest, RefusalsCarryRetryAfter) {
  start();
  fake_.refuse = Refusal::queue_full;
  auto r = client().Post("/v1/runs", kGood, "application/json");
  expect_error(r, 429, "queue_full");
  EXPECT_EQ(r->get_header_value("Retry-After"), "7");
  EXPECT_EQ(body(r)["error"]["limit"], "max_queue");
  fake_.refuse = Refusal::rate_limited;
  r = client().Post("/v1/batch", R"({"runs": [)" + kGood + "]}", "application/json");
  expect_error(r, 429, "rate_limited");
  EXPECT_EQ(body(r)["error"]["limit"], "max_inflight_per_token");
  EXPECT_EQ(r->get_header_value("Retry-After"), "7");
  fake_.refuse = Refusal::shutting_down;
  r = client().Post("/v1/runs", kGood, "application/json");
  expect_error(r, 503, "shutting_down");
  EXPECT_FALSE(r->get_header_value("Retry-After").empty());
  fake_.refuse = Refusal::internal;
  expect_error(client().Post("/v1/runs", kGood, "application/json"), 500, "internal");
}

TEST_F(HttpServerTest, Batch) {
  start();
  auto r = client().Post("/v1/batch", R"({"runs": [)" + kGood + "," + kGood + "]}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  json j = body(r);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["id"], "run2");
  expect_error(client().Post("/v1/batch", R"({"runs": [)" + kGood + R"(, {"task": "vector_add", "candidate": "x", "seeds": 0}]})",
                             "application/json"),
               400, "bad_request", "runs[1].seeds");
  EXPECT_EQ(fake_.received.size(), 2u);  // the bad batch stored nothing
  fake_.finish("run1");
  auto pending = std::async(std::launch::async, [&] {
    return client().Post("/v1/batch?wait=60", R"({"runs": [)" + kGood + "," + kGood + "]}", "application/json");
  });
  ASSERT_TRUE(fake_.await_waiters(1));  // waiting on run3
  fake_.finish("run3");
  ASSERT_TRUE(fake_.await_waiters(1));  // then on run4
  fake_.finish("run4");
  auto done = pending.get();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 200);  // every run finished within the wait
  EXPECT_EQ(body(done)["runs"][1]["record"]["passed"], true);
  auto partly = client().Post("/v1/batch?wait=0.2", R"({"runs": [)" + kGood + "]}", "application/json");
  EXPECT_EQ(partly->status, 202);  // run5 is not done
}

TEST_F(HttpServerTest, IdempotentReplay) {
  start();
  httplib::Headers h = {{"Idempotency-Key", "try-1"}};
  auto a = client().Post("/v1/runs", h, kGood, "application/json");
  auto b = client().Post("/v1/runs", h, R"({"task": "sgemm", "candidate": "other"})", "application/json");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(body(a)["id"], body(b)["id"]);
  EXPECT_FALSE(body(a).contains("replayed"));
  EXPECT_EQ(body(b)["replayed"], true);
  EXPECT_EQ(fake_.received[0].idempotency_key, "try-1");
}

TEST_F(HttpServerTest, Tasks) {
  start();
  auto r = client().Get("/v1/tasks");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(body(r)["tasks"].size(), catalog_.entries().size());
  r = client().Get("/v1/tasks/level1/vector_add");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(body(r)["name"], "level1/vector_add");
  EXPECT_EQ(client().Get("/v1/tasks/vector_add")->status, 200);
  expect_error(client().Get("/v1/tasks/level1/nothing"), 404, "unknown_task");
  for (auto path : {"/v1/tasks/%2e%2e/%2e%2e/etc/passwd", "/v1/tasks/..%2f..%2fetc", "/v1/tasks/%2fetc%2fpasswd", "/v1/tasks/a%00b"}) {
    auto e = client().Get(path);
    expect_error(e, 404, "unknown_task");
    EXPECT_EQ(e->body.find("passwd"), std::string::npos);
  }
}

TEST_F(HttpServerTest, HealthAndMetrics) {
  start();
  auto h = client().Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  json j = body(h);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["queue_depth"], 3);
  EXPECT_EQ(j["workers"]["gpu"], 1);
  EXPECT_EQ(j["workers"]["cpu"], 2);
  EXPECT_EQ(j["version"], "0.1.0");
  client().Get("/nowhere");
  auto m = client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_NE(m->body.find("ptxforge_queue_depth 3"), std::string::npos);
  EXPECT_NE(m->body.find("ptxforge_http_requests_total{code=\"200\"} 1"), std::string::npos) << m->body;
  EXPECT_NE(m->body.find("ptxforge_http_requests_total{code=\"404\"} 1"), std::string::npos) << m->body;
  fake_.shutting_down = true;
  EXPECT_EQ(client().Get("/healthz")->status, 503);
}

TEST_F(HttpServerTest, UnknownRoutesAndMethods) {
  start();
  expect_error(client().Get("/"), 404, "not_found");
  expect_error(client().Get("/v1/nothing"), 404, "not_found");
  auto r = client().Get("/v1/batch");
  expect_error(r, 405, "method_not_allowed");
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  r = client().Delete("/v1/runs/run1");
  expect_error(r, 405, "method_not_allowed");
  EXPECT_EQ(r->get_header_value("Allow"), "GET");
  expect_error(client().Put("/v1/runs", kGood, "application/json"), 405, "method_not_allowed");
  expect_error(client().Post("/healthz", "{}", "application/json"), 405, "method_not_allowed");
}

TEST_F(HttpServerTest, AnExceptionIsA500AndTheServerGoesOn) {
  start();
  fake_.throw_on_get = true;
  auto r = client().Get("/v1/runs/run1");
  expect_error(r, 500, "internal");
  EXPECT_EQ(r->body.find("on fire"), std::string::npos);  // the reason goes to the log only
  fake_.throw_on_get = false;
  EXPECT_EQ(client().Get("/healthz")->status, 200);
}

TEST_F(HttpServerTest, Tokens) {
  HttpOptions o;
  o.tokens = TokenSet({"right-token-1", "right-token-2"});
  start(o);
  auto r = client().Post("/v1/runs", kGood, "application/json");
  expect_error(r, 401, "unauthorized");
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
  expect_error(client().Get("/v1/nothing"), 401, "unauthorized");  // no route is answered without a token
  expect_error(client().Get("/metrics"), 401, "unauthorized");
  auto c = client();
  c.set_bearer_token_auth("wrong-token");
  expect_error(c.Get("/v1/tasks"), 401, "unauthorized");
  EXPECT_EQ(client().Get("/healthz")->status, 200);
  EXPECT_TRUE(fake_.received.empty());

  auto good = client();
  good.set_bearer_token_auth("right-token-2");
  auto p = good.Post("/v1/runs", kGood, "application/json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status, 202) << p->body;
  ASSERT_EQ(fake_.received.size(), 1u);
  EXPECT_EQ(fake_.received[0].client, token_id("right-token-2"));
  EXPECT_EQ(good.Get("/metrics")->status, 200);
  EXPECT_EQ(good.Get("/v1/runs/run1")->status, 200);
}

TEST_F(HttpServerTest, IdempotencyKeysAreKeptApartByToken) {
  HttpOptions o;
  o.tokens = TokenSet({"token-a", "token-b"});
  start(o);
  auto a = client(), b = client();
  a.set_bearer_token_auth("token-a");
  b.set_bearer_token_auth("token-b");
  httplib::Headers h = {{"Idempotency-Key", "same"}};
  auto ra = a.Post("/v1/runs", h, kGood, "application/json");
  auto rb = b.Post("/v1/runs", h, kGood, "application/json");
  EXPECT_NE(body(ra)["id"], body(rb)["id"]);
  EXPECT_FALSE(body(rb).contains("replayed"));
}

TEST_F(HttpServerTest, ARunIsShownToTheTokenThatSubmittedItOnly) {
  HttpOptions o;
  o.tokens = TokenSet({"token-a", "token-b"});
  start(o);
  auto a = client(), b = client();
  a.set_bearer_token_auth("token-a");
  b.set_bearer_token_auth("token-b");
  fake_.done_on_submit = true;
  std::string id = body(a.Post("/v1/runs", kGood, "application/json"))["id"];
  auto mine = a.Get("/v1/runs/" + id);
  ASSERT_TRUE(mine);
  EXPECT_EQ(mine->status, 200) << mine->body;
  EXPECT_EQ(mine->body.find("token-a"), std::string::npos) << "the owner is never shown";
  EXPECT_EQ(mine->body.find(token_id("token-a")), std::string::npos) << "nor the token's id";
  // The other token gets the answer of an unknown id, with ?wait too (it must not wait on it).
  expect_error(b.Get("/v1/runs/" + id), 404, "not_found");
  expect_error(b.Get("/v1/runs/" + id + "?wait=30"), 404, "not_found");
  expect_error(b.Get("/v1/runs/no-such-run"), 404, "not_found");
}

TEST(HttpServerBind, NonLoopbackNeedsTokens) {
  FakeService fake;
  TaskCatalog cat({});
  HttpOptions o;
  o.host = "0.0.0.0";
  o.port = 0;
  HttpServer s(fake, cat, o);
  auto st = s.bind();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("token"), std::string::npos);
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  for (auto h : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.1", "example.com", "", "128.0.0.1"}) EXPECT_FALSE(is_loopback_host(h)) << h;
}

TEST_F(HttpServerTest, ClientThatHangsUpMidBody) {
  start();
  for (int i = 0; i < 20; ++i) {
    int fd = raw_connect();
    std::string head = "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"task\":";
    ASSERT_GT(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), 0);
    ::close(fd);
  }
  EXPECT_EQ(client().Get("/healthz")->status, 200);
  EXPECT_TRUE(fake_.received.empty());
}

// Reads what the server says on `fd` until it closes (or 30 s pass); "" when it said nothing.
std::string read_until_closed(int fd, bool& closed) {
  std::string answer;
  char buf[4096];
  closed = false;
  for (;;) {
    pollfd q{fd, POLLIN, 0};
    if (::poll(&q, 1, 30000) <= 0) return answer;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      closed = true;
      return answer;
    }
    answer.append(buf, size_t(n));
  }
}

// A chunked body has no declared length, so the body limit would not hold for it: refused
// before a byte of it is read, whatever follows.
TEST_F(HttpServerTest, AChunkedBodyIsRefusedBeforeItIsRead) {
  start();
  int fd = raw_connect();
  std::string head = "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n100000\r\n";
  ASSERT_GT(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), 0);
  std::string chunk(64 << 10, ' ');
  for (int i = 0; i < 4 && ::send(fd, chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL) > 0; ++i) {
  }
  bool closed = false;
  std::string answer = read_until_closed(fd, closed);
  ::close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 411", 0), 0u) << answer.substr(0, 300);
  EXPECT_NE(answer.find("\"bad_request\""), std::string::npos) << answer.substr(0, 300);
  EXPECT_TRUE(closed);
  EXPECT_TRUE(fake_.received.empty());
  EXPECT_EQ(client().Get("/healthz")->status, 200);
}

// A compressed body would expand past the limit in memory (500 MiB of zeros gzip to 0.5 MB).
TEST_F(HttpServerTest, ACompressedBodyIsRefused) {
  start();
  httplib::Headers h = {{"Content-Encoding", "gzip"}};
  auto r = client().Post("/v1/runs", h, std::string(64, 'x'), "application/json");
  expect_error(r, 415, "bad_request");
  EXPECT_TRUE(fake_.received.empty());
  EXPECT_EQ(client().Get("/healthz")->status, 200);
}

// httplib caps each header line but not their number: a request past the byte budget (its
// headers here, before any token is asked for) ends its connection, and the server goes on.
TEST_F(HttpServerTest, AFloodOfHeadersEndsItsConnection) {
  HttpOptions o;
  o.limits.max_body_bytes = 1024;  // budget: 1 KiB of body + 64 KiB of line and headers
  start(o);
  int fd = raw_connect();
  std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  while (request.size() < (1u << 20)) request += "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaa\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += size_t(n);
  }
  bool closed = false;
  std::string answer = read_until_closed(fd, closed);
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_TRUE(answer.empty() || answer.rfind("HTTP/1.1 4", 0) == 0) << answer.substr(0, 200);
  EXPECT_EQ(client().Get("/healthz")->status, 200);
}

// A request whose bytes trickle in (each well within the per-read timeout) is dropped at its
// deadline: slowly (the server waits on an empty socket) and briskly (a byte always waiting).
class TricklingRequest : public HttpServerTest, public ::testing::WithParamInterface<int> {};

TEST_P(TricklingRequest, IsDropped) {
  HttpOptions o;
  o.request_read_timeout = 1s;
  o.threads = 2;
  start(o);
  const int pause_ms = GetParam();
  int fd = raw_connect();
  // Many short header lines: no line ever reaches httplib's line-length limit, only the deadline ends it.
  std::string request = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 20000; ++i) request += "X-Pad: aaaaaaaa\r\n";
  bool dropped = false;
  auto began = std::chrono::steady_clock::now();
  for (size_t i = 0; i < request.size() && std::chrono::steady_clock::now() - began < 120s; ++i) {
    if (::send(fd, &request[i], 1, MSG_NOSIGNAL) != 1) {
      dropped = true;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, pause_ms) > 0) {
      // The server ended the request: it closes, with nothing or a 4xx said first.
      std::string answer;
      char buf[1024];
      for (;;) {
        pollfd q{fd, POLLIN, 0};
        if (::poll(&q, 1, 30000) <= 0) break;  // still open after 30 s: not dropped
        ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          dropped = true;
          break;
        }
        answer.append(buf, size_t(n));
      }
      EXPECT_TRUE(answer.empty() || answer.rfind("HTTP/1.1 4", 0) == 0) << answer.substr(0, 200);
      break;
    }
    // Meanwhile the server serves others.
    if (i == 5) {
      EXPECT_EQ(client().Get("/healthz")->status, 200);
    }
  }
  ::close(fd);
  EXPECT_TRUE(dropped);
  EXPECT_EQ(client().Get("/healthz")->status, 200);
}

INSTANTIATE_TEST_SUITE_P(Pace, TricklingRequest, ::testing::Values(100, 1));

TEST_F(HttpServerTest, AThousandMalformedRequestsThenAGoodOne) {
  start();
  const char* garbage[] = {"BLAH\r\n\r\n", "GET\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "\x01\x02\x03\r\n\r\n",
                           "POST /v1/runs HTTP/1.1\r\nContent-Length: -5\r\n\r\n", "GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n"};
  for (int i = 0; i < 1000; ++i) {
    int fd = raw_connect();
    std::string g = garbage[i % 6];
    ::send(fd, g.data(), g.size(), MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    char buf[512];
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30000) > 0) (void)::recv(fd, buf, sizeof(buf), 0);
    ::close(fd);
  }
  auto c = client();
  for (int i = 0; i < 20; ++i) expect_error(c.Post("/v1/runs", "{\"task\": [", "application/json"), 400, "bad_request");
  auto r = client().Post("/v1/runs", kGood, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
}

}  // namespace
}  // namespace ptxforge::serve
