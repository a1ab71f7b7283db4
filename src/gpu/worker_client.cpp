#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "gpu/protocol.h"
#include "gpu/worker_client.h"
#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

extern char** environ;

namespace ptxforge::gpu {

namespace {
constexpr size_t kMaxReply = size_t{256} << 20;

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return fmt::format("the worker was killed by signal {} ({})", sig, strsignal(sig));
  }
  if (WIFEXITED(status)) return fmt::format("the worker exited with code {}", WEXITSTATUS(status));
  return "the worker stopped";
}
}  // namespace

std::vector<std::string> default_worker_argv() { return {executable_path(), "worker"}; }
std::vector<std::string> emu_worker_argv() { return {executable_path(), "emu-worker"}; }
std::vector<std::string> worker_argv_for_gpu(int ordinal) {
  if (ordinal == 0) return default_worker_argv();
  return {executable_path(), "worker", "--device", std::to_string(ordinal)};
}

WorkerClient::WorkerClient(std::vector<std::string> argv) : argv_(std::move(argv)) {}

WorkerClient::~WorkerClient() {
  stop();
  if (!stderr_path_.empty()) unlink(stderr_path_.c_str());
}

void WorkerClient::stop() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  pending_.clear();
}

bool WorkerClient::start(std::string& error) {
  if (stderr_path_.empty()) {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/ptxforge-worker-XXXXXX";
    int fd = mkstemp(templ.data());
    if (fd < 0) {
      error = fmt::format("cannot create the worker's log file: {}", strerror(errno));
      return false;
    }
    close(fd);
    stderr_path_ = templ;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    error = fmt::format("socketpair: {}", strerror(errno));
    return false;
  }
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The worker runs candidate kernels and reads task files; it never needs a credential, so
  // it gets the same allowlisted environment as every other child (util/subprocess.h). Built
  // before fork: the child may not allocate.
  std::vector<std::string> env = clean_environment(environ);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    error = fmt::format("fork: {}", strerror(errno));
    close(sv[0]);
    close(sv[1]);
    return false;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(sv[1], 0);
    dup2(sv[1], 1);
    int err = open(stderr_path_.c_str(), O_WRONLY | O_TRUNC | O_CREAT, 0600);
    if (err >= 0) dup2(err, 2);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(sv[1]);
  fd_ = sv[0];
  pid_ = pid;
  ++starts_;
  return true;
}

// The worker closed its end: collect its exit status and last words, and forget it.
std::string WorkerClient::reap_dead_worker(const std::string& when) {
  int status = 0;
  waitpid(pid_, &status, 0);
  last_exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  pid_ = -1;
  std::string tail = stderr_tail();
  stop();
  return describe_status(status) + when + (tail.empty() ? "" : ":\n" + tail);
}

int WorkerClient::finish(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return last_exit_;
  shutdown(fd_, SHUT_WR);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      last_exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      stop();
      return last_exit_;
    }
    if (r < 0 || std::chrono::steady_clock::now() >= deadline) {
      stop();
      last_exit_ = -1;
      return -1;
    }
    usleep(20000);
  }
}

std::string WorkerClient::stderr_tail() {
  auto text = read_file(stderr_path_);
  if (!text || text->empty()) return "";
  std::string t = text->size() > 2000 ? "..." + text->substr(text->size() - 2000) : *text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

WorkerClient::Exchange WorkerClient::exchange(const std::string& line, std::chrono::milliseconds timeout) {
  Exchange ex;
  auto fail = [&](FailureKind kind, std::string message) {
    ex.failure = {kind, std::move(message), ""};
    return ex;
  };
  if (pid_ <= 0) {
    std::string err;
    if (!start(err)) return fail(FailureKind::crash, "cannot start the worker: " + err);
  }
  std::string msg = line + "\n";
  for (size_t off = 0; off < msg.size();) {
    ssize_t n = send(fd_, msg.data() + off, msg.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(FailureKind::crash, reap_dead_worker(" before taking the job"));
    off += static_cast<size_t>(n);
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    size_t nl = pending_.find('\n');
    if (nl != std::string::npos) {
      ex.reply = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      ex.ok = true;
      return ex;
    }
    if (pending_.size() > kMaxReply) {
      stop();
      return fail(FailureKind::protocol, "the worker's reply is larger than 256 MB");
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop();
      return fail(FailureKind::timeout, fmt::format("no answer within {:.1f} s: the kernel hangs or is far too slow; the worker was killed",
                                         static_cast<double>(timeout.count()) / 1000.0));
    }
    pollfd p{fd_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) {
      stop();
      return fail(FailureKind::crash, fmt::format("poll: {}", strerror(errno)));
    }
    if (r <= 0) continue;
    char buf[65536];
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(FailureKind::crash, reap_dead_worker(""));
    pending_.append(buf, static_cast<size_t>(n));
  }
}

Outcome WorkerClient::run(const Job& job, std::chrono::milliseconds timeout) {
  Outcome out;
  Exchange ex = exchange(encode_job(job), timeout);
  if (!ex.ok) {
    out.failure = ex.failure;
    out.fatal = true;
    return out;
  }
  auto decoded = decode_outcome(ex.reply);
  if (!decoded) {
    stop();  // a worker that says nonsense is not trusted with the next job
    std::string shown = ex.reply.size() > 200 ? ex.reply.substr(0, 200) + "..." : ex.reply;
    out.failure = Failure{FailureKind::protocol, fmt::format("{}; it said: {}", decoded.error().message, shown), ""};
    out.fatal = true;
    return out;
  }
  if (decoded->fatal) stop();
  return *decoded;
}

Result<DeviceInfo> ask_device_info(JobRunner& worker, std::chrono::milliseconds timeout) {
  Job job;
  job.kind = JobKind::device;
  Outcome o = worker.run(job, timeout);
  if (o.failure) return Error{o.failure->message};
  if (!o.device) return Error{"the worker did not describe the GPU"};
  return *o.device;
}

Result<DeviceInfo> ask_device_info(const std::vector<std::string>& worker_argv) {
  WorkerClient worker(worker_argv);
  return ask_device_info(worker);
}

}  // namespace ptxforge::gpu
