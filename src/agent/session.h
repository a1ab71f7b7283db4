// A compile session on disk: everything a round produced, so a session can be resumed after
// a crash, a budget stop or a manual reply, and inspected later.
//   <session>/session.json              the options the session was started with
//   <session>/[sample-K/]round-NN/      messages.json (exactly what was sent), prompt.md,
//                                       reply.md, reply.json (usage), candidate.ptx|.cu,
//                                       result.json (the run record), round.json (summary),
//                                       feedback.md
//   <session>/best.ptx, best.cubin, report.json, transcript.md
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llm/provider.h"
#include "util/result.h"

namespace ptxforge::agent {

// The summary of one evaluated round, enough to pick the best and to resume.
struct RoundSummary {
  int round = 0;         // 1-based
  int sample = 1;
  std::string verdict;   // one line
  std::string stage;     // the stage that failed, "" when none
  bool extracted = false, passed = false, gpu_verified = false, assembled = false;
  bool no_gpu = false;   // verify was skipped: no GPU here
  double speedup_vs_nvcc = 0, speedup_vs_library = 0;  // geometric means over timed size sets
  int registers = 0, spill_bytes = 0;
  long prompt_tokens = 0, completion_tokens = 0;
  bool cached = false;
  std::string candidate;  // path of candidate.ptx / .cu
};

std::string round_dir(const std::string& trajectory_dir, int round);
Status save_messages(const std::string& dir, const std::vector<llm::Message>& msgs);
Result<std::vector<llm::Message>> load_messages(const std::string& dir);
std::string render_conversation(const std::vector<llm::Message>& msgs);  // Markdown
Status save_round(const std::string& dir, const RoundSummary& s);
std::optional<RoundSummary> load_round(const std::string& dir);
bool file_exists(const std::string& path);

}  // namespace ptxforge::agent
