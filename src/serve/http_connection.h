// The connection handling under the service's HTTP routes. cpp-httplib 0.11 bounds each read
// by a timeout but not a request as a whole, so a client trickling one byte a second would hold
// a thread for hours; and its thread pool queues connections without bound. GuardedServer
// serves each connection through a stream with a per-request deadline, and BoundedPool makes
// accepting wait while every thread is busy and the queue is full.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ptxforge::serve {

struct ConnectionLimits {
  std::chrono::milliseconds request_read_timeout{30000};
  std::chrono::milliseconds io_timeout{10000};
  std::chrono::milliseconds keep_alive_timeout{5000};
  size_t keep_alive_max_requests = 100;
  // Bytes one request may send, line and headers and body together: cpp-httplib caps a header
  // line's length but not how many lines there are, and reads a chunked or compressed body past
  // the Content-Length limit; past this budget the connection is closed.
  size_t request_max_bytes = (size_t{4} << 20) + (size_t{64} << 10);
};

// From a handler: end the connection once this request is answered (a request whose body was
// refused unread, so nothing after it on the connection can be read as a request).
void close_connection_after_request();

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(ConnectionLimits limits) : limits_(limits) {}
  // Closes the listening socket whether or not the accept loop has started yet, so a stop
  // that races the start still ends listen_after_bind.
  void close_listener();

 private:
  bool process_and_close_socket(socket_t sock) override;
  ConnectionLimits limits_;
};

class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(size_t threads, size_t max_pending);
  ~BoundedPool() override;
  void enqueue(std::function<void()> fn) override;  // waits while the queue is full
  void shutdown() override;                         // runs what is queued, then joins

 private:
  void work();
  size_t max_pending_;
  std::mutex m_;
  std::condition_variable has_job_, has_room_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ptxforge::serve
