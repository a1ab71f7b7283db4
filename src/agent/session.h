// A compile session on disk: everything a round produced, so a session can be resumed after
// a crash, a budget stop or a manual reply, and inspected later. The files and their names
// are in agent/session_layout.h. session.json holds the options the session was started with
// (their keys are the option table's, agent/options.h; the task by its suite name or by a path
// relative to the session, so a session moves between machines with the checkout elsewhere).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/provider.h"
#include "util/result.h"

namespace ptxforge::agent {

struct CompileOptions;

// Where a session stands. report.json and the summary spell it as to_string does (a stopped
// session adds its reason: "stopped: ...").
enum class SessionStatus { verified, assembled_not_verified, not_verified, pending, stopped };
std::string_view to_string(SessionStatus s);
std::optional<SessionStatus> session_status_from_string(std::string_view s);

// The summary of one evaluated round, enough to pick the best and to resume.
struct RoundSummary {
  int round = 0;         // 1-based
  int sample = 1;
  std::string verdict;   // one line
  std::string stage;     // the stage that failed, "" when none
  bool extracted = false, passed = false, gpu_verified = false, assembled = false;
  bool no_gpu = false;   // verify was skipped: no GPU here
  bool on_engine = false;  // verify ran on the CPU engine, not on a GPU (docs/emu.md)
  double speedup_vs_nvcc = 0, speedup_vs_library = 0;  // geometric means over timed size sets
  int registers = 0, spill_bytes = 0;
  long prompt_tokens = 0, completion_tokens = 0;
  bool cached = false;
  std::string candidate;  // path of candidate.ptx / .cu
  uint64_t seed = 0;      // the round's base seed: `ptxforge run --seed` with it evaluates the round again
  int gpu = -1;           // the GPU (ordinal) that verified it; -1 when none did
};

Status save_messages(const std::string& dir, const std::vector<llm::Message>& msgs);
Result<std::vector<llm::Message>> load_messages(const std::string& dir);
std::string render_conversation(const std::vector<llm::Message>& msgs);  // Markdown
Status save_round(const std::string& dir, const RoundSummary& s);
std::optional<RoundSummary> load_round(const std::string& dir);
bool file_exists(const std::string& path);

// session.json's text for these options (everything but the session folder itself).
std::string session_options_json(const CompileOptions& o);
// Reads session.json's text back; the task folder is found again from its saved reference.
Result<CompileOptions> session_options_from(std::string_view text, const std::string& session_dir);

// The task as session.json names it: {"suite": "level1/saxpy"} for a task of the suite,
// else {"path": "<relative to the session folder>"}.
std::string task_reference_json(const std::string& task_dir, const std::string& session_dir);
Result<std::string> resolve_task_reference(std::string_view reference_json, const std::string& session_dir);

// Every option checked before a session folder is created: the task loads, the model spec
// names a provider it can build (API keys aside: a session waits for them and resumes), the
// hardware profile and the architecture exist, and the numbers are in range.
Status validate_options(const CompileOptions& o);

// Claims a fresh session folder `base`, or `base-2`, `base-3`, ... when taken: the folder is
// created here, so two sessions started in the same second cannot share one.
Result<std::string> claim_session_dir(const std::string& base);

}  // namespace ptxforge::agent
