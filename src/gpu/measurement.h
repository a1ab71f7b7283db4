// What the GPU worker measures, as plain data: the verdict per size set and seed, timings,
// and failures with their reason. The worker fills these in; the protocol carries them as
// JSON; the evaluation pipeline folds them into its result record.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "task/compare.h"

namespace ptxforge::gpu {

// Why a job could not be completed: spec (the launch spec does not fit the task), load (the
// driver rejected a module), launch (a launch was refused), fault (the kernel faulted:
// illegal address, trap, ...), oom, library (the vendor baseline failed), timeout (killed
// after the wall-clock limit), crash (the worker died), protocol (the worker said something
// unreadable), driver (no GPU or driver). The CPU engine's checks add: unsupported (a
// construct the engine does not execute, or a job kind it does not answer: never a pass, never
// a wrong fail), race, uninitialized (a value read from never-written memory decided a branch,
// an address or an output), misaligned, barrier (a divergent .aligned barrier, a bad count, a
// deadlock), warp_sync (a .sync collective's member mask broken), budget (the launch ran past
// Job::emu_budget). JSON spells them as to_string does (the enumerator's name).
enum class FailureKind {
  spec, load, launch, fault, oom, library, timeout, crash, protocol, driver,
  unsupported, race, uninitialized, misaligned, barrier, warp_sync, budget,
};
std::string_view to_string(FailureKind k);
std::optional<FailureKind> failure_kind_from_string(std::string_view s);

// How the candidate's buffers were placed: vmm (guard pages: unmapped address space around
// each buffer, so a far out-of-bounds access faults, and canaries in the slack; see
// gpu/guard_layout.h), canary (plain allocations with 4 KiB canary regions around them,
// where the driver or device lacks virtual memory management), or exact (plain allocations
// of exactly the buffer's size and no canaries, so compute-sanitizer sees the true bounds).
enum class GuardMode { vmm, canary, exact };
std::string_view to_string(GuardMode g);
std::optional<GuardMode> guard_mode_from_string(std::string_view s);

// A CTA and a thread of it, as %ctaid and %tid.
struct EmuThread {
  std::array<uint32_t, 3> cta{0, 0, 0}, thread{0, 0, 0};
  bool operator==(const EmuThread&) const = default;
};

// What the CPU engine found, at the PTX line: a check id of docs/checks.md ("emu-race"), the
// instruction's position in the candidate's PTX, the thread, the allocation and byte offset
// involved, and for a race the other access. Plain data: gpu/ knows nothing of emu/.
struct EmuFinding {
  std::string check;  // "emu-race", "emu-oob", ...
  uint32_t line = 0, col = 0;  // 0:0 when no instruction found it (a launch limit)
  std::optional<EmuThread> thread;
  std::string buffer;   // "" for none
  uint64_t offset = 0;  // byte offset into `buffer`
  struct Other {
    uint32_t line = 0, col = 0;
    EmuThread thread;
    bool write = false;
    bool operator==(const Other&) const = default;
  };
  std::optional<Other> other;  // a race's first access
  bool operator==(const EmuFinding&) const = default;
};

struct Failure {
  FailureKind kind = FailureKind::crash;
  std::string message;
  std::string where;       // "size set 'small', seed 1, candidate launch 2" ...
  bool held_back = false;  // `where` names a held-back size set: never shown to a model
  // An illegal address while the candidate ran: the message says "out-of-bounds access".
  // `size_set` and `seed` name the case; `guarded` lists the buffers that had guard pages
  // there (empty without them), which gpu/locate_fault.h reruns one by one to name the one
  // whose guard region was hit.
  bool out_of_bounds = false;
  std::string size_set = {};
  uint64_t seed = 0;
  std::vector<std::string> guarded = {};
  // The CPU engine's finding that failed the case (its check, line, thread, buffer); a finding
  // of an out-of-bounds access also sets out_of_bounds, with the buffer already named and
  // `guarded` empty, so no locate job follows.
  std::optional<EmuFinding> finding = {};
};

// One wrong element of an output, as the CPU engine reports it: where it is, what was expected
// and what came out (as text, in the output's dtype), and who wrote it last.
struct WrongElement {
  std::string output;
  uint64_t index = 0;                // flat element index
  std::vector<int64_t> multi_index;  // from the task's shape of the output (empty without one)
  std::string expected, actual;
  bool never_written = false;  // no thread stored to it during the candidate's launches
  struct Writer {
    EmuThread thread;
    uint32_t line = 0;  // the PTX line of the store
    bool operator==(const Writer&) const = default;
  };
  std::optional<Writer> writer;  // the last writer (unset when never written or not tracked)
  bool operator==(const WrongElement&) const = default;
};

struct CaseResult {
  std::string trivial;  // "" for the candidate; "zeros", "input-copy", "unwritten" for a trivial output
  std::string size_set;
  bool shown = true;
  uint64_t seed = 0;   // the inputs' seed, derived from the run's base seed (task/seeds.h)
  int seed_index = 0;  // 1..N for the verify seeds (what text and feedback show); 0 otherwise
  bool pass = false;
  std::vector<task::Comparison> outputs;
  std::vector<std::string> problems;  // guard violations, modified inputs
  // An instrumented copy's counters after this case (Job::executed_slots); on the CPU engine,
  // the candidate's warp executions in this case, one per entry of VerifyReport::counts.
  std::vector<uint64_t> executed;
  // A hash of the candidate's output bytes on seed 1 (0: not taken): the prove stage holds the
  // instrumented copy's outputs to the timed binary's on the same inputs.
  uint64_t output_digest = 0;
  // The CPU engine: per output, its first wrong elements (up to kMaxWrongPerOutput each), with
  // their last writers. Empty on the GPU (it tracks no writers) and when every element matched.
  std::vector<WrongElement> wrong;
  static constexpr size_t kMaxWrongPerOutput = 8;
};

struct TimingStats {
  int trials = 0;
  double min_ms = 0, median_ms = 0, mean_ms = 0, stdev_ms = 0;
};
TimingStats summarize(std::vector<double> samples_ms);

// One timed trial, its outputs compared with the reference's on its inputs. Every trial is
// checked: on the GPU by its mismatch counts (worker/trial_check.h), the last one also on the host
// in place (guards, unchanged inputs, the comparison with its hints).
struct TrialCheck {
  int trial = 0;      // 1-based, of SizeTiming::candidate.trials
  int input_set = 0;  // 1-based, of SizeTiming::input_sets
  bool last = false;  // the last trial
  bool pass = false;
  std::string problem;  // "" when it passed
};

// Where one size set's time stage went, in wall seconds: what checking every trial costs.
struct TimingCost {
  double expected_s = 0;     // the reference's outputs for every input set: computed (or cached) and uploaded
  double candidate_s = 0;    // the candidate's warm-up and trials: preambles, launches, the comparisons between them
  double compare_gpu_s = 0;  // of candidate_s, the comparison kernels on the GPU (events around them, summed)
  double check_s = 0;        // after the trials: counters read, reference copies read back, the last trial's host check
  double baselines_s = 0;    // the nvcc reference and the library baseline timed
};

struct SizeTiming {
  std::string size_set;
  TimingStats candidate, reference;
  std::optional<TimingStats> library;
  std::string library_name;
  int input_sets = 0;               // the rotation of inputs the trials drew from
  int trial_cap = 0;                // the most trials this size set could run (seed-drawn, worker/timing_plan.h)
  std::vector<TrialCheck> checked;  // the candidate's trials, ascending: every one that ran
  TimingCost cost;
};

// Facts about the GPU, read by the worker (the only process that loads the driver) and sent
// to the parent for `ptxforge doctor`, the prompt's hardware section and the target to
// assemble for.
struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int max_threads_per_block = 0;
  int shared_per_block = 0, shared_per_block_optin = 0, shared_per_sm = 0;
  int registers_per_block = 0, registers_per_sm = 0;
  int l2_bytes = 0;
  size_t memory_bytes = 0;
  int clock_khz = 0, memory_clock_khz = 0, bus_width_bits = 0;
  int driver_version = 0;  // 13000 for 13.0
  int ordinal = 0;         // which of the GPUs the driver sees
  int device_count = 0;    // how many GPUs the driver sees
  std::string arch() const;  // "sm_90a" for 9.0 (the arch-specific target of the device)
};

