// A request body becomes RunRequests only when every key is known and every value has its type
// and range: a client gets one clear error naming the field instead of a run that silently did
// something else (a typo in "seeds" must not run with the default).
#include "serve/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ptx/target.h"
#include "task/seeds.h"

namespace ptxforge::serve {
namespace {

using json = nlohmann::json;

std::string json_type(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

ApiError wrong_type(const std::string& field, const char* want, const json& got) {
  return bad_request(field, fmt::format("'{}' must be {}, not {}", field, want, json_type(got)));
}

// A target ptxas knows, as `--arch` takes it (the same table): anything else is the caller's
// mistake, named with a guess, not an assembler failure reported as if the candidate were wrong.
std::optional<std::string> arch_problem(const std::string& arch) {
  auto guess = ptx::unknown_target(arch);
  if (!guess) return std::nullopt;
  return fmt::format("'arch' must be a target ptxas knows, like \"sm_90a\"{}",
                     guess->empty() ? "" : fmt::format("; did you mean \"{}\"?", *guess));
}

// One request object; `prefix` is "" for /v1/runs and "runs[3]." in a batch.
std::variant<RunRequest, ApiError> parse_one(const json& body, const std::string& prefix, const std::string& client,
                                             const TaskCatalog& tasks, const RequestLimits& limits) {
  std::string where = prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1);
  if (!body.is_object())
    return bad_request(where, fmt::format("{} must be a JSON object, not {}", where.empty() ? "the body" : where, json_type(body)));
  static const std::set<std::string> known = {"task", "candidate", "language", "device",   "arch",     "no_time",
                                              "seeds", "seed",      "sanitize", "prove",    "timeout_s", "idempotency_key"};
  for (auto& [key, _] : body.items())
    if (!known.count(key)) {
      // The key is echoed only when it is short and plain, so an error never carries a client's blob back.
      bool plain = key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) { return c > 0x20 && c < 0x7f; });
      return bad_request(prefix + (plain ? key : "?"), plain ? fmt::format("unknown field '{}'", key) : "unknown field");
    }

  RunRequest r;
  r.client = client;
  r.options.held_back = true;  // the service always verifies on every size set
  auto f = [&](const char* key) { return prefix + key; };

  // task
  auto t = body.find("task");
  if (t == body.end()) return bad_request(f("task"), "'task' is required");
  if (!t->is_string()) return wrong_type(f("task"), "a string", *t);
  const std::string& name = t->get_ref<const std::string&>();
  if (!valid_task_name(name))
    return bad_request(f("task"), "'task' must be a task name: letters, digits, '_', '.', '-' and '/', no '..', no leading '/', at most 128 characters");
  const TaskCatalog::Entry* entry = tasks.find(name);
  if (!entry) return ApiError{ErrorCode::unknown_task, fmt::format("no task '{}' on this server (GET /v1/tasks lists them)", name), f("task"), "", {}, 0};
  r.task = entry->name;

  // candidate
  auto c = body.find("candidate");
  if (c == body.end()) return bad_request(f("candidate"), "'candidate' is required");
  if (!c->is_string()) return wrong_type(f("candidate"), "a string", *c);
  r.candidate = c->get<std::string>();
  if (r.candidate.empty()) return bad_request(f("candidate"), "'candidate' must not be empty");
  if (r.candidate.size() > limits.max_candidate_bytes)
    return ApiError{ErrorCode::too_large, fmt::format("the candidate is over {} bytes", limits.max_candidate_bytes), f("candidate"),
                    "max_candidate_bytes", int64_t(limits.max_candidate_bytes), 0};

  auto one_of = [&](const char* key, std::initializer_list<const char*> values, std::string& out) -> std::optional<ApiError> {
    auto v = body.find(key);
    if (v == body.end()) return std::nullopt;
    if (!v->is_string()) return wrong_type(f(key), "a string", *v);
    for (auto* allowed : values)
      if (*v == allowed) {
        out = allowed;
        return std::nullopt;
      }
    std::string list;
    for (auto* allowed : values) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", allowed);
    return bad_request(f(key), fmt::format("'{}' must be one of {}", key, list));
  };
  auto boolean = [&](const char* key, bool& out) -> std::optional<ApiError> {
    auto v = body.find(key);
    if (v == body.end()) return std::nullopt;
    if (!v->is_boolean()) return wrong_type(f(key), "a boolean", *v);
    out = v->get<bool>();
    return std::nullopt;
  };

