// The run record a service client reads. A client of `ptxforge serve` is, as often as not, a
// training loop whose reward is the verdict, so it reads the record as the model would: the
// same JSON as `ptxforge run --json` (eval/record.h), minus everything that depends on the
// sizes of a held-back size set. Without this a client could read the held-back sizes back
// from counts, indices, offsets, timings of phases or instruction counts, and special-case
// them. The rules (docs/serve.md, "the record"):
//   - stage summaries and the verdict are the model's text (StageResult::text(Audience::model));
//     a passing verify says how many cases passed and on which shown sets, nothing more;
//   - a verify case on a held-back set keeps only {"size_set": "held-back", "shown": false,
//     "pass", "problems"}, the problems in the words of eval/held_back.h;
//   - verify's seconds, phases, counts and summed execution counters are left out;
//   - a failure on a held-back set is its kind and class (held_back_failure_text);
//   - the proofs keep where a family was found, not how often it ran (the counts and the
//     [min_work] floors are sums and maxima over held-back cases);
//   - held-back set names appear nowhere, and no server path does (the candidate's private
//     folder, the task's folder).
#pragma once

#include <string>

#include "eval/record.h"
#include "task/task_spec.h"

namespace ptxforge::serve {

// The record's JSON for the model audience; `task` is the task the record is a run of.
std::string render_model_record(const eval::RunRecord& record, const task::Task& task);

}  // namespace ptxforge::serve
