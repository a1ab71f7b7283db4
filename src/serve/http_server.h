// The service's HTTP front (docs/serve.md): every route of the API over a RunService and the
// task catalog, with the limits that keep one client from taking the server from the others
// (body size, a deadline on reading each request, a bounded pool of connection threads, a cap
// on requests blocked in ?wait) and the bearer-token check. It holds no run state itself.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "serve/auth.h"
#include "serve/request.h"
#include "serve/service.h"
#include "serve/task_catalog.h"
#include "util/result.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ptxforge::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8765;                // 0: any free port (port() says which)
  RequestLimits limits;
  TokenSet tokens;                // empty: no authentication (loopback only)
  std::string version = "0.1.0";  // /healthz
  size_t threads = 32;            // connections served at once
  size_t pending_connections = 256;  // accepted, waiting for a thread; past it accepting pauses
  // A request's line, headers and body must arrive within this, however slowly bytes trickle
  // in (one byte a second would pass any per-read timeout).
  std::chrono::milliseconds request_read_timeout{30000};
  std::chrono::milliseconds io_timeout{10000};          // one read or write making no progress
  std::chrono::milliseconds keep_alive_timeout{5000};   // an idle kept-alive connection
  size_t keep_alive_max_requests = 100;
  // Requests that may block in ?wait at once; past it, a request answers at once as if it had
  // asked for no wait, so waiting clients cannot take every thread.
  int max_waiting = 24;
};

class HttpServer {
 public:
  HttpServer(RunService& service, const TaskCatalog& tasks, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the address. An error when the host is not a loopback address and there are no
  // tokens (the service would be open to anyone who can reach it), or when the bind fails.
  Status bind();
  int port() const { return port_; }
  // Serves until stop(); returns once every connection thread has finished.
  void serve();
  // Stops accepting and ends serve(). Safe from any thread, more than once.
  void stop();

  // ptxforge_http_requests_total{code="..."}: appended to the service's /metrics.
  std::string http_metrics_text() const;

 private:
  class Impl;
  void routes();
  void count(int status);
  void answer_error(httplib::Response& res, const ApiError& e) const;
  std::string client_of(const httplib::Request& req) const;
  std::optional<ApiError> wait_of(const httplib::Request& req, std::chrono::milliseconds& wait);

  RunService& service_;
  const TaskCatalog& tasks_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::atomic<int> waiting_{0};
  mutable std::mutex counts_mutex_;
  std::map<int, uint64_t> counts_;  // answered requests by status code
};

// Whether a --listen host is the loopback interface ("127.0.0.1", "::1", "localhost").
bool is_loopback_host(const std::string& host);

}  // namespace ptxforge::serve
