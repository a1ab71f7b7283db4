// The routes of docs/serve.md over RunService. Every answer is JSON (the metrics excepted),
// every refusal the one error object of serve/request.h, and a handler that throws answers
// 500 instead of taking the process down. Client text reaches the core only as a validated
// RunRequest; the server's paths, other clients' runs and the tokens never reach a client.
#include "serve/http_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "serve/http_connection.h"
#include "serve/task_json.h"

namespace ptxforge::serve {
namespace {

using json = nlohmann::json;
using httplib::Request;
using httplib::Response;
using std::chrono::milliseconds;

std::string iso8601(int64_t unix_ms) {
  std::time_t secs = std::time_t(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, int(unix_ms % 1000));
}

// A run as GET /v1/runs/{id} shows it; POST answers with the same object.
json view_json(const RunView& v) {
  json j = {{"id", v.id}, {"state", std::string(to_string(v.state))}, {"task", v.task}, {"created", iso8601(v.created_ms)}};
  if (v.started_ms) j["started"] = iso8601(v.started_ms);
  if (v.finished_ms) j["finished"] = iso8601(v.finished_ms);
  if (!v.device.empty()) j["device"] = v.device;
  if (v.state == RunState::done) {
    json record = json::parse(v.record_json, nullptr, false);
    if (record.is_discarded()) throw std::runtime_error("run " + v.id + " has a record that is not JSON");
    j["record"] = std::move(record);
  }
  if (v.replayed) j["replayed"] = true;
  return j;
}

void send_json(Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// Room for a request's line and headers beside its body (ConnectionLimits::request_max_bytes).
constexpr size_t kMaxHeaderBytes = size_t{64} << 10;

// A body the server does not take: chunked (its length is not declared, so the body limit would
// not hold) or compressed (it would expand past the limit in memory).
std::optional<ApiError> refused_encoding(const Request& req) {
  if (req.has_header("Transfer-Encoding"))
    return ApiError{ErrorCode::bad_request, "send the body with a Content-Length: a chunked transfer encoding is not taken",
                    "", "", {}, 0};
  if (req.has_header("Content-Encoding")) {
    std::string enc = req.get_header_value("Content-Encoding");
    if (enc != "identity")
      return ApiError{ErrorCode::bad_request, "send the body uncompressed: no Content-Encoding is taken", "", "", {}, 0};
  }
  return std::nullopt;
}

bool plausible_run_id(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

ApiError refusal_error(const Submitted& s) {
  switch (*s.refusal) {
    case Refusal::queue_full:
      return ApiError{ErrorCode::queue_full, s.message.empty() ? "the queue is full" : s.message, "", "max_queue", {}, std::max(1, s.retry_after_s)};
    case Refusal::rate_limited:
      return ApiError{ErrorCode::rate_limited, s.message.empty() ? "too many runs in flight for this token" : s.message, "",
                      "max_inflight_per_token", {}, std::max(1, s.retry_after_s)};
    case Refusal::shutting_down:
      return ApiError{ErrorCode::shutting_down, "the server is shutting down", "", "", {}, std::max(1, s.retry_after_s)};
    case Refusal::internal: break;
  }
  return ApiError{ErrorCode::internal, "the server could not store the run", "", "", {}, 0};
}

// The methods each known path answers, for 405 and its Allow header; "" for an unknown path.
std::string allowed_methods(const std::string& path) {
  if (path == "/v1/runs" || path == "/v1/batch") return "POST";
  if (path == "/v1/tasks" || path == "/healthz" || path == "/metrics") return "GET";
  if ((path.rfind("/v1/runs/", 0) == 0 && path.size() > 9 && path.find('/', 9) == std::string::npos) || (path.rfind("/v1/tasks/", 0) == 0 && path.size() > 10)) return "GET";
  return "";
}

// Counts one request in flight in ?wait; past the cap, the request does not wait.
class WaitSlot {
 public:
  WaitSlot(std::atomic<int>& waiting, int cap, milliseconds& wait) : waiting_(waiting) {
    if (wait.count() <= 0) return;
    held_ = waiting_.fetch_add(1) < cap;
    if (!held_) {
      waiting_.fetch_sub(1);
      wait = milliseconds(0);
    }
  }
  ~WaitSlot() {
    if (held_) waiting_.fetch_sub(1);
  }

 private:
  std::atomic<int>& waiting_;
  bool held_ = false;
};

}  // namespace

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

HttpServer::HttpServer(RunService& service, const TaskCatalog& tasks, HttpOptions options)
    : service_(service), tasks_(tasks), options_(std::move(options)) {
  ConnectionLimits c{options_.request_read_timeout, options_.io_timeout, options_.keep_alive_timeout,
                     std::max<size_t>(1, options_.keep_alive_max_requests),
                     options_.limits.max_body_bytes + kMaxHeaderBytes};
  auto server = std::make_unique<GuardedServer>(c);
  size_t threads = options_.threads, pending = options_.pending_connections;
  server->new_task_queue = [threads, pending] { return new BoundedPool(threads, pending); };
  server->set_payload_max_length(options_.limits.max_body_bytes);
  server->set_keep_alive_max_count(std::max<size_t>(1, options_.keep_alive_max_requests));
  server_ = std::move(server);
  routes();
}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::bind() {
  if (!is_loopback_host(options_.host) && options_.tokens.empty())
    return Error{fmt::format("refusing to listen on {} without --token-file: anyone who can reach it could run code on this "
                             "server's GPUs (listen on 127.0.0.1, or give a token file)", options_.host)};
  if (options_.port == 0) {
    int port = server_->bind_to_any_port(options_.host);
    if (port <= 0) return Error{fmt::format("cannot listen on {}: no free port", options_.host)};
    port_ = port;
  } else {
    if (!server_->bind_to_port(options_.host, options_.port))
      return Error{fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", options_.host, options_.port)};
    port_ = options_.port;
  }
  return ok_status();
}

void HttpServer::serve() { server_->listen_after_bind(); }

void HttpServer::stop() {
  server_->stop();
  static_cast<GuardedServer&>(*server_).close_listener();
}

std::string HttpServer::http_metrics_text() const {
  std::string out =
      "# HELP ptxforge_http_requests_total HTTP requests answered, by status code.\n"
      "# TYPE ptxforge_http_requests_total counter\n";
  std::lock_guard lock(counts_mutex_);
  for (auto& [code, n] : counts_) out += fmt::format("ptxforge_http_requests_total{{code=\"{}\"}} {}\n", code, n);
  return out;
}

void HttpServer::count(int status) {
  std::lock_guard lock(counts_mutex_);
  ++counts_[status];
}

void HttpServer::answer_error(Response& res, const ApiError& e) const {
  res.status = http_status(e.code);
  res.set_content(error_json(e), "application/json");
  if (e.code == ErrorCode::unauthorized) res.set_header("WWW-Authenticate", "Bearer");
  if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
}

std::string HttpServer::client_of(const Request& req) const {
  if (options_.tokens.empty()) return "";
  std::string header = req.get_header_value("Authorization");  // the view below points into it
  auto token = bearer_token(header);
  if (!token) return "";
  return options_.tokens.check(*token).value_or("");
}

std::optional<ApiError> HttpServer::wait_of(const Request& req, milliseconds& wait) {
  wait = milliseconds(0);
  if (!req.has_param("wait")) return std::nullopt;
  auto seconds = parse_wait(req.get_param_value("wait"));
  if (!seconds) return bad_request("wait", "'wait' must be a number of seconds (0 to 300)");
  wait = milliseconds(int64_t(*seconds * 1000));
  return std::nullopt;
}

void HttpServer::routes() {
  auto& s = *server_;

  // Each answer is counted before it is written, so /metrics already shows a request whose
  // answer the client has read.
  auto counted = [this](auto handler) {
    return [this, handler](const Request& req, Response& res) {
      handler(req, res);
      count(res.status == -1 ? 200 : res.status);
    };
  };

  // Authentication comes before routing, so that without a token even a route's existence is
  // not answered under /v1/.
  s.set_pre_routing_handler([this](const Request& req, Response& res) {
    // Before the body is read: only a plain body of a declared length is taken. A chunked body
    // would pass the Content-Length limit, and a compressed one expand past it in memory.
    if (auto refused = refused_encoding(req)) {
      answer_error(res, *refused);
      res.status = req.has_header("Transfer-Encoding") ? 411 : 415;
      res.set_header("Connection", "close");
      close_connection_after_request();
      count(res.status);
      return httplib::Server::HandlerResponse::Handled;
    }
    bool guarded = req.path.rfind("/v1/", 0) == 0 || req.path == "/v1" || req.path == "/metrics";
    if (options_.tokens.empty() || !guarded) return httplib::Server::HandlerResponse::Unhandled;
    std::string header = req.get_header_value("Authorization");  // the view below points into it
    auto token = bearer_token(header);
    if (token && options_.tokens.check(*token)) return httplib::Server::HandlerResponse::Unhandled;
    answer_error(res, ApiError{ErrorCode::unauthorized,
                               token ? "the bearer token is not one of this server's" : "an Authorization: Bearer <token> header is required",
                               "", "", {}, 0});
    count(401);
    return httplib::Server::HandlerResponse::Handled;
  });

  s.Post("/v1/runs", counted([this](const Request& req, Response& res) {
    milliseconds wait;
    if (auto e = wait_of(req, wait)) return answer_error(res, *e);
    auto parsed = parse_run(req.body, req.get_header_value("Idempotency-Key"), client_of(req), tasks_, options_.limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return answer_error(res, *e);
    Submitted sub = service_.submit({std::get<RunRequest>(parsed)});
    if (sub.refusal) return answer_error(res, refusal_error(sub));
    if (sub.runs.size() != 1) throw std::runtime_error("submit answered with no run");
    RunView view = sub.runs[0];
    WaitSlot slot(waiting_, options_.max_waiting, wait);
    if (view.state != RunState::done && wait.count() > 0) {
      auto got = service_.get(view.id, wait);
      if (!got) throw std::runtime_error(got.error().message);
      if (*got) {
        bool replayed = view.replayed;
        view = **got;
        view.replayed = replayed;
      }
    }
    res.set_header("Location", "/v1/runs/" + view.id);
    send_json(res, view.state == RunState::done ? 200 : 202, view_json(view));
  }));

  s.Post("/v1/batch", counted([this](const Request& req, Response& res) {
    milliseconds wait;
    if (auto e = wait_of(req, wait)) return answer_error(res, *e);
    auto parsed = parse_batch(req.body, req.get_header_value("Idempotency-Key"), client_of(req), tasks_, options_.limits);
    if (auto* e = std::get_if<ApiError>(&parsed)) return answer_error(res, *e);
    auto& requests = std::get<std::vector<RunRequest>>(parsed);
    Submitted sub = service_.submit(requests);
    if (sub.refusal) return answer_error(res, refusal_error(sub));
    if (sub.runs.size() != requests.size()) throw std::runtime_error("submit answered with a different number of runs");
    WaitSlot slot(waiting_, options_.max_waiting, wait);
    auto deadline = std::chrono::steady_clock::now() + wait;
    json runs = json::array();
    bool all_done = true;
    for (auto& view : sub.runs) {
      RunView v = view;
      auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      if (v.state != RunState::done && wait.count() > 0) {
        auto got = service_.get(v.id, std::max(milliseconds(0), left));
        if (!got) throw std::runtime_error(got.error().message);
        if (*got) v = **got, v.replayed = view.replayed;
      }
      all_done = all_done && v.state == RunState::done;
      runs.push_back(view_json(v));
    }
    send_json(res, all_done ? 200 : 202, json{{"runs", runs}});
  }));

  s.Get(R"(/v1/runs/([^/]+))", counted([this](const Request& req, Response& res) {
    milliseconds wait;
    if (auto e = wait_of(req, wait)) return answer_error(res, *e);
    std::string id = req.matches[1];
    if (!plausible_run_id(id)) return answer_error(res, ApiError{ErrorCode::not_found, "no such run", "", "", {}, 0});
    // Another token's run answers as an unknown one, before any wait: no oracle, no waiting on it.
    std::string client = client_of(req);
    auto owned = service_.get(id, milliseconds(0));
    if (!owned) throw std::runtime_error(owned.error().message);
    if (!*owned || (*owned)->client != client)
      return answer_error(res, ApiError{ErrorCode::not_found, "no such run", "", "", {}, 0});
    WaitSlot slot(waiting_, options_.max_waiting, wait);
    auto got = wait.count() > 0 ? service_.get(id, wait) : owned;
    if (!got) throw std::runtime_error(got.error().message);
    if (!*got) return answer_error(res, ApiError{ErrorCode::not_found, "no such run", "", "", {}, 0});
    send_json(res, 200, view_json(**got));
  }));

  std::string task_list = task_list_json(tasks_);
  s.Get("/v1/tasks", counted([task_list](const Request&, Response& res) { res.set_content(task_list, "application/json"); }));

  s.Get(R"(/v1/tasks/(.+))", counted([this](const Request& req, Response& res) {
    std::string name = req.matches[1];
    const auto* entry = tasks_.find(name);
    if (!entry) {
      // The name is echoed only in the form a task name may take.
      std::string msg = valid_task_name(name) ? fmt::format("no task '{}' on this server", name) : "no such task on this server";
      return answer_error(res, ApiError{ErrorCode::unknown_task, msg, "", "", {}, 0});
    }
    res.set_content(task_json(*entry), "application/json");
  }));

  s.Get("/healthz", counted([this](const Request&, Response& res) {
    Health h = service_.health();
    json body = {{"status", h.shutting_down ? "shutting_down" : "ok"},
                 {"queue_depth", h.queue_depth},
                 {"workers", {{"gpu", h.gpu_workers}, {"cpu", h.cpu_workers}}},
                 {"version", options_.version}};
    send_json(res, h.shutting_down ? 503 : 200, body);
  }));

  s.Get("/metrics", counted([this](const Request&, Response& res) {
    res.set_content(service_.metrics_text() + http_metrics_text(), "text/plain; version=0.0.4");
  }));

  // Everything else: 405 on a known path, else 404 (registered last, so it only catches).
  auto fallback = [this](const Request& req, Response& res) {
    std::string allow = allowed_methods(req.path);
    if (allow.empty()) return answer_error(res, ApiError{ErrorCode::not_found, "no such route", "", "", {}, 0});
    answer_error(res, ApiError{ErrorCode::method_not_allowed, fmt::format("this route takes {} only", allow), "", "", {}, 0});
    res.set_header("Allow", allow);
  };
  s.Get(".*", counted(fallback));
  s.Post(".*", counted(fallback));
  s.Put(".*", counted(fallback));
  s.Patch(".*", counted(fallback));
  s.Delete(".*", counted(fallback));
  s.Options(".*", counted(fallback));

  // A status httplib set itself (a malformed request line, a body over the limit) gets the
  // error object too; a body a route already wrote is left alone.
  s.set_error_handler(httplib::Server::HandlerWithResponse([this](const Request&, Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // a route's own answer, counted there
    count(res.status);
    ApiError e;
    switch (res.status) {
      case 400: e = bad_request("", "malformed HTTP request"); break;
      case 404: e = ApiError{ErrorCode::not_found, "no such route", "", "", {}, 0}; break;
      case 405: e = ApiError{ErrorCode::method_not_allowed, "method not allowed", "", "", {}, 0}; break;
      case 413:
        e = ApiError{ErrorCode::too_large, fmt::format("the body is over {} bytes", options_.limits.max_body_bytes), "",
                     "max_body_bytes", int64_t(options_.limits.max_body_bytes), 0};
        break;
      case 414: e = bad_request("", "the request line is too long"); break;
      default:
        e = res.status >= 500 ? ApiError{ErrorCode::internal, "internal error", "", "", {}, 0}
                              : bad_request("", fmt::format("HTTP status {}", res.status));
    }
    int status = res.status;
    res.set_content(error_json(e), "application/json");
    res.status = status;
    return httplib::Server::HandlerResponse::Handled;
  }));

  s.set_exception_handler([this](const Request&, Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    // The operator sees the reason; the client only that it happened.
    fmt::print(stderr, "ptxforge serve: a request failed: {}\n", what);
    res.status = 500;
    res.set_content(error_json(ApiError{ErrorCode::internal, "internal error", "", "", {}, 0}), "application/json");
    count(500);
  });
}

}  // namespace ptxforge::serve
