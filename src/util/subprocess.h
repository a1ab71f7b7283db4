// Running a tool (ptxas, nvcc) as a child process: arguments without a shell, stdout and
// stderr captured, a wall-clock timeout that kills the whole process group, and a private
// temporary directory that is removed afterwards. A child never sees the parent's whole
// environment (API keys live there): it gets an allowlist, unless the caller opts in to
// inheriting it, and it can be given resource limits that the kernel enforces.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ptxforge {

struct ProcessResult {
  int exit_code = -1;        // -1 when killed by a signal or timed out
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
  double seconds = 0;
  bool output_capped = false;  // stdout passed ProcessOptions::max_output and the process was killed
};

// What environment a child starts with.
enum class ChildEnv {
  clean,    // clean_environment(): the allowlist below, never a secret (the default)
  inherit,  // the parent's whole environment: only for a program the user named to hold its
            // own credentials (the cmd: model provider)
};

// Limits set with setrlimit in the child before exec; 0 leaves that limit as it is. A core
// dump is always off (it would write the child's memory, secrets and all, to disk).
struct ResourceLimits {
  uint64_t address_space_bytes = 0;  // RLIMIT_AS: allocations past it fail
  uint64_t file_size_bytes = 0;      // RLIMIT_FSIZE: a write past it kills with SIGXFSZ
  uint64_t cpu_seconds = 0;          // RLIMIT_CPU: SIGXCPU, then SIGKILL a second later
  uint64_t processes = 0;            // RLIMIT_NPROC (per user; root is exempt)
};

struct ProcessOptions {
  std::string cwd;
  std::string input;          // written to the child's stdin (empty: /dev/null)
  size_t max_output = 0;      // kill the child once stdout exceeds this many bytes (0: no cap)
  ChildEnv env = ChildEnv::clean;
  std::vector<std::string> extra_env;  // "NAME=value" added after the allowlist (or replacing)
  ResourceLimits limits;
};

// The allowlist a clean child gets from `parent` ("NAME=value" entries, as in environ): PATH,
// HOME, TMPDIR, XDG_CACHE_HOME, LANG, LC_*, LD_LIBRARY_PATH, CUDA_*, the sanitizers' *SAN_OPTIONS and
// PTXFORGE_*, minus every name that looks like a credential (is_secret_name).
std::vector<std::string> clean_environment(const char* const* parent);
// The environment a child started with `opts` gets from this process's environ.
std::vector<std::string> child_environment(const ProcessOptions& opts);
// A name that holds a credential: *KEY, *TOKEN, *SECRET, *PASSWORD, *PASSWD, *CREDENTIAL(S),
// *_AUTH, *_PASS, *_PAT, *COOKIE, *SESSION, or one with API_KEY, APIKEY, ACCESS_KEY,
// PRIVATE_KEY, SECRET, TOKEN or PASSWORD anywhere in it (case-insensitive).
bool is_secret_name(std::string_view name);

// Runs argv[0] (looked up in PATH when it has no '/'). An error Result means the program
// could not be started at all; a failing program is a normal ProcessResult.
Result<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  const std::string& cwd = "");
Result<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  const ProcessOptions& opts);

// A directory under $TMPDIR (or /tmp) that is deleted with everything in it on destruction.
class TempDir {
 public:
  static Result<TempDir> create(const std::string& prefix);
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string p) : path_(std::move(p)) {}
  std::string path_;
};

}  // namespace ptxforge
