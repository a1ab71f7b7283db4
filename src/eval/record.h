// One result record for one candidate on one task: every stage's verdict and measurements.
// Stages fill it in; printers (report.cpp: text and JSON) only read it. Later proofs (SASS,
// executed instructions) slot into InstructionProof without changing the record's shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/time_gate.h"
#include "gpu/measurement.h"
#include "toolchain/ncu_metrics.h"
#include "toolchain/ptxas.h"
#include "util/diagnostic.h"

namespace ptxforge::eval {

// The stages, in the order the record lists them (eval/stages.h runs them). JSON and text
// spell them as to_string does.
enum class StageId { check, assemble, verify, sanitize, time, prove, profile };
std::string_view to_string(StageId s);
std::optional<StageId> stage_id_from_string(std::string_view s);

enum class StageStatus { passed, failed, skipped, not_run };
std::string_view stage_status_name(StageStatus s);

// Who verified a candidate: nobody (verify did not pass or did not run), a GPU, or the CPU
// engine (docs/emu.md). JSON's "verified_by" spells them as to_string does.
enum class VerifiedBy { none, gpu, cpu_engine };
std::string_view to_string(VerifiedBy v);
std::optional<VerifiedBy> verified_by_from_string(std::string_view s);

// Who reads a verdict: a person (every size set named) or the model (held-back size sets
// never named).
enum class Audience { person, model };

struct StageResult {
  StageId id = StageId::check;
  StageStatus status = StageStatus::not_run;
  std::string summary;  // one line
  double seconds = 0;
  // The summary names a held-back size set. The stage then also writes `model_summary`,
  // the same verdict without the set; printers for a model use that one.
  bool held_back = false;
  std::string model_summary;
  const std::string& text(Audience a) const { return a == Audience::model && held_back ? model_summary : summary; }
};

// Evidence that a required instruction family is really there: in the PTX, in the SASS
// ptxas emitted (unset when no disassembler ran or the family has no SASS row), and executed
// on the GPU (unset until that proof ran).
struct InstructionProof {
  std::string family;
  // The other families of its group in the task ("mma.sync | wgmma.mma_async"): where one of
  // them is proven, this one need not be.
  std::vector<std::string> alternatives;
  bool in_ptx = false;
  int ptx_count = 0;
  std::optional<bool> in_sass, executed;
  std::vector<std::string> sass_opcodes;  // the opcodes that would prove it ("HGMMA", ...)
  int sass_count = 0;                     // how many of them the listing holds
  uint64_t executed_warps = 0;            // warp-level executions the instrumented copy counted
  uint64_t executed_work = 0;             // those executions weighed by their work, in work_unit
  std::string work_unit = "warp executions";  // "multiply-adds", "bytes" or "warp executions"
  uint64_t min_warps = 0;                 // the task's largest per-case [min_work] floor, in work_unit (0: none)
  std::optional<uint64_t> ncu_threads;    // `--prove ncu`: predicated-on thread executions of sass_opcodes
};

// What the physical-limit gate held the timings to, and what each shown size set achieved.
struct PhysicalLimits {
  std::string note;  // where the peaks come from, or why they are missing
  LimitPeaks peaks;
  std::vector<LimitRow> rows;
};

// `--profile`: what Nsight Compute saw of the candidate's launches and of the reference's.
struct ProfileReport {
  std::string note;  // what was profiled, or why nothing was
  std::string size_set;
  std::vector<toolchain::ProfileSummary> candidate, reference;
};

struct RunRecord {
  std::string task, candidate, arch, device;
  uint64_t seed = 0;  // the base seed the inputs derive from: `--seed` with it reproduces the run
  std::vector<StageResult> stages;
  Diagnostics diagnostics;  // the front end's findings, then ptxas's, on the candidate's lines
  std::string source_name;  // for rendering diagnostics
  std::string source_text;
  std::vector<toolchain::FunctionResources> resources;
  std::optional<gpu::VerifyReport> verify;
  std::optional<gpu::TimeReport> time;
  std::optional<gpu::Failure> failure;  // why the GPU stages stopped, when they did
  std::optional<gpu::GuardMode> guard;  // how verify placed the candidate's buffers
  std::string guard_note;               // why there were no guard pages, when there were none
  std::vector<InstructionProof> proofs;
  std::string sass_note;  // the disassembler the SASS proof used, or why it is unavailable
  std::string executed_note;  // how the executed proof ran, or why it did not
  // Whose counts the executed proof read: a GPU's (an instrumented copy) or the CPU engine's
  // (its own counts of the verify run); none where it did not count.
  VerifiedBy executed_by = VerifiedBy::none;
  std::string ncu_note;       // `--prove ncu`: what ncu profiled, or why it could not
  std::optional<PhysicalLimits> limits;  // when the time stage judged timings
  std::optional<ProfileReport> profile;  // `--profile`
  std::vector<std::string> flags;       // results let through by --allow-suspicious, ...
  bool gpu_verified = false;            // verify passed on a real GPU
  VerifiedBy verified_by = VerifiedBy::none;  // where verify passed: gpu when gpu_verified, cpu_engine on the engine
  bool passed = false;                  // every stage that ran passed, and verify passed (GPU or CPU engine)
  double check_wall_s = 0;              // check + assemble + verify, without timing trials

  StageResult& stage(StageId id);
  const StageResult* find_stage(StageId id) const;
  // One line: "passed", "passed (verified on the CPU engine)", "FAILED at verify: ...",
  // "NOT verified on a GPU: ...".
  std::string verdict(Audience a = Audience::person) const;
};

// Speedups of a timed record: the geometric mean over the timed size sets of the reference's
// (the library's) median over the candidate's; 0 where no set has one.
struct Speedups {
  double vs_reference = 0, vs_library = 0;
};
Speedups speedups(const RunRecord& r);

// Printers, apart from measurement. The JSON one is result.json's form; record_from_json
// (eval/record_json.h) reads it back.
std::string render_report_text(const RunRecord& r, bool color = false);
std::string render_report_json(const RunRecord& r);

}  // namespace ptxforge::eval
