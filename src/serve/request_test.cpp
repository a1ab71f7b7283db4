// Every rule of a run request (docs/serve.md): each field's type and range, unknown keys, the
// seed's forms, the limits by name and the "runs[i].field" paths of a batch.
#include "serve/request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ptxforge::serve {
namespace {

using json = nlohmann::json;

TaskCatalog catalog() {
  return TaskCatalog({{"level1/vector_add", "/x/vector_add", task::Task{}}, {"level1/sgemm", "/x/sgemm", task::Task{}}});
}

json good() { return {{"task", "vector_add"}, {"candidate", "// ptx"}}; }

RunRequest run_ok(const json& body, std::string header = "", RequestLimits limits = {}) {
  auto r = parse_run(body.dump(), header, "client1", catalog(), limits);
  if (auto* e = std::get_if<ApiError>(&r)) ADD_FAILURE() << error_json(*e);
  return std::holds_alternative<RunRequest>(r) ? std::get<RunRequest>(r) : RunRequest{};
}

ApiError run_err(const std::string& body, std::string header = "", RequestLimits limits = {}) {
  auto r = parse_run(body, header, "", catalog(), limits);
  if (std::holds_alternative<RunRequest>(r)) {
    ADD_FAILURE() << "accepted: " << body;
    return {};
  }
  return std::get<ApiError>(r);
}
ApiError run_err(const json& body) { return run_err(body.dump()); }

json with(std::string key, json value) {
  json j = good();
  j[key] = value;
  return j;
}

TEST(Request, DefaultsOfAMinimalRun) {
  RunRequest r = run_ok(good());
  EXPECT_EQ(r.task, "level1/vector_add");  // the bare name becomes the catalog's full name
  EXPECT_EQ(r.candidate, "// ptx");
  EXPECT_EQ(r.language, Language::ptx);
  EXPECT_EQ(r.options.device, eval::Device::automatic);
  EXPECT_EQ(r.options.seeds, 3);
  EXPECT_FALSE(r.options.seed.has_value());
  EXPECT_TRUE(r.options.time);
  EXPECT_TRUE(r.options.held_back);
  EXPECT_FALSE(r.options.sanitize);
  EXPECT_FALSE(r.options.prove_ncu);
  EXPECT_EQ(r.options.arch, "");
  EXPECT_EQ(r.options.verify_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(r.idempotency_key, "");
  EXPECT_EQ(r.client, "client1");
}

TEST(Request, EveryFieldSet) {
  json j = {{"task", "level1/sgemm"}, {"candidate", "__global__ void k(){}"}, {"language", "cuda"}, {"device", "cpu"},
            {"arch", "sm_90a"}, {"no_time", true}, {"seeds", 10}, {"seed", "0xFFFFFFFFFFFFFFFF"}, {"sanitize", true},
            {"prove", "ncu"}, {"timeout_s", 2.5}, {"idempotency_key", "k1"}};
  RunRequest r = run_ok(j);
  EXPECT_EQ(r.task, "level1/sgemm");
  EXPECT_EQ(r.language, Language::cuda);
  EXPECT_EQ(r.options.device, eval::Device::cpu);
  EXPECT_EQ(r.options.arch, "sm_90a");
  EXPECT_FALSE(r.options.time);
  EXPECT_EQ(r.options.seeds, 10);
  EXPECT_EQ(r.options.seed, UINT64_MAX);
  EXPECT_TRUE(r.options.sanitize);
  EXPECT_TRUE(r.options.prove_ncu);
  EXPECT_EQ(r.options.verify_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(r.idempotency_key, "k1");
  EXPECT_EQ(run_ok(with("device", "gpu")).options.device, eval::Device::gpu);
}

TEST(Request, SeedForms) {
  EXPECT_EQ(run_ok(with("seed", 0)).options.seed, 0u);
  EXPECT_EQ(run_ok(with("seed", 18446744073709551615ull)).options.seed, UINT64_MAX);
  EXPECT_EQ(run_ok(with("seed", "12345")).options.seed, 12345u);
  EXPECT_EQ(run_ok(with("seed", "18446744073709551615")).options.seed, UINT64_MAX);
  EXPECT_EQ(run_ok(with("seed", "0x1f")).options.seed, 31u);
  for (json bad : {json(-1), json("18446744073709551616"), json("0x10000000000000000"), json(""), json("0x"), json("-5"),
                   json(" 5"), json("5 "), json("1e3"), json("0b101"), json(1.5), json(true), json(nullptr), json::array()}) {
    auto e = run_err(with("seed", bad));
    EXPECT_EQ(e.code, ErrorCode::bad_request) << bad;
    EXPECT_EQ(e.field, "seed") << bad;
  }
  // A number too large for 64 bits is parsed as a float: refused, not rounded.
  EXPECT_EQ(run_err(std::string(R"({"task":"vector_add","candidate":"x","seed":18446744073709551616})")).field, "seed");
}

TEST(Request, WrongTypesNameTheField) {
  std::vector<std::pair<std::string, json>> cases = {
      {"task", 1}, {"candidate", json::array()}, {"language", true}, {"device", 0}, {"arch", 90},
      {"no_time", "yes"}, {"no_time", 1}, {"seeds", "3"}, {"seeds", 3.0}, {"sanitize", nullptr}, {"prove", json::object()},
      {"timeout_s", "30"}, {"timeout_s", true}, {"idempotency_key", 5},
  };
  for (auto& [key, value] : cases) {
    auto e = run_err(with(key, value));
    EXPECT_EQ(e.code, ErrorCode::bad_request) << key << "=" << value;
    EXPECT_EQ(e.field, key) << key << "=" << value;
    EXPECT_NE(e.message.find(key), std::string::npos) << e.message;
  }
}

TEST(Request, BadValuesNameTheField) {
  std::vector<std::pair<std::string, json>> cases = {
      {"language", "PTX"}, {"device", "gpu0"}, {"prove", "sass,ncu"}, {"arch", "sm_9"}, {"arch", "sm_90a; rm -rf /"},
      {"arch", "compute_90"}, {"arch", "sm_90ab"}, {"arch", ""}, {"arch", "sm_99a"}, {"arch", "sm_90f"}, {"seeds", 0}, {"seeds", 11}, {"seeds", -3},
      {"timeout_s", 0}, {"timeout_s", -1}, {"timeout_s", 121}, {"candidate", ""}, {"idempotency_key", std::string(129, 'k')},
      {"task", "../x"}, {"task", "/etc/passwd"}, {"task", "a..b"}, {"task", "level1/vector add"}, {"task", std::string(129, 'a')},
      {"task", ""},
  };
  for (auto& [key, value] : cases) {
    auto e = run_err(with(key, value));
    EXPECT_EQ(e.code, ErrorCode::bad_request) << key << "=" << value;
    EXPECT_EQ(e.field, key) << key << "=" << value;
  }
  EXPECT_EQ(run_ok(with("timeout_s", 120)).options.verify_timeout, std::chrono::seconds(120));
  EXPECT_EQ(run_ok(with("arch", "sm_100f")).options.arch, "sm_100f");
  // The targets are --arch's: one ptxas does not know is refused with a guess.
  auto near = run_err(with("arch", "sm_100b"));
  EXPECT_NE(near.message.find("did you mean \"sm_100"), std::string::npos) << near.message;
  EXPECT_EQ(run_ok(with("seeds", 1)).options.seeds, 1);
}

TEST(Request, UnknownAndMissingFields) {
  auto e = run_err(with("seed_count", 3));
  EXPECT_EQ(e.code, ErrorCode::bad_request);
  EXPECT_EQ(e.field, "seed_count");
  EXPECT_NE(e.message.find("seed_count"), std::string::npos);
  // Fields the server keeps to itself are unknown to a client.
  for (const char* key : {"sizes", "held_back", "launch_path", "sanitizer", "ncu", "work_dir", "client"})
    EXPECT_EQ(run_err(with(key, "x")).field, key);
  json j = good();
  j.erase("task");
  EXPECT_EQ(run_err(j).field, "task");
  j = good();
  j.erase("candidate");
  EXPECT_EQ(run_err(j).field, "candidate");
}

TEST(Request, UnknownTask) {
  auto e = run_err(with("task", "level9/nothing"));
  EXPECT_EQ(e.code, ErrorCode::unknown_task);
  EXPECT_EQ(http_status(e.code), 404);
  EXPECT_EQ(e.message.find("/x/"), std::string::npos);  // never a folder of the server
}

TEST(Request, MalformedBodies) {
  for (std::string body : {"", "{", "nope", "{\"task\": }", "[1,2]", "null", "\"str\"", "42", "{\"task\":\"vector_add\",}"}) {
    auto e = run_err(body);
    EXPECT_EQ(e.code, ErrorCode::bad_request) << body;
  }
  // Invalid UTF-8 inside a string.
  EXPECT_EQ(run_err(std::string("{\"task\":\"vector_add\",\"candidate\":\"\xff\xfe\"}")).code, ErrorCode::bad_request);
}

TEST(Request, DeeplyNestedBodyIsAnErrorNotACrash) {
  std::string deep = "{\"task\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_EQ(run_err(deep).field, "task");
  std::string unclosed(500000, '[');
  EXPECT_EQ(run_err(unclosed).code, ErrorCode::bad_request);
}

TEST(Request, Limits) {
  RequestLimits limits;
  limits.max_candidate_bytes = 10;
  limits.max_body_bytes = 200;
  auto e = run_err(with("candidate", std::string(11, 'x')).dump(), "", limits);
  EXPECT_EQ(e.code, ErrorCode::too_large);
  EXPECT_EQ(e.limit, "max_candidate_bytes");
  EXPECT_EQ(e.value, 10);
  EXPECT_EQ(e.field, "candidate");
  EXPECT_EQ(run_ok(with("candidate", std::string(10, 'x')), "", limits).candidate.size(), 10u);
  e = run_err(with("candidate", std::string(300, 'x')).dump(), "", limits);
  EXPECT_EQ(e.limit, "max_body_bytes");
  EXPECT_EQ(e.value, 200);
  limits = {};
  limits.max_timeout_s = 5;
  EXPECT_EQ(run_err(with("timeout_s", 6).dump(), "", limits).field, "timeout_s");
}

TEST(Request, IdempotencyHeader) {
  EXPECT_EQ(run_ok(good(), "h1").idempotency_key, "h1");
  EXPECT_EQ(run_ok(with("idempotency_key", "h1"), "h1").idempotency_key, "h1");
  EXPECT_EQ(run_err(with("idempotency_key", "b1").dump(), "h1").field, "idempotency_key");
  EXPECT_EQ(run_err(good().dump(), std::string(129, 'h')).field, "idempotency_key");
}

TEST(Request, BatchPathsAndLimits) {
  auto batch = [](json runs, RequestLimits limits = {}, std::string header = "") {
    return parse_batch(json{{"runs", runs}}.dump(), header, "c", catalog(), limits);
  };
  auto ok = batch(json::array({good(), with("task", "sgemm")}));
  ASSERT_TRUE(std::holds_alternative<std::vector<RunRequest>>(ok));
  auto& runs = std::get<std::vector<RunRequest>>(ok);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].task, "level1/sgemm");
  EXPECT_EQ(runs[0].client, "c");

  json items = json::array({good(), good(), good(), with("seeds", 99)});
  auto bad = batch(items);
  ASSERT_TRUE(std::holds_alternative<ApiError>(bad));
  EXPECT_EQ(std::get<ApiError>(bad).field, "runs[3].seeds");
  items[3] = with("colour", "red");
  EXPECT_EQ(std::get<ApiError>(batch(items)).field, "runs[3].colour");
  items[3] = 7;
  EXPECT_EQ(std::get<ApiError>(batch(items)).field, "runs[3]");
  items[3] = with("task", "nope");
  EXPECT_EQ(std::get<ApiError>(batch(items)).code, ErrorCode::unknown_task);
  EXPECT_EQ(std::get<ApiError>(batch(items)).field, "runs[3].task");

  EXPECT_EQ(std::get<ApiError>(batch(json::array())).field, "runs");
  EXPECT_EQ(std::get<ApiError>(batch(json::object())).field, "runs");
  RequestLimits small;
  small.max_batch_runs = 2;
  auto big = std::get<ApiError>(batch(json::array({good(), good(), good()}), small));
  EXPECT_EQ(big.code, ErrorCode::too_large);
  EXPECT_EQ(big.limit, "max_batch_runs");
  EXPECT_EQ(big.value, 2);
  EXPECT_TRUE(std::holds_alternative<std::vector<RunRequest>>(batch(json::array({good(), good()}), small)));

  auto twice = std::get<ApiError>(batch(json::array({with("idempotency_key", "a"), with("idempotency_key", "a")})));
  EXPECT_EQ(twice.field, "runs[1].idempotency_key");
  EXPECT_EQ(std::get<ApiError>(batch(json::array({good()}), {}, "h")).field, "idempotency_key");

  auto extra = parse_batch(R"({"runs":[], "more": 1})", "", "", catalog(), {});
  EXPECT_EQ(std::get<ApiError>(extra).field, "more");
  EXPECT_EQ(std::get<ApiError>(parse_batch("[]", "", "", catalog(), {})).code, ErrorCode::bad_request);
}

TEST(Request, ErrorJson) {
  ApiError e{ErrorCode::too_large, "too big", "candidate", "max_candidate_bytes", 1024, 0};
  json j = json::parse(error_json(e));
  EXPECT_EQ(j["error"]["code"], "too_large");
  EXPECT_EQ(j["error"]["message"], "too big");
  EXPECT_EQ(j["error"]["field"], "candidate");
  EXPECT_EQ(j["error"]["limit"], "max_candidate_bytes");
  EXPECT_EQ(j["error"]["value"], 1024);
  json k = json::parse(error_json(bad_request("", std::string("bad \xff byte"))));
  EXPECT_FALSE(k["error"].contains("field"));
  EXPECT_FALSE(k["error"].contains("limit"));
  EXPECT_FALSE(k["error"].contains("value"));
  EXPECT_EQ(http_status(ErrorCode::queue_full), 429);
  EXPECT_EQ(http_status(ErrorCode::shutting_down), 503);
  EXPECT_EQ(http_status(ErrorCode::method_not_allowed), 405);
}

TEST(Request, Wait) {
  EXPECT_EQ(parse_wait("0"), 0.0);
  EXPECT_EQ(parse_wait("2.5"), 2.5);
  EXPECT_EQ(parse_wait("1000"), 300.0);
  EXPECT_EQ(parse_wait("-4"), 0.0);
  for (auto bad : {"", "abc", "1s", "inf", "nan", "0x10", " 1", "1e400"}) EXPECT_FALSE(parse_wait(bad).has_value()) << bad;
}

}  // namespace
}  // namespace ptxforge::serve