// Where a verify job's worker time went, summed over its cases (seconds of wall time).
struct VerifyPhases {
  double inputs_s = 0;     // drawing the inputs on the host (none when the worker had them)
  double reference_s = 0;  // the reference: upload, launch, download
  double candidate_s = 0;  // the candidate's buffers placed and filled, and its launches
  double compare_s = 0;    // downloads, guard and input checks, the comparison
};

// Which engine ran a verify job: a GPU through the worker, or the CPU engine (emu-worker).
// JSON "engine": "gpu" / "cpu".
enum class Engine { gpu, cpu };
std::string_view to_string(Engine e);
std::optional<Engine> engine_from_string(std::string_view s);

// How often one PTX instruction of the candidate ran on the CPU engine, summed over a verify
// job's cases: warp issues with at least one lane whose guard holds (the unit of the GPU's
// instrumented counters) and lane executions. The prove stage maps
// it to its instruction by line and column.
struct InstructionCount {
  uint32_t line = 0, col = 0;
  std::string opcode;  // as written: "ld.global.nc.f32"
  uint64_t warp_issues = 0, lane_executions = 0;
  bool operator==(const InstructionCount&) const = default;
};

struct VerifyReport {
  std::vector<CaseResult> cases;
  double seconds = 0;  // wall time of the whole verify job in the worker
  VerifyPhases phases;
  std::vector<uint64_t> executed;  // the instrumented copy's counters (Job::executed_slots), summed over every case
  // Last, so that aggregate initialisers of the fields above keep their meaning.
  Engine engine = Engine::gpu;           // which engine verified
  std::vector<InstructionCount> counts;  // the CPU engine's per-instruction counts (empty on a GPU)
  bool pass() const {
    for (auto& c : cases)
      if (!c.pass) return false;
    return !cases.empty();
  }
};

struct TimeReport {
  std::vector<SizeTiming> sizes;
  // Every checked timed trial matched the reference; else the first failure, in the words of
  // gpu::describe_trial_failure ("timed trial 7 of 40 on size set 'small' (input set 3): ...").
  bool trials_pass = false;
  std::string trial_problem;
  bool reverify_pass = false;  // one more launch with fresh inputs after the trials
  std::string reverify_problem;
  std::vector<std::string> notes;  // what the timing could not do as planned (a .global it could not restore)
  double seconds = 0;
};

}  // namespace ptxforge::gpu
