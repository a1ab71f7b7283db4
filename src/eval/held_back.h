// What a model may read about a held-back size set: that something failed there and what
// kind of failure it was, never a number that depends on the set's sizes. Element counts,
// mismatch counts, indices, expected and actual values, errors, byte offsets in guard
// messages, grid sizes in hints and offsets in fault messages would each let a model read
// the held-back sizes back over a few rounds and then special-case them. Every model-facing
// rendering of a held-back case (the stage's model summary, feedback.md and so the next
// prompt, exported training data) goes through these functions; the person's report and
// result.json keep the full detail.
//
// The rule is general rather than a list of known messages: a text reaches the model only as
// its leading clause, and only when that clause holds no digit outside a quoted name of one
// of the task's parameters (names come from the task file, not from the sizes). A message
// with a number in its clause becomes its class, a fixed sentence.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpu/measurement.h"
#include "task/compare.h"
#include "task/task_spec.h"

namespace ptxforge::eval {

// The leading clause of `text` (up to its first ':', '(', ';' or line end), trimmed, when it
// holds no digit outside a quoted name of a parameter of `task`; else "".
std::string number_free_clause(std::string_view text, const task::Task& task);

// The class of a wrong output, no number in it: "the output was never written", "part of the
// output was never written", "NaN values where the reference is finite", "only a leading part
// of the output is correct: ...", or the hint itself where it holds no number.
std::string hint_class(const task::Comparison& c, const task::Task& task);

// A failing held-back case for a model, one line per problem and per wrong output, in the
// words of the classes above.
std::vector<std::string> held_back_case_lines(const gpu::CaseResult& c, const task::Task& task);

// A runtime failure on a held-back size for a model: "fault: out-of-bounds access near buffer
// 'c'" (its kind and its message's clause), or its kind and a fixed sentence.
std::string held_back_failure_text(const gpu::Failure& f, const task::Task& task);

// A sanitizer's verdict that involved a held-back size set, for a model: the tool's name
// first, then the clauses of its report that hold no number.
std::string held_back_sanitizer_text(std::string_view model_summary, const task::Task& task);

}  // namespace ptxforge::eval
