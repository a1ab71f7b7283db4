// `ptxforge fixit --model M SESSIONS...`: a (stronger) model repairs the kernels other
// sessions failed on, through the normal loop, and the repairs that pass become training
// pairs (the failed kernel and the toolchain's verdict on it -> the repaired kernel).
//
// A failure is a trajectory none of whose rounds passed; its last evaluated round (the
// kernel and the feedback the model saw) is what gets repaired. Each repair is a compile
// session of its own, under the output folder, whose first prompt is the task followed by the
// failed kernel and its verdict; a folder that holds one already is resumed, so a cut-off
// run continues. A repair is kept when the loop verified it: on a GPU, or on the CPU engine
// (`device`, or the failed session's own device; "verified_by" says which). Where nothing
// verified it (device gpu without a GPU): with `keep_unverified`, a repair that assembles is
// kept (marked "verified": false) only when the failed kernel did not assemble, since then
// assembling is the progress; a repair identical to the failed kernel (comments and blanks
// aside: the same normalised hash as `data pairs`) is never kept.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "agent/compile.h"
#include "util/result.h"

namespace ptxforge::data {

struct Failure {
  std::string session;  // the failed session's folder
  std::string task;     // as its session.json names it ("level1/saxpy")
  int sample = 1, round = 0;
  std::string candidate, feedback, verdict;
  bool assembled = false;           // the failed kernel assembled (it failed later)
  agent::CompileOptions options;    // the failed session's options, its task resolved
};

// Every failed trajectory of the sessions under `roots` (session folders, or folders holding
// them such as a bench's), in a stable order. Sessions whose options or task cannot be
// loaded, and failed rounds without a PTX candidate or feedback (a CUDA candidate, a reply
// cut off), are listed in `skipped` with the reason.
std::vector<Failure> find_failures(const std::vector<std::string>& roots, std::vector<std::string>& skipped);

// The loop's options among these (model, rounds, seed, temperature, max_tokens) are the
// option table's (agent/options.h), with its defaults but for rounds: a repair starts near
// the answer, so it gets fewer.
struct RepairOptions {
  std::string model;  // provider spec of the repairing model
  int rounds = 3;     // rounds per repair
  std::string out;    // folder of the repair sessions
  bool keep_unverified = false;
  std::optional<uint64_t> seed;  // the repair sessions' base seed (default: fresh every round)
  double temperature = agent::CompileOptions{}.temperature;
  int max_tokens = agent::CompileOptions{}.max_tokens;
  // Where repairs verify (`--device`); unset: where the failed session did.
  std::optional<eval::Device> device;
};

struct RepairStats {
  int failures = 0, verified = 0, assembled_only = 0, not_repaired = 0, errors = 0;
  int verified_on_engine = 0;  // of `verified`: on the CPU engine, not a GPU
  int without_gpu = 0;  // repair sessions whose kernels could not be verified: no GPU here
};

// Runs one repair session per failure and returns the kept pairs as JSONL lines (kind
// "fixit", origin "model-repair"; the format of docs/data.md). A failure whose repair session
// cannot run is counted in `errors` and reported to `log`; the others go on.
Result<std::vector<std::string>> repair_failures(const std::vector<Failure>& failures, const RepairOptions& o,
                                                 const agent::ProviderFactory& make, agent::GpuPool& gpus,
                                                 RepairStats& stats, std::ostream& log);

}  // namespace ptxforge::data
