// The parent's side of the isolated GPU worker (the worker process itself lives in src/worker/).
// WorkerClient starts `ptxforge worker` as a child in its own process group, sends it jobs over
// a socket, one JSON line each, and waits for the answer with a wall-clock limit. A hang is killed, a crash or a garbled answer becomes a
// Failure with its reason, and the next job gets a fresh worker: no candidate can take the
// harness down or poison the next one's context.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gpu/job.h"
#include "gpu/measurement.h"
#include "util/result.h"

namespace ptxforge::gpu {

// Where the pipeline sends jobs: the worker process, or a fake in tests.
class JobRunner {
 public:
  virtual ~JobRunner() = default;
  // Runs one job. Never throws and never hangs past `timeout`: every way the job can fail
  // comes back as Outcome::failure.
  virtual Outcome run(const Job& job, std::chrono::milliseconds timeout) = 0;
};

class WorkerClient : public JobRunner {
 public:
  // `argv` starts the worker; tests pass a fake one (a script that crashes, hangs or babbles).
  explicit WorkerClient(std::vector<std::string> argv);
  ~WorkerClient() override;
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  Outcome run(const Job& job, std::chrono::milliseconds timeout) override;

  // One raw exchange (used by run, and by tests). On failure, `failure` says why.
  struct Exchange {
    bool ok = false;
    std::string reply;
    Failure failure;
  };
  Exchange exchange(const std::string& line, std::chrono::milliseconds timeout);

  // Closes the job channel, so that the worker's loop ends, and waits up to `timeout` for the
  // process to exit (a worker run under compute-sanitizer prints its summary then). Returns
  // its exit code; -1 when it had to be killed, died of a signal, or was never started.
  int finish(std::chrono::milliseconds timeout);

  int starts() const { return starts_; }  // how many worker processes were started
  bool running() const { return pid_ > 0; }
  void stop();

 private:
  bool start(std::string& error);
  std::string stderr_tail();
  std::string reap_dead_worker(const std::string& when);

  std::vector<std::string> argv_;
  int pid_ = -1;
  int fd_ = -1;
  int starts_ = 0;
  int last_exit_ = -1;  // the exit code of the last worker that was reaped
  std::string stderr_path_;
  std::string pending_;  // bytes read past the last newline
};

// argv for the real worker: this binary with the `worker` subcommand; with an ordinal, a
// worker on that GPU (`worker --device N`).
std::vector<std::string> default_worker_argv();
std::vector<std::string> worker_argv_for_gpu(int ordinal);
// argv for the CPU engine's process (docs/emu.md): this binary with the `emu-worker` subcommand.
// It speaks the same protocol, so a WorkerClient on it gives the same restarts and limits.
std::vector<std::string> emu_worker_argv();

// The GPU's facts, from the worker: the parent never loads the driver itself. Without a GPU
// the error says what is missing (the worker's "no CUDA driver: ...").
Result<DeviceInfo> ask_device_info(JobRunner& worker, std::chrono::milliseconds timeout = std::chrono::seconds(60));
// The same, from a worker started for the question (`ptxforge doctor`, a session's start).
Result<DeviceInfo> ask_device_info(const std::vector<std::string>& worker_argv = default_worker_argv());

}  // namespace ptxforge::gpu