  std::string language = "ptx", device = "auto", prove = "sass";
  if (auto e = one_of("language", {"ptx", "cuda"}, language)) return *e;
  r.language = language == "cuda" ? Language::cuda : Language::ptx;
  if (auto e = one_of("device", {"auto", "gpu", "cpu"}, device)) return *e;
  r.options.device = device == "gpu" ? eval::Device::gpu : device == "cpu" ? eval::Device::cpu : eval::Device::automatic;
  if (auto e = one_of("prove", {"sass", "ncu"}, prove)) return *e;
  r.options.prove_ncu = prove == "ncu";

  if (auto a = body.find("arch"); a != body.end()) {
    if (!a->is_string()) return wrong_type(f("arch"), "a string", *a);
    if (auto why = arch_problem(a->get_ref<const std::string&>())) return bad_request(f("arch"), *why);
    r.options.arch = a->get<std::string>();
  }
  bool no_time = false;
  if (auto e = boolean("no_time", no_time)) return *e;
  r.options.time = !no_time;
  if (auto e = boolean("sanitize", r.options.sanitize)) return *e;

  if (auto s = body.find("seeds"); s != body.end()) {
    if (!s->is_number_integer() && !s->is_number_unsigned()) return wrong_type(f("seeds"), "an integer", *s);
    // A non-negative number parses as unsigned, a negative one as signed: compare each as itself.
    bool in_range = s->is_number_unsigned() ? (s->get<uint64_t>() >= 1 && s->get<uint64_t>() <= 10)
                                            : (s->get<int64_t>() >= 1 && s->get<int64_t>() <= 10);
    if (!in_range)
      return bad_request(f("seeds"), "'seeds' must be 1 to 10");
    r.options.seeds = int(s->get<int64_t>());
  }
  if (auto s = body.find("seed"); s != body.end()) {
    if (s->is_number_unsigned()) {
      r.options.seed = s->get<uint64_t>();
    } else if (s->is_number_integer()) {
      return bad_request(f("seed"), "'seed' must be at least 0");
    } else if (s->is_string()) {
      auto v = task::parse_seed(s->get_ref<const std::string&>());
      if (!v) return bad_request(f("seed"), "'seed' must be a decimal or 0x-hex number that fits 64 bits");
      r.options.seed = *v;
    } else {
      return wrong_type(f("seed"), "an integer or a string", *s);
    }
  }
  if (auto s = body.find("timeout_s"); s != body.end()) {
    if (!s->is_number()) return wrong_type(f("timeout_s"), "a number", *s);
    double v = s->get<double>();
    if (!(v > 0) || v > limits.max_timeout_s)
      return ApiError{ErrorCode::bad_request, fmt::format("'timeout_s' must be above 0 and at most {:g}", limits.max_timeout_s),
                      f("timeout_s"), "max_timeout", int64_t(limits.max_timeout_s), 0};
    r.options.verify_timeout = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(v * 1000)));
  }
  if (auto k = body.find("idempotency_key"); k != body.end()) {
    if (!k->is_string()) return wrong_type(f("idempotency_key"), "a string", *k);
    r.idempotency_key = k->get<std::string>();
    if (r.idempotency_key.size() > 128) return bad_request(f("idempotency_key"), "'idempotency_key' must be at most 128 characters");
  }
  return r;
}

std::variant<json, ApiError> parse_body(std::string_view body, const RequestLimits& limits) {
  if (body.size() > limits.max_body_bytes)
    return ApiError{ErrorCode::too_large, fmt::format("the body is over {} bytes", limits.max_body_bytes), "", "max_body_bytes",
                    int64_t(limits.max_body_bytes), 0};
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad_request("", "the body is not valid JSON");
  return j;
}

std::optional<ApiError> check_header_key(std::string_view header) {
  if (header.size() > 128) return bad_request("idempotency_key", "the Idempotency-Key header must be at most 128 characters");
  return std::nullopt;
}

}  // namespace

std::string_view to_string(ErrorCode c) {
  switch (c) {
    case ErrorCode::bad_request: return "bad_request";
    case ErrorCode::unauthorized: return "unauthorized";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::unknown_task: return "unknown_task";
    case ErrorCode::method_not_allowed: return "method_not_allowed";
    case ErrorCode::too_large: return "too_large";
    case ErrorCode::queue_full: return "queue_full";
    case ErrorCode::rate_limited: return "rate_limited";
    case ErrorCode::shutting_down: return "shutting_down";
    case ErrorCode::internal: return "internal";
  }
  return "internal";
}

