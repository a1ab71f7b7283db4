// A connection's reads run against two clocks: each read makes progress within io_timeout, and
// a whole request (line, headers, body) arrives within request_read_timeout from its first
// byte. Time spent in a handler (a ?wait) reads nothing and so counts against neither.
#include "serve/http_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <cstdio>

namespace ptxforge::serve {
namespace {

using Clock = std::chrono::steady_clock;

// Handlers run on their connection's thread, inside process_request.
thread_local bool t_close_after_request = false;

// Waits for `events` on `fd` for at most `limit`; true when they came.
bool wait_for(int fd, short events, std::chrono::milliseconds limit) {
  pollfd p{fd, events, 0};
  int ms = int(std::max<int64_t>(0, limit.count()));
  for (;;) {
    int n = ::poll(&p, 1, ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0 && (p.revents & (events | POLLHUP | POLLERR));
  }
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                : ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) return;
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}

class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(int fd, const ConnectionLimits& limits) : fd_(fd), limits_(limits) {}
  void start_request() {
    deadline_ = Clock::now() + limits_.request_read_timeout;
    // What the last request left buffered belongs to this one.
    read_ = 0;
  }
  bool has_buffered() const { return pos_ < len_; }
  bool expired() const { return expired_; }  // a request met its deadline: the connection ends

  bool is_readable() const override { return has_buffered() || wait_for(fd_, POLLIN, read_limit()); }
  bool is_writable() const override { return wait_for(fd_, POLLOUT, limits_.io_timeout); }

  ssize_t read(char* ptr, size_t size) override {
    // Past the deadline nothing more is read, even bytes already waiting: a client that keeps
    // a little data always in flight would otherwise never meet it.
    if (Clock::now() >= deadline_) {
      expired_ = true;
      return -1;
    }
    if (!has_buffered()) {
      if (!wait_for(fd_, POLLIN, read_limit())) {
        expired_ = expired_ || Clock::now() >= deadline_;
        return -1;
      }
      ssize_t n;
      do n = ::recv(fd_, buf_, sizeof(buf_), 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0, len_ = size_t(n);
    }
    size_t n = std::min(size, len_ - pos_);
    if (read_ + n > limits_.request_max_bytes) {
      expired_ = true;  // a request larger than any the service takes: the connection ends
      return -1;
    }
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    read_ += n;
    return ssize_t(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait_for(fd_, POLLOUT, limits_.io_timeout)) return -1;
    ssize_t n;
    do n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(fd_, false, ip, port); }
  socket_t socket() const override { return fd_; }

 private:
  std::chrono::milliseconds read_limit() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    return std::max(std::chrono::milliseconds(0), std::min(left, limits_.io_timeout));
  }
  int fd_;
  ConnectionLimits limits_;
  Clock::time_point deadline_ = Clock::now();
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
  size_t read_ = 0;  // bytes this request has read
  bool expired_ = false;
};

}  // namespace

void close_connection_after_request() { t_close_after_request = true; }

void GuardedServer::close_listener() {
  socket_t s = svr_sock_.exchange(INVALID_SOCKET);
  if (s != INVALID_SOCKET) {
    ::shutdown(s, SHUT_RDWR);
    ::close(s);
  }
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  DeadlineStream strm(sock, limits_);
  bool ok = false;
  for (size_t served = 0; served < limits_.keep_alive_max_requests; ++served) {
    // An idle connection is watched in short slices, so that a stop ends it promptly.
    auto idle_until = Clock::now() + limits_.keep_alive_timeout;
    bool readable = strm.has_buffered();
    while (!readable && svr_sock_ != INVALID_SOCKET && Clock::now() < idle_until)
      readable = wait_for(sock, POLLIN, std::chrono::milliseconds(100));
    if (!readable || svr_sock_ == INVALID_SOCKET) break;
    strm.start_request();
    bool closed = false;
    t_close_after_request = false;
    ok = process_request(strm, served + 1 == limits_.keep_alive_max_requests, closed, nullptr);
    if (!ok || closed || strm.expired() || t_close_after_request) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

BoundedPool::BoundedPool(size_t threads, size_t max_pending) : max_pending_(std::max<size_t>(1, max_pending)) {
  for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) threads_.emplace_back([this] { work(); });
}

BoundedPool::~BoundedPool() { shutdown(); }

void BoundedPool::enqueue(std::function<void()> fn) {
  std::unique_lock lock(m_);
  // Backpressure: while the queue is full the accept loop waits here, and further clients wait
  // in the kernel's listen backlog instead of in memory.
  has_room_.wait(lock, [&] { return jobs_.size() < max_pending_ || stopping_; });
  jobs_.push_back(std::move(fn));
  has_job_.notify_one();
}

void BoundedPool::shutdown() {
  {
    std::lock_guard lock(m_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  has_job_.notify_all();
  has_room_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void BoundedPool::work() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(m_);
      has_job_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
      if (jobs_.empty()) return;
      fn = std::move(jobs_.front());
      jobs_.pop_front();
      has_room_.notify_one();
    }
    try {
      fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ptxforge serve: a connection ended with an error: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "ptxforge serve: a connection ended with an unknown error\n");
    }
  }
}

}  // namespace ptxforge::serve
