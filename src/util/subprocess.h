// Running a tool (ptxas, nvcc) as a child process: arguments without a shell, stdout and
// stderr captured, a wall-clock timeout that kills the whole process group, and a private
// temporary directory that is removed afterwards.
#pragma once

#include <chrono>
#include <string>
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

struct ProcessOptions {
  std::string cwd;
  std::string input;          // written to the child's stdin (empty: /dev/null)
  size_t max_output = 0;      // kill the child once stdout exceeds this many bytes (0: no cap)
};

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
