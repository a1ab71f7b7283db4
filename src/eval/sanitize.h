// The sanitize stage's parts: compute-sanitizer's four tools, the size sets each runs on,
// its command line around the worker, and the reading of its log into a verdict. The stage
// itself (eval/pipeline.cpp) starts one worker under each tool in turn; these functions are
// pure and tested against sanitizer-style logs without a GPU.
//
// - memcheck: out-of-bounds and misaligned accesses to global, local and shared memory. Each
//   buffer is a plain allocation of its own (the tool sees bounds of plain allocations only),
//   its data placed in it as verify's guard pages place it (gpu/guard_layout.h, slack): the
//   end rounded to 256 bytes on a granularity boundary, after a seed-drawn slack filled with
//   canaries, so a kernel cannot tell the tool from its pointers. Past the end the
//   allocation ends within 255 bytes; before the start lies the slack, where memcheck sees
//   nothing, but the canaries catch writes and initcheck catches reads.
// - racecheck (--racecheck-report all): shared-memory hazards between threads with no
//   barrier between them. Its errors and its warnings both fail. Runs on verify's own guarded
//   placement: a hazard a kernel enables only when its buffers look like verify's is there.
// - synccheck: barriers used wrongly (bar.sync reached by part of a block, a bad mask). On
//   verify's placement too.
// - initcheck: reads of device memory nobody wrote. The harness writes every input, every
//   scratch buffer (zero-filled by contract) and, in the other stages, every output (poison),
//   so a read of those is initialized whatever the kernel does. Under initcheck the outputs
//   are left unwritten before the launch: a read of an output element the kernel has not yet
//   written (accumulating into an output it assumes zero) is reported, and so is an output
//   element it never writes, when the harness copies the outputs back. Buffers lie as under
//   memcheck, the slack unwritten: a read of it is a read of memory nobody wrote. With
//   --initcheck-address-space all (where the tool has it) reads of shared memory nobody wrote
//   are reported too. Local memory and registers are not checked by it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/job.h"
#include "task/task_spec.h"

namespace ptxforge::eval {

enum class SanitizerTool { memcheck, racecheck, synccheck, initcheck };
std::string_view to_string(SanitizerTool t);
inline constexpr SanitizerTool kSanitizerTools[] = {SanitizerTool::memcheck, SanitizerTool::racecheck,
                                                    SanitizerTool::synccheck, SanitizerTool::initcheck};

// compute-sanitizer exits with this code when its tool reported an error.
inline constexpr int kSanitizerErrorExit = 97;

struct SanitizerLog {
  bool summary = false;   // "ERROR SUMMARY: N errors" or "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
  size_t errors = 0;      // N; for racecheck E + W
  std::vector<std::string> first_report;  // the first report's lines, "=========" and backtraces left out
};
SanitizerLog parse_sanitizer_log(std::string_view log);

// The command line: the sanitizer, its options for `tool`, then the worker's own argv.
// `shared_initcheck`: the tool knows --initcheck-address-space (checked in its --help).
std::vector<std::string> sanitizer_argv(const std::string& sanitizer, SanitizerTool tool, const std::string& log_file,
                                        bool shared_initcheck, const std::vector<std::string>& worker_argv);

// The size sets a tool runs on, by the bytes of their buffers: memcheck and synccheck on
// every size set up to 256 MiB of buffers (always the smallest), held-back ones included,
// since bounds bite at odd sizes; racecheck and initcheck, which are far slower, on the
// smallest shown set and the smallest held-back one.
std::vector<std::string> sanitizer_size_sets(const task::Task& t, SanitizerTool tool);
// The bytes of every buffer of the task on size set `set` (how big one case is).
int64_t case_bytes(const task::Task& t, const task::SizeSet& set);
// The shown size set with the fewest (or most) bytes; nullptr when the task shows none.
const task::SizeSet* shown_size_set_by_bytes(const task::Task& t, bool largest);

// Where the buffers lie under `tool`: verify's guard pages for racecheck and synccheck, plain
// allocations with slack for memcheck (exact) and initcheck (exact_unwritten).
gpu::Placement sanitizer_placement(SanitizerTool tool);
// The job to send under `tool`: one seed, the tool's size sets, the tool's placement.
gpu::Job sanitizer_job(const gpu::Job& verify_job, const task::Task& t, SanitizerTool tool);

struct ToolVerdict {
  bool passed = false;
  std::string summary;        // "racecheck: 1 error: Error: Race reported between ...; ..."
  std::string model_summary;  // the same without thread, block and address lines (they can give a held-back size away)
};
// `outcome`: the job's answer (unset when the exchange itself failed: `exchange_error`);
// `exit_code`: the sanitizer's (-1: killed or died of a signal).
ToolVerdict judge_sanitizer(SanitizerTool tool, const SanitizerLog& log, int exit_code, const std::optional<gpu::Outcome>& outcome,
                            const std::string& exchange_error);

}  // namespace ptxforge::eval
