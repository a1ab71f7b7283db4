// What the model is told after a round: written for a model, most important first, capped
// in length. Front-end and ptxas diagnostics with their source lines and carets; a runtime
// fault; the mismatch summary with its hint; performance against nvcc and the library with
// the fraction of the roofline; registers and spills; missing required instructions.
#pragma once

#include <string>

#include "agent/hardware.h"
#include "eval/record.h"
#include "task/task_spec.h"

namespace ptxforge::agent {

struct RoundOutcome;

// Achieved bandwidth and throughput against the hardware's peaks, per timed size set.
std::string roofline_summary(const task::Task& t, const eval::RunRecord& r, const Hardware& hw);

// Feedback on an evaluated candidate.
std::string feedback_for(const task::Task& t, const eval::RunRecord& r, const Hardware& hw, size_t max_chars = 8000);
// Feedback when nothing could be extracted from the reply.
std::string feedback_no_code(const std::string& why);

}  // namespace ptxforge::agent
