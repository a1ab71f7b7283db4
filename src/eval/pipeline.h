// The stage pipeline for one candidate: check -> assemble -> verify -> time -> prove. Each
// stage reads what the previous ones left in the RunRecord; a failing stage stops the flow
// and says why. The GPU stages go to an isolated worker (gpu/worker.h), which the pipeline
// keeps warm across candidates and restarts after a crash or a hang.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "eval/record.h"
#include "gpu/worker.h"
#include "task/task_spec.h"
#include "util/subprocess.h"

namespace ptxforge::eval {

struct RunOptions {
  bool held_back = true;   // --sizes all (default) or shown
  int seeds = 3;
  bool time = true;
  bool sanitize = false;
  std::string arch;        // "" = the GPU's, else sm_90a
  std::string launch_path; // a TOML launch spec instead of the `// @launch` comments
  std::chrono::milliseconds verify_timeout{30000};
};

class Pipeline {
 public:
  explicit Pipeline(std::vector<std::string> worker_argv = gpu::default_worker_argv());
  ~Pipeline();
  RunRecord run(const task::Task& task, const std::string& candidate_path, const RunOptions& opts);
  int worker_starts() const { return worker_.starts(); }

  // After a run that reached the GPU: do trivial outputs (all zeros, a copy of an input,
  // never written) fail the task on every size set? Returns one case per (size set, kind);
  // a case that passes is a hole in the task's tolerance.
  Result<std::vector<gpu::CaseResult>> check_trivial_outputs(std::chrono::milliseconds timeout);

 private:
  // The verify job once more, under compute-sanitizer memcheck (and racecheck when asked).
  StageResult sanitize(const gpu::Job& verified, bool racecheck, std::chrono::milliseconds timeout);

  gpu::WorkerClient worker_;
  std::optional<TempDir> work_;  // the last run's PTX and cubin
  std::optional<gpu::Job> last_job_;
};

// The required instruction families and how often each occurs in the PTX.
std::vector<InstructionProof> prove_in_ptx(const std::string& ptx, const std::vector<std::string>& families);

}  // namespace ptxforge::eval