int http_status(ErrorCode c) {
  switch (c) {
    case ErrorCode::bad_request: return 400;
    case ErrorCode::unauthorized: return 401;
    case ErrorCode::not_found: return 404;
    case ErrorCode::unknown_task: return 404;
    case ErrorCode::method_not_allowed: return 405;
    case ErrorCode::too_large: return 413;
    case ErrorCode::queue_full: return 429;
    case ErrorCode::rate_limited: return 429;
    case ErrorCode::shutting_down: return 503;
    case ErrorCode::internal: return 500;
  }
  return 500;
}

std::string error_json(const ApiError& e) {
  json err = {{"code", to_string(e.code)}, {"message", e.message}};
  if (!e.field.empty()) err["field"] = e.field;
  if (!e.limit.empty()) err["limit"] = e.limit;
  if (e.value) err["value"] = *e.value;
  // Replace invalid UTF-8 (a client's bytes echoed in a message) rather than throw.
  return json{{"error", err}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

ApiError bad_request(std::string field, std::string message) {
  return ApiError{ErrorCode::bad_request, std::move(message), std::move(field), "", {}, 0};
}

bool valid_task_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '/' || name.find("..") != std::string_view::npos) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == '-'))
      return false;
  return true;
}

std::variant<RunRequest, ApiError> parse_run(std::string_view body, std::string_view idempotency_header, const std::string& client,
                                             const TaskCatalog& tasks, const RequestLimits& limits) {
  if (auto e = check_header_key(idempotency_header)) return *e;
  auto j = parse_body(body, limits);
  if (auto* e = std::get_if<ApiError>(&j)) return *e;
  auto one = parse_one(std::get<json>(j), "", client, tasks, limits);
  if (auto* r = std::get_if<RunRequest>(&one); r && !idempotency_header.empty()) {
    if (!r->idempotency_key.empty() && r->idempotency_key != idempotency_header)
      return bad_request("idempotency_key", "'idempotency_key' and the Idempotency-Key header differ");
    r->idempotency_key = std::string(idempotency_header);
  }
  return one;
}

std::variant<std::vector<RunRequest>, ApiError> parse_batch(std::string_view body, std::string_view idempotency_header,
                                                            const std::string& client, const TaskCatalog& tasks,
                                                            const RequestLimits& limits) {
  if (!idempotency_header.empty())
    return bad_request("idempotency_key", "a batch takes no Idempotency-Key header: give each run its own idempotency_key");
  auto parsed = parse_body(body, limits);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  const json& j = std::get<json>(parsed);
  if (!j.is_object()) return bad_request("", fmt::format("the body must be a JSON object, not {}", json_type(j)));
  for (auto& [key, _] : j.items())
    if (key != "runs") return bad_request(key.size() <= 64 ? key : "?", "unknown field (a batch is {\"runs\": [...]})");
  auto runs = j.find("runs");
  if (runs == j.end()) return bad_request("runs", "'runs' is required");
  if (!runs->is_array()) return wrong_type("runs", "an array", *runs);
  if (runs->empty()) return bad_request("runs", "'runs' must hold at least one run");
  if (runs->size() > limits.max_batch_runs)
    return ApiError{ErrorCode::too_large, fmt::format("a batch holds at most {} runs", limits.max_batch_runs), "runs", "max_batch_runs",
                    int64_t(limits.max_batch_runs), 0};
  std::vector<RunRequest> out;
  std::map<std::string, size_t> keys;  // idempotency key -> first index
  for (size_t i = 0; i < runs->size(); ++i) {
    std::string prefix = fmt::format("runs[{}].", i);
    auto one = parse_one((*runs)[i], prefix, client, tasks, limits);
    if (auto* e = std::get_if<ApiError>(&one)) return *e;
    auto& r = std::get<RunRequest>(one);
    if (!r.idempotency_key.empty()) {
      auto [it, fresh] = keys.emplace(r.idempotency_key, i);
      if (!fresh) return bad_request(prefix + "idempotency_key", fmt::format("'idempotency_key' repeats that of runs[{}]", it->second));
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<double> parse_wait(std::string_view text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || std::isnan(v)) return std::nullopt;
  // strtod takes "inf", hex and leading blanks: keep only plain decimals.
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+')) return std::nullopt;
  return std::clamp(v, 0.0, 300.0);
}

}  // namespace ptxforge::serve
