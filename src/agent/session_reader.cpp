#include "agent/session_reader.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/session_layout.h"
#include "eval/record_json.h"
#include "util/text.h"

namespace ptxforge::agent {

namespace fs = std::filesystem;
using nlohmann::json;

std::string_view to_string(RoundIssueKind k) {
  switch (k) {
    case RoundIssueKind::missing: return "missing";
    case RoundIssueKind::no_summary: return "no summary";
    case RoundIssueKind::unfinished: return "unfinished";
    case RoundIssueKind::no_record: return "no record";
    case RoundIssueKind::beyond: return "beyond the round count";
  }
  return "?";
}

bool hides_rounds(RoundIssueKind k) { return k != RoundIssueKind::unfinished && k != RoundIssueKind::no_record; }

namespace {

// The numbers of the folders in `dir` that `name_of` would name ("round-07" for 7): a folder
// named otherwise ("round-7", "round-x") is not one of the loop's. Ascending.
template <typename NameOf>
std::vector<long> numbered_folders(const std::string& dir, std::string_view prefix, NameOf name_of) {
  std::vector<long> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.size() > prefix.size() + 9 || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string digits = name.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    long n = std::stol(digits);
    if (name_of(n) == name && it->is_directory(ec)) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string base_name(const std::string& path) { return fs::path(path).filename().string(); }

// session.json's count `key` (samples, rounds): a whole number of at least 1, or the
// options' default where an older session.json lacks it.
Result<int> layout_count(const json& j, const char* key, int fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > 1000000000)
    return Error{fmt::format("'{}' is {}, not a whole number of at least 1", key, it->dump())};
  return static_cast<int>(it->get<long long>());
}

}  // namespace

Result<SessionReader> SessionReader::open(const std::string& dir) {
  const std::string path = layout::session_options(dir);
  auto text = read_file(path);
  if (!text) return Error{fmt::format("{} holds no session: cannot read {}: {}", dir, path, text.error().message)};
  auto damaged = [&](const std::string& why) { return Error{fmt::format("{} is damaged: {}", path, why)}; };
  json j;
  try {
    j = json::parse(*text);
  } catch (const std::exception& e) {
    return damaged(e.what());
  }
  if (!j.is_object()) return damaged("not a JSON object");
  const CompileOptions defaults;
  auto samples = layout_count(j, "samples", defaults.samples);
  if (!samples) return damaged(samples.error().message);
  auto rounds = layout_count(j, "rounds", defaults.rounds);
  if (!rounds) return damaged(rounds.error().message);
  SessionReader r(dir, session_options_from(*text, dir));
  r.samples_ = *samples;
  r.rounds_ = *rounds;
  // The task's name as saved: the suite's name, or the folder's last name for a task by path.
  if (auto t = j.find("task"); t != j.end() && t->is_object()) {
    if (auto s = t->find("suite"); s != t->end() && s->is_string()) r.task_ = s->get<std::string>();
    else if (auto p = t->find("path"); p != t->end() && p->is_string()) r.task_ = base_name(p->get<std::string>());
  }
  return r;
}

std::vector<Trajectory> SessionReader::trajectories() const {
  std::vector<Trajectory> out;
  if (samples_ == 1) {
    out.push_back(read_trajectory(1, layout::trajectory(dir_, 1, 1)));
    return out;
  }
  auto sample_name = [&](long k) { return base_name(layout::trajectory(dir_, static_cast<int>(k), samples_)); };
  for (long k : numbered_folders(dir_, "sample-", sample_name))
    if (k >= 1 && k <= samples_) out.push_back(read_trajectory(static_cast<int>(k), layout::trajectory(dir_, static_cast<int>(k), samples_)));
  return out;
}

Trajectory SessionReader::read_trajectory(int sample, const std::string& dir) const {
  Trajectory t;
  t.sample = sample;
  t.dir = dir;
  auto issue = [&](long round, RoundIssueKind kind, std::string message) {
    t.issues.push_back({sample, static_cast<int>(round), kind, std::move(message)});
  };
  auto round_name = [&](long n) { return base_name(layout::round(dir, static_cast<int>(n))); };
  std::vector<long> present;
  for (long n : numbered_folders(dir, "round-", round_name)) {
    if (n >= 1 && n <= rounds_) {
      present.push_back(n);
    } else {
      issue(n, RoundIssueKind::beyond,
            fmt::format("{}: outside the session's rounds (1 to {}): not read", layout::round(dir, static_cast<int>(n)), rounds_));
    }
  }
  long expected = 1;
  for (size_t i = 0; i < present.size(); ++i) {
    const long n = present[i];
    if (n > expected)
      issue(expected, RoundIssueKind::missing,
            n - expected == 1 ? fmt::format("{}: missing, though round {} follows", layout::round(dir, static_cast<int>(expected)), n)
                              : fmt::format("{} to round {}: missing, though round {} follows",
                                            layout::round(dir, static_cast<int>(expected)), n - 1, n));
    expected = n + 1;
    const std::string d = layout::round(dir, static_cast<int>(n));
    const bool last = i + 1 == present.size();
    if (!file_exists(layout::summary(d))) {
      if (last) {
        auto why = read_file(layout::error(d));
        issue(n, RoundIssueKind::unfinished,
              fmt::format("{}: unfinished (no round.json){}", d, why ? ": " + std::string(trim(why->substr(0, why->find('\n')))) : ""));
      } else {
        issue(n, RoundIssueKind::no_summary, fmt::format("{}: no round.json, though round {} follows", d, present[i + 1]));
      }
      continue;
    }
    auto s = load_round(d);
    if (!s) {
      issue(n, RoundIssueKind::no_summary, fmt::format("{}: round.json is damaged", d));
      continue;
    }
    // The folder names the round and the trajectory: summaries written before round.json
    // held its sample say sample 1 in every trajectory.
    s->round = static_cast<int>(n);
    s->sample = sample;
    if (s->extracted && !file_exists(layout::result(d)))
      issue(n, RoundIssueKind::no_record, fmt::format("{}: a candidate was evaluated, but result.json is missing", d));
    t.rounds.push_back({sample, static_cast<int>(n), d, std::move(*s)});
  }
  std::stable_sort(t.issues.begin(), t.issues.end(), [](const RoundIssue& a, const RoundIssue& b) { return a.round < b.round; });
  return t;
}

Result<eval::RunRecord> SessionReader::record(const SessionRound& r) const {
  const std::string path = layout::result(r.dir);
  auto text = read_file(path);
  if (!text) return Error{fmt::format("cannot read {}: {}", path, text.error().message)};
  auto rec = eval::record_from_json(*text);
  if (!rec) return Error{fmt::format("{}: {}", path, rec.error().message)};
  return rec;
}

std::optional<std::string> SessionReader::record_text(const SessionRound& r) const {
  auto text = read_file(layout::result(r.dir));
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

std::optional<RoundCandidate> SessionReader::candidate(const SessionRound& r) const {
  for (bool cuda : {false, true}) {
    std::string path = layout::candidate(r.dir, cuda);
    if (auto text = read_file(path)) return RoundCandidate{path, *text, cuda};
  }
  return std::nullopt;
}

std::optional<std::string> SessionReader::reply(const SessionRound& r) const {
  auto text = read_file(layout::reply(r.dir));
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

std::optional<std::string> SessionReader::feedback(const SessionRound& r) const {
  auto text = read_file(layout::feedback(r.dir));
  return text ? std::optional<std::string>(*text) : std::nullopt;
}

}  // namespace ptxforge::agent
