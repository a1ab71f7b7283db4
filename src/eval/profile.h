// The profile stage (`--profile`): after a candidate passed every other stage, one Nsight
// Compute pass over the verify job on the largest shown size set, in a worker started under
// ncu (clocks as they run when timed), profiles the candidate's launches and the reference
// kernel's (nvcc's code for the same task). The record keeps both summaries; the feedback
// gives the model the few lines it can act on. Never fails a candidate: where ncu cannot run,
// the stage is skipped with the reason.
#pragma once

#include <string>

#include "eval/record.h"
#include "eval/stages.h"

namespace ptxforge::eval {

StageResult profile(StageContext& ctx);

// The profile as Markdown lines for the model (and the text report): the candidate's launches
// in full, the reference's in one line each for comparison. "" when nothing was profiled.
std::string render_profile(const ProfileReport& p);

}  // namespace ptxforge::eval
