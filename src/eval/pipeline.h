// The pipeline for one candidate: it walks the stage table (eval/stages.h) over one
// StageContext and fills in the RunRecord. The GPU stages go to an isolated worker
// (gpu/worker_client.h), which the pipeline keeps warm across candidates and restarts after a crash
// or a hang; tests pass a fake JobRunner instead. Where the run takes the CPU engine
// (RunOptions::device), verify goes to a second worker, `ptxforge emu-worker`, started on
// first need (docs/emu.md). The parent never loads the CUDA driver:
// the GPU's facts (its target) come from the worker too.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "eval/record.h"
#include "eval/stages.h"
#include "gpu/worker_client.h"
#include "task/task_spec.h"
#include "util/subprocess.h"

namespace ptxforge::eval {

class Pipeline {
 public:
  // The CPU engine is `ptxforge emu-worker` of the same binary where `worker_argv` is
  // {binary, "worker", ...}; a worker of another shape (a test's fake) has none.
  explicit Pipeline(std::vector<std::string> worker_argv = gpu::default_worker_argv());
  // Jobs go to `runner` (a fake in tests), which must outlive the pipeline.
  explicit Pipeline(gpu::JobRunner& runner);
  // GPU jobs to `runner`, CPU engine jobs to `engine` (fakes in tests); both outlive the pipeline.
  Pipeline(gpu::JobRunner& runner, gpu::JobRunner& engine);
  ~Pipeline();
  RunRecord run(const task::Task& task, const std::string& candidate_path, const RunOptions& opts);
  int worker_starts() const { return client_ ? client_->starts() : 0; }
  int engine_starts() const { return engine_client_ ? engine_client_->starts() : 0; }
  // Whether a run with `opts` verifies on the CPU engine: --device cpu, or auto where the GPU
  // worker answered that there is no GPU or driver (asked once per pipeline).
  bool uses_engine(const RunOptions& opts);
  void set_hooks(StageHooks hooks) { hooks_ = std::move(hooks); }

  // The GPU's facts, asked of the worker once and remembered.
  const Result<gpu::DeviceInfo>& device();
  // The GPU's peaks for the time stage's physical-limit gate: from the cache file under
  // `peaks_cache_dir` (default: the cache directory), measured by the worker on first need.
  const Result<gpu::DevicePeaks>& peaks();
  void set_peaks_cache_dir(std::string dir) { peaks_cache_dir_ = std::move(dir); }

  // After a run that reached the GPU: do trivial outputs (all zeros, a copy of an input,
  // never written) fail the task on every size set? Returns one case per (size set, kind);
  // a case that passes is a hole in the task's tolerance.
  Result<std::vector<gpu::CaseResult>> check_trivial_outputs(std::chrono::milliseconds timeout);

 private:
  std::string pick_arch(const RunOptions& opts, const task::Task& task);
  // The CPU engine's runner: the one given, else `ptxforge emu-worker`, started on first need.
  gpu::JobRunner& engine();

  std::vector<std::string> worker_argv_;       // empty when a runner was given
  std::unique_ptr<gpu::WorkerClient> client_;  // the worker, unless a runner was given
  gpu::JobRunner& runner_;
  gpu::JobRunner* engine_runner_ = nullptr;
  std::vector<std::string> engine_argv_;       // how the engine is started; empty: no engine (unless given)
  std::unique_ptr<gpu::WorkerClient> engine_client_;
  // Answers every job "no CPU engine here" (unsupported), so --device cpu without one is NOT verified.
  struct NoEngine : gpu::JobRunner {
    gpu::Outcome run(const gpu::Job&, std::chrono::milliseconds) override {
      gpu::Outcome o;
      o.failure = gpu::Failure{gpu::FailureKind::unsupported, "no CPU engine in this pipeline", ""};
      return o;
    }
  } no_engine_;
  bool no_gpu_ = false;          // the GPU worker's device answer was FailureKind::driver
  bool last_on_engine_ = false;  // the last run verified on the engine (check_trivial_outputs follows it)
  StageHooks hooks_;
  std::optional<Result<gpu::DeviceInfo>> device_;
  std::optional<Result<gpu::DevicePeaks>> peaks_;
  std::string peaks_cache_dir_;
  std::optional<TempDir> work_;  // the last run's PTX and cubin
  std::optional<gpu::Job> last_job_;
};

}  // namespace ptxforge::eval
