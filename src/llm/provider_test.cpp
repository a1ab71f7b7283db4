// The providers against fake OpenAI-compatible and Anthropic servers on loopback
// (cpp-httplib), replaying scripted exchanges: rate limits, server errors, a timeout,
// malformed JSON, an empty and a huge reply, missing keys, an unreachable endpoint.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include <filesystem>

#include "agent/compile.h"
#include "llm/cache.h"
#include "util/paths.h"
#include "llm/provider.h"
#include "util/text.h"

namespace ptxforge::llm {
namespace {

struct Scripted {
  int status = 200;
  std::string body;
  std::string retry_after;
  int delay_ms = 0;
};

// A loopback server answering POSTs from a script, recording what it was sent.
class FakeServer {
 public:
  FakeServer() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Scripted s;
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(req.body);
        headers_.push_back(req.get_header_value("Authorization") + "|" + req.get_header_value("x-api-key") + "|" +
                           req.get_header_value("anthropic-version"));
        if (!script_.empty()) {
          s = script_.front();
          script_.pop_front();
        }
      }
      if (s.delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(s.delay_ms));
      res.status = s.status;
      if (!s.retry_after.empty()) res.set_header("Retry-After", s.retry_after);
      res.set_content(s.body, "application/json");
    };
    server_.Post("/v1/chat/completions", handler);
    server_.Post("/v1/messages", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeServer() {
    server_.stop();
    thread_.join();
  }
  void push(int status, std::string body, std::string retry_after = "", int delay_ms = 0) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.push_back({status, std::move(body), std::move(retry_after), delay_ms});
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::vector<std::string> headers() {
    std::lock_guard<std::mutex> lock(mu_);
    return headers_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::deque<Scripted> script_;
  std::vector<std::string> requests_, headers_;
};

std::string openai_reply(const std::string& text) {
  return R"({"choices":[{"message":{"role":"assistant","content":)" + std::string("\"") + text +
         R"("}}],"usage":{"prompt_tokens":11,"completion_tokens":7}})";
}

class Env {
 public:
  Env(const char* name, const std::string& value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value.empty()) unsetenv(name);
    else setenv(name, value.c_str(), 1);
  }
  ~Env() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

struct Sleeps {
  std::vector<double> seconds;
  ProviderOptions options() {
    ProviderOptions o;
    o.sleep = [this](double s) { seconds.push_back(s); };
    o.timeout = std::chrono::milliseconds(3000);
    return o;
  }
};

Request hello() {
  Request r;
  r.messages = {{"system", "be brief"}, {"user", "write a kernel"}};
  return r;
}

TEST(OpenAi, RateLimitThenSuccessHonoursRetryAfter) {
  FakeServer srv;
  srv.push(429, R"({"error":{"message":"slow down"}})", "3");
  srv.push(200, openai_reply("```ptx\\n.version 8.0\\n```"));
  Env base("OPENAI_BASE_URL", srv.url() + "/v1"), key("OPENAI_API_KEY", "sk-SECRET-123");
  Sleeps sleeps;
  auto p = make_provider("openai:test-model", sleeps.options());
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto r = (*p)->complete(hello());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "```ptx\n.version 8.0\n```");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->usage.prompt_tokens, 11);
  EXPECT_EQ(r->usage.completion_tokens, 7);
  EXPECT_EQ(sleeps.seconds, std::vector<double>{3.0});
  auto sent = srv.requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NE(sent[0].find("\"model\":\"test-model\""), std::string::npos);
  EXPECT_NE(sent[0].find("\"role\":\"system\""), std::string::npos);
  EXPECT_NE(sent[0].find("\"max_tokens\""), std::string::npos) << "compatible servers get max_tokens";
  EXPECT_EQ(srv.headers()[0].rfind("Bearer sk-SECRET-123", 0), 0u);
}

