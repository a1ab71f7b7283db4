// Instrumentation for the "executed" proof: a copy of a candidate whose required instructions
// each bump a counter as they run. Before every instruction of a required family, under the
// same guard predicate, one lane of each warp that runs it adds to a slot of a counter array.
// The array is not in the candidate's module: the worker allocates it and passes its address
// as a hidden last parameter that the copy appends to every entry, so the candidate's own
// variables sit where they sit in the binary that is timed, and nothing at a fixed place in
// its sections can be read or bumped. The inserted code is branch-free (activemask,
// vote.sync.ballot, one predicated red), so it changes no thread's path and is safe next to
// .aligned instructions and inside warp-specialised branches. It goes on the line of the
// instruction it counts, so ptxas's line numbers still point at the candidate's lines.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/ast.h"
#include "util/result.h"

namespace ptxforge::ptx {

// The hidden parameter's name. A candidate that mentions it (or any name starting with
// __ptxforge_) is refused: it could otherwise declare or write the counters itself.
inline constexpr std::string_view kCountersParam = "__ptxforge_counters";

// Instructions that count into one slot: the same families, the same work class.
struct CounterSlot {
  std::vector<size_t> families;  // indices into the families instrument_executed was given
  std::string work;              // the work class every one of its instructions has ("" without a classifier)
  int sites = 0;
};

struct Instrumented {
  std::string ptx;
  std::vector<int> sites;         // per family: how many instructions count for it
  std::vector<CounterSlot> slots; // slot i of the counter array, in order of first appearance
};

// What one instruction's executions are worth, as a class name shared by instructions of equal
// worth (e.g. "mac 65536", "tma tm_a"); the prove stage gives each class its weight.
using WorkClassifier = std::function<std::string(const Function&, const Instruction&)>;

// `source` is the text `m` was parsed from. A family matches an opcode that is it or begins
// with it and a dot, as the prove stage reads. Each count adds `increment` (the prove stage
// draws a secret odd one per run, below 2^31, so that a slot the candidate wrote to by address
// no longer divides by it). The copy's .version is raised where it is lower than the inserted
// code needs (activemask: 6.2; the cluster-rank test of DSMEM accesses: 7.8).
//
// DSMEM accesses (mapa, and ld/st/atom/red on .shared::cluster) count only in lanes whose
// target is another CTA of the cluster: a "cluster" kernel that only ever reaches its own
// shared memory does no cluster work.
//
// A required instruction inside a .func is refused (the counters' address reaches entries
// only), and so is a module without an entry.
Result<Instrumented> instrument_executed(std::string_view source, const Module& m, const std::vector<std::string>& families,
                                         uint64_t increment = 1, const WorkClassifier& classify = {});

}  // namespace ptxforge::ptx
