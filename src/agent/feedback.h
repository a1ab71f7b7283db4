// What the model is told after a round: written for a model, most important first, capped
// in length. Front-end and ptxas diagnostics with their source lines and carets; a runtime
// fault; the mismatch summary with its hint; performance against nvcc and the library with
// the fraction of the roofline; registers, spills and ptxas's performance notes; missing
// required instructions; and a closing line that fits the round: fix it, make it faster
// toward the target, or nothing to do here (no GPU). A reply cut at the token limit gets a
// feedback of its own: it is never checked as a broken kernel.
#pragma once

#include <string>
#include <string_view>

#include "agent/hardware.h"
#include "eval/record.h"
#include "task/task_spec.h"

namespace ptxforge::agent {

struct RoundOutcome;

enum class SpeedupBase;  // agent/compile.h: nvcc or library

// What a verified kernel is still asked for (compile's --target-speedup): `speedup` times
// nvcc's kernel or the library's time. 0: no target; a verified kernel is done.
struct SpeedupTarget {
  double speedup = 0;
  SpeedupBase base{};  // nvcc
};

// Achieved bandwidth and throughput against the hardware's peaks, per timed size set.
std::string roofline_summary(const task::Task& t, const eval::RunRecord& r, const Hardware& hw);

// Feedback on an evaluated candidate; `target` decides what a verified round is asked next.
std::string feedback_for(const task::Task& t, const eval::RunRecord& r, const Hardware& hw, size_t max_chars = 8000);
std::string feedback_for(const task::Task& t, const eval::RunRecord& r, const Hardware& hw, const SpeedupTarget& target,
                         size_t max_chars = 8000);
// The verdict as a model was told it: the text of the "Result: " line feedback_for writes
// (held-back sizes never named in it), or "" when the feedback has none (no code, cut reply).
// Exported training data takes a round's verdict from here, not from the session's summary,
// which is written for a person and names held-back size sets.
std::string verdict_in_feedback(std::string_view feedback);

// Feedback when nothing could be extracted from the reply.
std::string feedback_no_code(const std::string& why);

// A reply the model was stopped in at the request's token limit (llm::Reply::truncated): the
// round's verdict, and the feedback asking for a shorter answer. `reply` tells whether the code
// block had begun.
constexpr std::string_view kTruncatedVerdict = "reply cut at the token limit";
std::string feedback_truncated(int max_tokens, std::string_view reply);

}  // namespace ptxforge::agent
