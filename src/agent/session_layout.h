// Where a compile session keeps its files: the one place that spells their names. Sessions
// are resumed and inspected from these files, and sessions written by older versions must
// still load, so a name changes here or nowhere.
//   <session>/session.json              the options the session was started with
//   <session>/[sample-K/]round-NN/      messages.json (exactly what was sent), prompt.md,
//                                       reply.md, reply.json (usage), candidate.ptx|.cu,
//                                       result.json (the run record), round.json (summary),
//                                       feedback.md, error.txt (why the model call failed)
//   <session>/best.ptx, best.cu, best.cubin, report.json, transcript.md
#pragma once

#include <fmt/format.h>

#include <string>

namespace ptxforge::agent::layout {

inline std::string session_options(const std::string& session) { return session + "/session.json"; }
// One trajectory's folder: the session itself, or sample-K when there are several.
inline std::string trajectory(const std::string& session, int sample, int samples) {
  return samples == 1 ? session : fmt::format("{}/sample-{}", session, sample);
}
inline std::string round(const std::string& trajectory, int round) { return fmt::format("{}/round-{:02}", trajectory, round); }

// In a round's folder.
inline std::string messages(const std::string& round) { return round + "/messages.json"; }
inline std::string prompt(const std::string& round) { return round + "/prompt.md"; }
inline std::string reply(const std::string& round) { return round + "/reply.md"; }
inline std::string reply_usage(const std::string& round) { return round + "/reply.json"; }
inline std::string candidate(const std::string& round, bool cuda) { return round + (cuda ? "/candidate.cu" : "/candidate.ptx"); }
inline std::string result(const std::string& round) { return round + "/result.json"; }
inline std::string summary(const std::string& round) { return round + "/round.json"; }
inline std::string feedback(const std::string& round) { return round + "/feedback.md"; }
inline std::string error(const std::string& round) { return round + "/error.txt"; }

// The session's outputs.
inline std::string best_ptx(const std::string& session) { return session + "/best.ptx"; }
inline std::string best_cu(const std::string& session) { return session + "/best.cu"; }
inline std::string best_cubin(const std::string& session) { return session + "/best.cubin"; }
inline std::string report(const std::string& session) { return session + "/report.json"; }
inline std::string transcript(const std::string& session) { return session + "/transcript.md"; }

}  // namespace ptxforge::agent::layout