TEST(OpenAi, ServerErrorsBackOffThenGiveUpWithoutLeakingTheKey) {
  FakeServer srv;
  for (int i = 0; i < 3; ++i) srv.push(500, "internal error");
  Env base("OPENAI_BASE_URL", srv.url() + "/v1"), key("OPENAI_API_KEY", "sk-SECRET-123");
  Sleeps sleeps;
  auto opts = sleeps.options();
  opts.max_attempts = 3;
  auto p = make_provider("openai:m", opts);
  auto r = (*p)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("gave up after 3 attempts"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("HTTP 500"), std::string::npos);
  EXPECT_EQ(r.error().message.find("SECRET"), std::string::npos);
  EXPECT_EQ(sleeps.seconds, (std::vector<double>{1.0, 2.0}));
}

TEST(OpenAi, ClientErrorsAreNotRetried) {
  FakeServer srv;
  srv.push(401, R"({"error":{"message":"Incorrect API key provided"}})");
  Env base("OPENAI_BASE_URL", srv.url() + "/v1"), key("OPENAI_API_KEY", "sk-SECRET-123");
  Sleeps sleeps;
  auto r = (*make_provider("openai:m", sleeps.options()))->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("HTTP 401"), std::string::npos);
  EXPECT_NE(r.error().message.find("Incorrect API key provided"), std::string::npos);
  EXPECT_EQ(srv.requests().size(), 1u);
  EXPECT_TRUE(sleeps.seconds.empty());
}

TEST(OpenAi, TimeoutMalformedEmptyAndHugeReplies) {
  FakeServer srv;
  Env base("OPENAI_BASE_URL", srv.url() + "/v1"), key("OPENAI_API_KEY", "");
  Sleeps sleeps;
  auto opts = sleeps.options();
  opts.max_attempts = 1;
  opts.timeout = std::chrono::milliseconds(300);
  opts.max_reply_bytes = 1 << 20;
  auto p = make_provider("openai:m", opts);
  ASSERT_TRUE(p.ok()) << "a local server needs no key";
  srv.push(200, openai_reply("late"), "", 1500);
  auto r = (*p)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no reply from"), std::string::npos) << r.error().message;

  // The rest must not race the short timeout: a 3 MB reply under the sanitizers on a loaded
  // machine takes longer than 300 ms to arrive.
  opts.timeout = std::chrono::seconds(30);
  p = make_provider("openai:m", opts);
  ASSERT_TRUE(p.ok());
  srv.push(200, "{\"choices\": [ {\"message\": ");
  r = (*p)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("malformed reply"), std::string::npos) << r.error().message;

  srv.push(200, R"({"choices":[{"message":{"role":"assistant","content":null}}]})");
  r = (*p)->complete(hello());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "") << "an empty reply is a reply; the loop turns it into feedback";

  srv.push(200, openai_reply(std::string(3 << 20, 'x')));
  r = (*p)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("larger than 1 MB"), std::string::npos) << r.error().message;
}

TEST(Anthropic, MessagesApiWithSystemPromptAndUsage) {
  FakeServer srv;
  srv.push(529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
  srv.push(200, R"({"content":[{"type":"text","text":"part one "},{"type":"text","text":"part two"}],)"
                 R"("usage":{"input_tokens":20,"output_tokens":5}})");
  Env base("ANTHROPIC_BASE_URL", srv.url()), key("ANTHROPIC_API_KEY", "sk-ant-SECRET");
  Sleeps sleeps;
  auto p = make_provider("anthropic:claude-test", sleeps.options());
  ASSERT_TRUE(p.ok());
  auto r = (*p)->complete(hello());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->text, "part one part two");
  EXPECT_EQ(r->usage.prompt_tokens, 20);
  EXPECT_EQ(r->attempts, 2);
  auto sent = srv.requests();
  EXPECT_NE(sent[1].find("\"system\":\"be brief\""), std::string::npos) << sent[1];
  EXPECT_EQ(sent[1].find("\"role\":\"system\""), std::string::npos) << "system goes in its own field";
  EXPECT_NE(srv.headers()[1].find("|sk-ant-SECRET|2023-06-01"), std::string::npos);
}

