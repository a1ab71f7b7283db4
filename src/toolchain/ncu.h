// Nsight Compute as a second witness for the executed proof (`run --prove ncu`): the verify job
// runs once more in a worker started under ncu, which profiles the candidate's launches of
// one case with the SourceCounters section; the report's SASS page gives, per machine
// instruction, how often warps executed it and how many threads had its predicate on. Summed
// per opcode, these are compared with the instrumented copy's counts (eval/prove.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ptxforge::toolchain {

// What ncu counted for one opcode (the mnemonic with its modifiers, e.g. "HMMA.16816.F32").
struct OpcodeCounts {
  uint64_t warp_executions = 0;  // "Instructions Executed"
  uint64_t predicated_on = 0;    // "Predicated-On Thread Instructions Executed"
};
using SourceCounters = std::map<std::string, OpcodeCounts, std::less<>>;

// The argv that runs `worker_argv` under ncu, profiling the first `launches` launches of the
// entries named (exact names) into `report` (ncu adds ".ncu-rep").
std::vector<std::string> ncu_profile_argv(const std::string& ncu, const std::string& report,
                                          const std::vector<std::string>& entries, int launches,
                                          const std::vector<std::string>& worker_argv);

// Reads the SASS source page of a report (`ncu -i REPORT --page source --csv --print-source sass`).
Result<SourceCounters> read_source_counters(const std::string& ncu, const std::string& report_file);

// The CSV of that page, summed per opcode over every kernel in it. An error when no row has
// the columns this needs (the format changed, or the page is empty).
Result<SourceCounters> parse_source_counters_csv(std::string_view csv);

// One CSV record's fields as ncu writes them ("a","b,c","d""e" -> a | b,c | d"e); `line` holds no newline.
std::vector<std::string> csv_fields(std::string_view line);
// `s` matched literally inside an ncu --kernel-name regex.
std::string regex_escape(std::string_view s);

// Summed over every opcode that is `prefix` or begins with it and a dot (as SassListing::count).
OpcodeCounts counts_for(const SourceCounters& c, std::string_view prefix);

}  // namespace ptxforge::toolchain
