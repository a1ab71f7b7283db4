// Instrumentation for the "executed" proof: a copy of a candidate whose required instructions
// each bump a counter as they run. Before every instruction of a required family, under the
// same guard predicate, one lane of each warp that runs it adds 1 to that family's slot of a
// .global array the harness reads after an extra verify run. The inserted code is branch-free
// (activemask, vote.sync.ballot, one predicated red), so it changes no thread's path and is
// safe next to .aligned instructions and inside warp-specialised branches. It goes on the line
// of the instruction it counts, so ptxas's line numbers still point at the candidate's lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptx/ast.h"
#include "util/result.h"

namespace ptxforge::ptx {

// The array's name. A candidate that mentions it (or any name starting with __ptxforge_) is
// refused: it could otherwise declare or write the counters itself.
inline constexpr std::string_view kExecutedSymbol = "__ptxforge_executed";

struct Instrumented {
  std::string ptx;
  std::vector<int> sites;  // per family: how many instructions count into its slot
};

// `source` is the text `m` was parsed from. Slot i of kExecutedSymbol counts families[i]
// (a family matches an opcode that is it or begins with it and a dot, as the prove stage reads).
// Each count adds `increment` (the prove stage draws a secret odd one per run, below 2^31, so
// that a slot the candidate wrote to by address no longer divides by it). The copy's .version
// is raised to 6.2 where it is lower: activemask needs it.
Result<Instrumented> instrument_executed(std::string_view source, const Module& m, const std::vector<std::string>& families,
                                         uint64_t increment = 1);

}  // namespace ptxforge::ptx