// A reply the API stopped at max_tokens is marked, so the loop does not check half a module.
TEST(OpenAi, AReplyStoppedAtTheTokenLimitIsMarkedTruncated) {
  FakeServer srv;
  srv.push(200, R"({"choices":[{"message":{"role":"assistant","content":"```ptx\n.version"},"finish_reason":"length"}]})");
  srv.push(200, R"({"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]})");
  Env base("OPENAI_BASE_URL", srv.url() + "/v1"), key("OPENAI_API_KEY", "");
  Sleeps sleeps;
  auto p = make_provider("openai:m", sleeps.options());
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto cut = (*p)->complete(hello());
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->text, "```ptx\n.version");
  auto whole = (*p)->complete(hello());
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_FALSE(whole->truncated);
}

TEST(Anthropic, AReplyStoppedAtMaxTokensIsMarkedTruncated) {
  FakeServer srv;
  srv.push(200, R"({"content":[{"type":"text","text":"half a mod"}],"stop_reason":"max_tokens",)"
                R"("usage":{"input_tokens":20,"output_tokens":16384}})");
  srv.push(200, R"({"content":[{"type":"text","text":"all"}],"stop_reason":"end_turn"})");
  Env base("ANTHROPIC_BASE_URL", srv.url()), key("ANTHROPIC_API_KEY", "sk-ant-SECRET");
  Sleeps sleeps;
  auto p = make_provider("anthropic:claude-test", sleeps.options());
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto cut = (*p)->complete(hello());
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->usage.completion_tokens, 16384);
  auto whole = (*p)->complete(hello());
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_FALSE(whole->truncated);
}

TEST(Providers, MissingKeysAndUnreachableEndpointsAreClearErrors) {
  {
    Env key("ANTHROPIC_API_KEY", "");
    auto p = make_provider("anthropic:m", {});
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("ANTHROPIC_API_KEY is not set"), std::string::npos);
  }
  {
    Env base("OPENAI_BASE_URL", ""), key("OPENAI_API_KEY", "");
    auto p = make_provider("openai:gpt", {});
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("OPENAI_API_KEY is not set"), std::string::npos);
  }
  {
    Env base("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"), key("OPENAI_API_KEY", "sk-SECRET");
    Sleeps sleeps;
    auto opts = sleeps.options();
    opts.max_attempts = 2;
    auto r = (*make_provider("openai:m", opts))->complete(hello());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("cannot reach http://127.0.0.1:1/v1/chat/completions"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(r.error().message.find("SECRET"), std::string::npos);
  }
  EXPECT_NE(make_provider("opnai:m", {}).error().message.find("did you mean 'openai'"), std::string::npos);
}

TEST(Providers, CommandReplayAndManual) {
  auto cmd = make_provider("cmd:cat", {});
  ASSERT_TRUE(cmd.ok());
  auto r = (*cmd)->complete(hello());
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->text.find("\"content\":\"write a kernel\""), std::string::npos) << "the request arrives as JSON on stdin";
  auto failing = make_provider("cmd:echo 'no model here' >&2; exit 3", {});
  r = (*failing)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("exited with code 3: no model here"), std::string::npos) << r.error().message;

  std::string file = ::testing::TempDir() + "/replies.json";
  ASSERT_TRUE(write_file(file, R"({"produced_by": "test", "replies": ["first", {"text": "second"}]})").ok());
  auto replay = make_provider("replay:" + file, {});
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  Request req = hello();
  req.round = 1;
  EXPECT_EQ((*replay)->complete(req)->text, "second");
  req.round = 2;
  EXPECT_NE((*replay)->complete(req).error().message.find("holds 2 replies; there is none for round 3"), std::string::npos);
  EXPECT_FALSE(make_provider("replay:/nonexistent.json", {}).ok());

  auto manual = make_provider("manual", {});
  req.exchange_dir = "/tmp/session/round-02";
  auto m = (*manual)->complete(req);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->pending);
  EXPECT_NE(m->text.find("/tmp/session/round-02/reply.md"), std::string::npos);
}

