// A compile session read back, typed: its options, its trajectories, the rounds each holds,
// and each round's summary, run record, candidate, reply and feedback. Everything that reads
// a session folder after the loop wrote it (the results store, `data fixit`, `ptxforge
// fixit`) reads it through this type, so the folder's names (agent/session_layout.h), the
// JSON of its files and the round bound are spelled in one place.
//
// The round bound is one rule: the rounds whose folders are on disk, from 1 up to the
// session's own round count (session.json's "rounds"). What does not fit the rule is
// reported as a RoundIssue, never skipped silently: a gap, a folder without its summary, a
// round that evaluated a candidate but has no result.json, a folder past the round count.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/compile.h"
#include "agent/session.h"
#include "eval/record.h"
#include "util/result.h"

namespace ptxforge::agent {

enum class RoundIssueKind {
  missing,     // no folder for the round, though a later round has one: a gap
  no_summary,  // a folder whose round.json is damaged, or absent while a later round exists
  unfinished,  // the last folder, without round.json: the model call failed, a reply is awaited
               // or the run was cut off; a stopped or pending session ends this way
  no_record,   // the round evaluated a candidate (its summary says so), but result.json is missing
  beyond,      // a folder outside 1..the session's round count: not read
};
std::string_view to_string(RoundIssueKind k);
// Whether the issue hides rounds from what reads summaries: a gap, a summary it cannot read,
// a folder past the count. An unfinished last round (a stopped or pending session ends so)
// or a missing record (the summary is still there) hides none.
bool hides_rounds(RoundIssueKind k);

struct RoundIssue {
  int sample = 1, round = 0;
  RoundIssueKind kind = RoundIssueKind::missing;
  std::string message;  // "<round folder>: <what is wrong>"
};

// One round that finished: its folder and its summary (round.json), whose round and sample
// are the folder's.
struct SessionRound {
  int sample = 1, round = 0;
  std::string dir;
  RoundSummary summary;
};

// One trajectory: the session folder itself, or sample-K when there are several.
struct Trajectory {
  int sample = 1;
  std::string dir;
  std::vector<SessionRound> rounds;  // ascending; only rounds that finished
  std::vector<RoundIssue> issues;    // ascending by round
};

// The candidate a round extracted, as it was written.
struct RoundCandidate {
  std::string path, text;
  bool cuda = false;  // candidate.cu rather than candidate.ptx
};

class SessionReader {
 public:
  // Reads session.json. An error when it is missing or not a JSON object, or when the keys
  // the folder's layout depends on (samples, rounds) are not whole numbers of at least 1.
  // The options themselves may still fail to load (a task folder that moved): options() says so.
  static Result<SessionReader> open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  // The task as session.json names it ("level1/saxpy", or a task folder's name); readable
  // even where the task itself is not.
  const std::string& task() const { return task_; }
  int samples() const { return samples_; }
  int round_count() const { return rounds_; }
  // The options, read by agent::session_options_from (the task resolved).
  const Result<CompileOptions>& options() const { return options_; }

  // Every trajectory whose folder exists, by sample, each with its rounds and issues (read
  // from disk on each call).
  std::vector<Trajectory> trajectories() const;

  // A round's files. The record goes through eval::record_from_json: an error names the file.
  // record_text is result.json as written, for a store that keeps it verbatim.
  Result<eval::RunRecord> record(const SessionRound& r) const;
  std::optional<std::string> record_text(const SessionRound& r) const;
  std::optional<RoundCandidate> candidate(const SessionRound& r) const;
  std::optional<std::string> reply(const SessionRound& r) const;
  std::optional<std::string> feedback(const SessionRound& r) const;

 private:
  SessionReader(std::string dir, Result<CompileOptions> options) : dir_(std::move(dir)), options_(std::move(options)) {}
  Trajectory read_trajectory(int sample, const std::string& dir) const;

  std::string dir_;
  Result<CompileOptions> options_;
  std::string task_;
  int samples_ = 1, rounds_ = 1;
};

}  // namespace ptxforge::agent
