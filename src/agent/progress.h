// The trajectory's history in a round's feedback. feedback_for speaks of one round only; a model
// that optimises across rounds also needs to know whether this round made things better or
// worse, and which of its kernels is the best so far, so that a regression is not built upon.
// The section is made from the saved round summaries alone (never from records), so a resumed
// session writes the same feedback, and it names stages, never verdicts: a summary's verdict is
// written for a person and may name held-back size sets.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "agent/session.h"

namespace ptxforge::agent {

enum class SpeedupBase;  // agent/compile.h: nvcc or library

// Timings of one kernel vary by a few percent from run to run (clocks, L2, other tenants): a
// round within this fraction of the best is "about the same", not a regression.
constexpr double kRegressionMargin = 0.03;
// feedback_for's default cap: the round's feedback and the history section share it.
constexpr size_t kFeedbackMaxChars = 8000;
// The history section's share of it; the best round's kernel is shown only when it fits.
constexpr size_t kProgressMaxChars = 4000;
// The table keeps the most recent rounds (and the best one): long sessions stay short.
constexpr size_t kProgressTableRows = 10;

// The speedup a target is measured in: against nvcc, or against the library where asked.
double speedup_toward_target(const RoundSummary& s, SpeedupBase base);
// Verified on a GPU with a measured speedup against `base`: the only rounds whose speed counts.
bool timed_toward(const RoundSummary& s, SpeedupBase base);
// Whether `r` is a better kernel than `than`: verified over not; among verified, a timed GPU
// verdict over an untimed one (a round verified on the CPU engine alone is faster than nothing),
// then the higher speedup, then a GPU verdict over the engine's; among the rest, assembled over
// not. The session's best and the feedback's "best so far" are both chosen by this.
bool better_round(const RoundSummary& r, const RoundSummary& than, SpeedupBase base);

// The "## Your rounds so far" section for the round `current`, given the trajectory's earlier
// rounds in order: a table of the rounds, the change in speed since the previous timed round,
// and, when this round regressed beyond kRegressionMargin or failed after a verified round, the
// best verified round named as the base for the next attempt (with its kernel text, read from
// its candidate file, when the whole section stays within max_chars). "" for the first round.
std::string progress_section(const std::vector<RoundSummary>& earlier, const RoundSummary& current, SpeedupBase base,
                             size_t max_chars = kProgressMaxChars);

}  // namespace ptxforge::agent
