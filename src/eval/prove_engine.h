// The executed proof on the CPU engine. The engine counts every instruction it runs, per verify
// case (gpu::CaseResult::executed, one entry per instruction of VerifyReport::counts): warp
// executions in which some lane's guard held, the unit the GPU's instrumented counters use. So
// no copy is made and run again: the counts are those of the very run that verified the
// candidate, exact, and include instructions in .func bodies, which an instrumented copy cannot
// count. The floors of [min_work] are held to them on each case's sizes, which are the engine's
// CPU size sets (eval/engine_path.h), not the GPU's; the executed note says so.
#pragma once

#include <optional>

#include "eval/prove_detail.h"
#include "eval/stages.h"
#include "toolchain/sass.h"

namespace ptxforge::eval {

// Fills r.proofs' executed fields from ctx.record.verify (a pass on the engine), sets
// r.executed_by and r.executed_note; returns a problem that fails the stage (a floor not met,
// counts that do not fit the candidate). `sass`, where listed: a family none of whose opcodes
// ptxas kept counts nothing, as on a GPU.
std::optional<prove_detail::ExecutedProblem> prove_executed_on_engine(StageContext& ctx,
                                                                      const std::optional<toolchain::SassListing>& sass);

}  // namespace ptxforge::eval
