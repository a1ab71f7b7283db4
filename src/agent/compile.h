// The model as compiler: prompt -> reply -> extract -> check/assemble/verify/time/prove ->
// feedback -> next round, until the kernel is verified (and fast enough), the rounds run
// out, or the model must be asked by hand. Each of k samples is an independent trajectory;
// their model calls run in parallel, their GPU stages one at a time (so timings are not
// disturbed). Every step is saved in the session folder, and `resume` picks up where a
// session stopped.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/gpu_pool.h"
#include "agent/knowledge.h"
#include "agent/prompt.h"
#include "agent/session.h"
#include "eval/pipeline.h"
#include "llm/provider.h"

namespace ptxforge::agent {

// What --target-speedup is relative to: nvcc's kernel for the reference, or the vendor library.
enum class SpeedupBase { nvcc, library };
// "1.2", "1.2x" or "1.2x:nvcc" (relative to nvcc), "1.0x:library".
Result<std::pair<double, SpeedupBase>> parse_target_speedup(std::string_view text);
std::string target_speedup_text(double target, SpeedupBase base);

// The loop's options. How each is spelled on the command line, in bench.toml and in
// session.json is one row of agent/options.h; the defaults here are the only ones (the
// commands start from agent::default_options()).
struct CompileOptions {
  std::string task_dir;
  std::string model;  // provider spec
  PromptOptions prompt;
  std::string hardware_profile;  // "" = the GPU, else h200
  int rounds = 8;
  int samples = 1;
  // Keep going after the first verified kernel until one is this much faster than the base
  // (0: stop at the first verified); the best verified round is kept.
  double target_speedup = 0;
  SpeedupBase target_base = SpeedupBase::nvcc;
  std::string out;            // the session folder
  bool cache = true;
  double temperature = 0.2;
  int max_tokens = 32768;
  llm::Prices prices;
  // Each newly verified kernel runs under compute-sanitizer unless --no-sanitize (`run` itself
  // sanitizes only with --sanitize).
  eval::RunOptions run = [] {
    eval::RunOptions r;
    r.sanitize = true;
    return r;
  }();
};

struct CompileResult {
  std::string session;
  SessionStatus status = SessionStatus::not_verified;
  std::string stop_reason;  // why a stopped session stopped
  std::string status_text() const;  // "verified", ..., "stopped: <reason>"
  std::vector<RoundSummary> rounds;  // every round of every sample, in order
  std::optional<RoundSummary> best;
  long prompt_tokens = 0, completion_tokens = 0;
  double cost_usd = 0;
  std::string pending_message;  // manual: where to write the reply
  std::string summary() const;  // the one-screen summary
};

using ProviderFactory = std::function<Result<std::unique_ptr<llm::Provider>>(const std::string& spec, const llm::ProviderOptions&)>;

// Starts a session in opts.out (created; it must not hold a session already).
Result<CompileResult> compile(const CompileOptions& opts, const ProviderFactory& make = llm::make_provider,
                              const std::vector<std::string>& worker_argv = gpu::default_worker_argv());
// Continues the session in `dir` with the options it was started with. `gpu_present` says
// whether a GPU is here (unset: ask the driver); with one, rounds that were only assembled
// where there was none are verified again.
Result<CompileResult> resume(const std::string& dir, const ProviderFactory& make = llm::make_provider,
                             const std::vector<std::string>& worker_argv = gpu::default_worker_argv(),
                             std::optional<bool> gpu_present = std::nullopt);
// The same over several GPUs: the samples' candidates take whichever GPU is free (a bench
// shares one pool among its cells).
Result<CompileResult> compile(const CompileOptions& opts, const ProviderFactory& make, GpuPool& gpus);
Result<CompileResult> resume(const std::string& dir, const ProviderFactory& make, GpuPool& gpus,
                             std::optional<bool> gpu_present = std::nullopt);

// A round's base seed: derived from the session's --seed (so a session is reproduced round by
// round), else fresh for every round (so no round's inputs can be learnt from an earlier one).
uint64_t round_seed(std::optional<uint64_t> session_seed, int sample, int round);

// A round saved where there was no GPU (assembled, verify skipped, or verified on the CPU
// engine only) is evaluated again when the session resumes where there is one.
bool needs_gpu_reverify(const RoundSummary& saved, bool gpu_here);

}  // namespace ptxforge::agent
