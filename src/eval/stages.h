// The stage table: check -> assemble -> verify -> [sanitize] -> time -> prove, each a
// function over one StageContext that holds the Candidate (filled in by check and assemble)
// and the record being written. The table is the one place that lists the stages and says
// how each takes part in the flow (defined in pipeline.cpp); Pipeline::run walks it, times every stage and calls the
// trace hooks. A failing stage stops the flow, and its summary becomes the verdict.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/candidate.h"
#include "eval/record.h"
#include "gpu/worker_client.h"
#include "task/task_spec.h"
#include "toolchain/sass.h"

namespace ptxforge::eval {

// Where verify runs (`--device`): auto (the default) asks the GPU worker once and takes the CPU
// engine where it answers that there is no GPU or driver; gpu never uses the engine (no GPU:
// verify is skipped, NOT verified); cpu always does (docs/emu.md, section 1).
enum class Device { automatic, gpu, cpu };
std::string_view to_string(Device d);  // "auto", "gpu", "cpu"
std::optional<Device> device_from_string(std::string_view s);

// An interpreter is orders of magnitude slower than a GPU, and a correct kernel must not fail
// for it: on the CPU engine the verify and trivial jobs get this many times verify_timeout
// (a hang still ends, at the engine's lane-instruction budget or at this limit).
inline constexpr int kEngineTimeoutFactor = 4;

struct RunOptions {
  Device device = Device::automatic;
  bool held_back = true;   // --sizes all (default) or shown
  int seeds = 3;
  // The run's base seed (task/seeds.h): every input set of verify, time and the trivial check
  // derives from it. Unset: Pipeline::run draws a fresh one for each candidate.
  std::optional<uint64_t> seed;
  bool time = true;
  bool sanitize = false;
  // Cross-check the executed proof with Nsight Compute (`--prove ncu`): the candidate's launches
  // of one case profiled with SourceCounters; a required family ncu saw no thread execute fails.
  bool prove_ncu = false;
  // Profile a candidate that passed with Nsight Compute (eval/profile.h), beside the reference.
  bool profile = false;
  std::string ncu;  // the ncu to run ("" = the CUDA toolkit's)
  // Report an impossible time (faster than the GPU's peaks) or a suspicious one (over 10x the
  // vendor library) as a flag instead of failing the time stage.
  bool allow_suspicious = false;
  std::string sanitizer;   // compute-sanitizer to run ("" = the CUDA toolkit's); tests pass a fake
  std::string arch;        // "" = the GPU's, else sm_90a
  std::string launch_path; // a TOML launch spec instead of the `// @launch` comments
  std::chrono::milliseconds verify_timeout{30000};  // on the CPU engine: kEngineTimeoutFactor times this
};

struct StageContext {
  const task::Task& task;
  const RunOptions& opts;
  gpu::JobRunner& worker;
  std::vector<std::string> worker_argv;  // how the worker is started (sanitize starts one under the sanitizer); empty for a fake
  std::string work_dir;  // this run's scratch folder: the PTX of a .cu, the cubin, sanitizer logs
  RunRecord& record;
  Candidate candidate;
  std::optional<gpu::Job> job;  // the verify job once verify has sent it; sanitize and time reuse it
  std::chrono::steady_clock::time_point run_started, stage_started;
  bool halt = false;  // stop the flow although the stage did not fail (verify where there is no GPU)
  // The CPU engine verifies this run: `worker` is the engine's runner, and the stages after
  // verify skip what needs a GPU (sanitize, time) or say what the engine did instead.
  bool on_engine = false;
  // The GPU's facts and measured peaks, asked for once per pipeline (unset: not available).
  std::function<const Result<gpu::DeviceInfo>&()> device;
  std::function<const Result<gpu::DevicePeaks>&()> peaks;

  double stage_seconds() const;
};

using StageFn = StageResult (*)(StageContext&);

struct Stage {
  StageId id;
  StageFn run;
  // Runs only when this says so (sanitize: with --sanitize); such a stage is listed in the
  // record only when it ran. nullptr: always listed, "not run" until it runs.
  bool (*wanted)(const RunOptions&) = nullptr;
  // Runs even after the flow stopped, once the candidate is assembled: prove reads the PTX
  // and the cubin, so its verdict is known when the GPU stages could not run.
  bool after_stop = false;
  // Its time goes into the record. A skipped stage sets its own time (verify without a GPU
  // still built the reference).
  bool timed = true;
};

const std::vector<Stage>& stage_table();

// Called around every stage that runs, e.g. for `--trace` timings; `seconds` is the stage's
// wall time whether or not the record shows it.
struct StageHooks {
  std::function<void(StageId)> before;
  std::function<void(const StageResult&, double seconds)> after;
};

StageResult check(StageContext& ctx);
StageResult assemble(StageContext& ctx);
StageResult verify(StageContext& ctx);
StageResult sanitize(StageContext& ctx);
StageResult time(StageContext& ctx);
StageResult prove(StageContext& ctx);

// The required instruction families and how often each occurs in the PTX.
std::vector<InstructionProof> prove_in_ptx(const std::string& ptx, const std::vector<std::string>& families);
// Fills in_sass, sass_opcodes and sass_count from a listing of the candidate's cubin.
void prove_in_sass(const toolchain::SassListing& listing, std::vector<InstructionProof>& proofs);
// How far a group of alternative families (indices into warps and floors) went toward the
// task's [min_work] on one case: the sum of each member's warp executions over its floor,
// 1 or more carrying the work. nullopt where a member has no floor: any execution will do.
std::optional<double> floor_share(const std::vector<size_t>& members, const std::vector<uint64_t>& warps,
                                  const std::vector<std::optional<uint64_t>>& floors);

}  // namespace ptxforge::eval