TEST(ResponseCache, SecondIdenticalRequestIsFreeAndSamplesDiffer) {
  FakeServer srv;
  srv.push(200, openai_reply("one"));
  srv.push(200, openai_reply("two"));
  Env base("OPENAI_BASE_URL", srv.url() + "/v1"), key("OPENAI_API_KEY", "");
  auto p = make_provider("openai:m", {});
  ResponseCache cache(::testing::TempDir() + "/llm-cache-" + std::to_string(::getpid()));
  auto a = complete_cached(**p, hello(), cache);
  auto b = complete_cached(**p, hello(), cache);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->text, "one");
  EXPECT_TRUE(b->from_cache);
  EXPECT_EQ(srv.requests().size(), 1u);
  Request other = hello();
  other.sample = 1;
  EXPECT_EQ(complete_cached(**p, other, cache)->text, "two");
  EXPECT_EQ(srv.requests().size(), 2u);
}

TEST(ResponseCache, ATruncatedReplyStaysTruncatedWhenServedFromTheCache) {
  FakeServer srv;
  srv.push(200, R"({"choices":[{"message":{"role":"assistant","content":"cut"},"finish_reason":"length"}]})");
  Env base("OPENAI_BASE_URL", srv.url() + "/v1"), key("OPENAI_API_KEY", "");
  auto p = make_provider("openai:m", {});
  ResponseCache cache(::testing::TempDir() + "/llm-cache-cut-" + std::to_string(::getpid()));
  auto a = complete_cached(**p, hello(), cache);
  auto b = complete_cached(**p, hello(), cache);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->truncated);
  EXPECT_TRUE(b->from_cache);
  EXPECT_TRUE(b->truncated) << "the cache keeps the flag";
  EXPECT_EQ(srv.requests().size(), 1u);
}

TEST(Providers, AReplayReplyCanBeMarkedTruncated) {
  std::string file = ::testing::TempDir() + "/replies-cut.json";
  ASSERT_TRUE(write_file(file, R"({"replies": [{"text": "half", "truncated": true}, "whole"]})").ok());
  auto replay = make_provider("replay:" + file, {});
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  Request req = hello();
  auto first = (*replay)->complete(req);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->text, "half");
  EXPECT_TRUE(first->truncated);
  req.round = 1;
  EXPECT_FALSE((*replay)->complete(req)->truncated);
}

TEST(Providers, KeysNeverReachTheSessionFolder) {
  if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
  FakeServer srv;
  srv.push(429, R"({"error":{"message":"rate limited"}})", "0");
  srv.push(200, openai_reply("no code here"));
  Env base("OPENAI_BASE_URL", srv.url() + "/v1"), key("OPENAI_API_KEY", "sk-VERY-SECRET-KEY");
  agent::CompileOptions o;
  o.task_dir = std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add";
  o.model = "openai:fake";
  o.out = ::testing::TempDir() + "/keys-session-" + std::to_string(::getpid());
  o.rounds = 1;
  o.cache = false;
  o.prompt.knowledge = agent::KnowledgeLevel::none;
  o.hardware_profile = "h200";
  std::vector<std::string> no_gpu = {"/bin/sh", "-c", "while read l; do echo '{\"failure\":{\"kind\":\"driver\",\"message\":\"x\"}}'; done"};
  auto r = agent::compile(o, make_provider, no_gpu);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rounds.size(), 1u);
  EXPECT_EQ(r->prompt_tokens, 11);
  int files = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(o.out)) {
    if (!e.is_regular_file()) continue;
    ++files;
    auto text = read_file(e.path().string());
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(text->find("VERY-SECRET"), std::string::npos) << e.path();
  }
  EXPECT_GE(files, 6);
}

}  // namespace
}  // namespace ptxforge::llm
