#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace ptxforge {

namespace {

bool starts_with_upper(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

bool ends_with_word(const std::string& u, std::string_view w) {
  return u.size() >= w.size() && u.compare(u.size() - w.size(), w.size(), w) == 0;
}

// Called between fork and exec: setrlimit is a plain system call, safe there.
void apply_limits(const ResourceLimits& l) {
  auto set = [](int resource, uint64_t value) {
    rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    setrlimit(resource, &r);
  };
  set(RLIMIT_CORE, 0);
  if (l.address_space_bytes) set(RLIMIT_AS, l.address_space_bytes);
  if (l.file_size_bytes) set(RLIMIT_FSIZE, l.file_size_bytes);
  if (l.cpu_seconds) {
    // The soft limit sends SIGXCPU (reported as the CPU limit), the hard one SIGKILL.
    rlimit r{static_cast<rlim_t>(l.cpu_seconds), static_cast<rlim_t>(l.cpu_seconds + 1)};
    setrlimit(RLIMIT_CPU, &r);
  }
  if (l.processes) set(RLIMIT_NPROC, l.processes);
}

}  // namespace

bool is_secret_name(std::string_view name) {
  std::string u = upper(name);
  for (std::string_view w : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS", "_AUTH",
                             "_PASS", "_PAT", "COOKIE", "SESSION"})
    if (ends_with_word(u, w)) return true;
  for (std::string_view w : {"API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "SECRET", "TOKEN", "PASSWORD"})
    if (u.find(w) != std::string::npos) return true;
  return false;
}

std::vector<std::string> clean_environment(const char* const* parent) {
  std::vector<std::string> out;
  if (!parent) return out;
  for (const char* const* e = parent; *e; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string_view name = entry.substr(0, eq);
    bool allowed = name == "PATH" || name == "HOME" || name == "TMPDIR" || name == "LANG" || name == "LANGUAGE" ||
                   name == "LD_LIBRARY_PATH" || name == "XDG_CACHE_HOME" || name.starts_with("LC_") || name.starts_with("CUDA_") ||
                   name.starts_with("PTXFORGE_") || name == "ASAN_OPTIONS" || name == "UBSAN_OPTIONS" ||
                   name == "LSAN_OPTIONS";
    if (allowed && !is_secret_name(name)) out.emplace_back(entry);
  }
  return out;
}

std::vector<std::string> child_environment(const ProcessOptions& opts) {
  std::vector<std::string> env;
  if (opts.env == ChildEnv::inherit)
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  else
    env = clean_environment(environ);
  for (auto& extra : opts.extra_env) {
    std::string_view name = std::string_view(extra).substr(0, extra.find('='));
    std::erase_if(env, [&](const std::string& e) { return e.size() > name.size() && e[name.size()] == '=' &&
                                                          std::string_view(e).starts_with(name); });
    env.push_back(extra);
  }
  return env;
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  const std::string& cwd) {
  ProcessOptions o;
  o.cwd = cwd;
  return run_process(argv, timeout, o);
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  const ProcessOptions& opts) {
  assert(!argv.empty());
  const std::string& cwd = opts.cwd;
  // The input goes through an unlinked temporary file: no second pipe to keep full.
  int input_fd = -1;
  if (!opts.input.empty()) {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/ptxforge-stdin-XXXXXX";
    input_fd = mkostemp(templ.data(), O_CLOEXEC);
    if (input_fd < 0) return Error{std::string("cannot create a temporary file: ") + std::strerror(errno)};
    unlink(templ.c_str());
    for (size_t off = 0; off < opts.input.size();) {
      ssize_t n = write(input_fd, opts.input.data() + off, opts.input.size() - off);
      if (n <= 0) {
        close(input_fd);
        return Error{std::string("cannot write the child's input: ") + std::strerror(errno)};
      }
      off += static_cast<size_t>(n);
    }
    lseek(input_fd, 0, SEEK_SET);
  }
  // Every descriptor is close-on-exec, so a child started at the same time by another thread
  // never inherits this child's pipes (its reader would then wait for the wrong process's
  // exit); dup2 onto 0/1/2 clears the flag on the copies this child keeps.
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0)
    return Error{std::string("cannot create pipes: ") + std::strerror(errno)};
  // The argument vector is built before fork: between fork and exec the child may only make
  // async-signal-safe calls, since another thread may have held the allocator's lock at fork
  // time (a malloc there deadlocks the child, and this parent with it, waiting on exec_pipe).
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings = child_environment(opts);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const ResourceLimits limits = opts.limits;
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) return Error{std::string("cannot fork: ") + std::strerror(errno)};
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(exec_pipe[0]);
    int in = input_fd >= 0 ? input_fd : open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, 0);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    apply_limits(limits);
    // execvpe looks argv[0] up in this process's PATH but hands the child only envp.
    execvpe(args[0], args.data(), envp.data());
    int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);
  if (input_fd >= 0) close(input_fd);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  if (read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    close(exec_pipe[0]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    waitpid(pid, nullptr, 0);
    return Error{"cannot run '" + argv[0] + "': " + std::strerror(exec_errno)};
  }
  close(exec_pipe[0]);

  ProcessResult res;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  auto deadline = start + timeout;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      res.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? res.out : res.err).append(buf, static_cast<size_t>(got));
        if (i == 0 && opts.max_output && res.out.size() > opts.max_output && !res.output_capped) {
          res.output_capped = true;
          kill(-pid, SIGKILL);
        }
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  return res;
}

Result<TempDir> TempDir::create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return Error{"cannot create a temporary directory: " + std::string(std::strerror(errno))};
  return TempDir(std::string(buf.data()));
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ptxforge
