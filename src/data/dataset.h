// The training sets `ptxforge data` writes, one JSON object per line, deterministic given a
// seed: labelled mutants of good modules (broken/fixed pairs, mixed with good ones), repair
// pairs from compile sessions (a failed round, its feedback, the round that fixed it), the
// ISA table as a dictionary, and the chat-format export with train/valid/test splits by
// source so that nothing leaks across splits. Format: docs/data.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace ptxforge::data {

// A good module to mutate: its PTX, where it came from and its target.
struct GoodModule {
  std::string source_id, arch, flags, ptx;
};
Result<std::vector<GoodModule>> read_good_modules(const std::string& pairs_jsonl);

struct MutateOptions {
  uint64_t seed = 1;
  int bad = 1, good = 4;  // the mix of broken to good examples
};
struct MutateStats {
  int goods = 0, mutants = 0, kept = 0, ptxas_rejects = 0, we_reject = 0, agree = 0;
};
// Labels every one-line mutant with ptxas's verdict and our diagnostics, keeps those that are
// defects (ptxas or we reject them), then mixes them with good modules bad:good. JSONL lines.
Result<std::vector<std::string>> make_mutants(const std::vector<GoodModule>& goods, const MutateOptions& o, MutateStats& stats);

// Every compile session under the roots (session folders, or folders holding them such as a
// bench's), sorted; and a session's task as its session.json names it ("level1/saxpy", or a
// task folder's name).
std::vector<std::string> find_sessions(const std::vector<std::string>& roots);
std::string session_task(const std::string& session);

// Repair pairs from compile session folders (or folders holding sessions, such as a bench's).
struct FixitStats {
  int sessions = 0, pairs = 0;
  std::vector<std::string> skipped;  // sessions that could not be read, and gaps in those that could
};
Result<std::vector<std::string>> make_fixit_pairs(const std::vector<std::string>& roots, FixitStats& stats);

// The ISA table: one JSON object per instruction family.
std::vector<std::string> isa_dictionary();

// Chat-format JSONL (messages: system/user/assistant) split by source into train/valid/test
// (80/10/10 by a seeded hash of the source id), with a dataset card (card.md).
struct ExportStats {
  int train = 0, valid = 0, test = 0;
  std::string card;
};
Result<ExportStats> export_chat(const std::vector<std::string>& inputs, const std::string& out_dir, uint64_t seed);

}  // namespace ptxforge::data
