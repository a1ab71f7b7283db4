// Repair pairs from compile sessions, and the chat-format export with its splits and card.
#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "agent/feedback.h"
#include "agent/session_layout.h"
#include "agent/session_reader.h"
#include "data/dataset.h"
#include "util/text.h"

namespace ptxforge::data {

namespace fs = std::filesystem;
using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

bool fixed(const agent::RoundSummary& before, const agent::RoundSummary& after) {
  if (before.passed || !before.extracted) return false;
  if (after.passed) return true;  // verified, on a GPU or on the CPU engine
  // Nothing verified it (no GPU, no engine): a module that did not assemble, then one that did.
  return after.no_gpu && after.assembled && !before.assembled;
}

const char* kSystem =
    "You are a compiler backend for NVIDIA GPUs: you write PTX (NVIDIA's virtual ISA) that ptxas accepts and that "
    "computes exactly what is asked.";

// A round's verdict for training data: as the model was told it (agent::verdict_in_feedback),
// never the session summary's, which names held-back size sets and their numbers for a person.
std::string model_verdict(const agent::SessionReader& session, const agent::SessionRound& r) {
  auto feedback = session.feedback(r);
  std::string v = feedback ? agent::verdict_in_feedback(*feedback) : "";
  return v.empty() && !r.summary.extracted ? r.summary.verdict : v;  // without a run the summary's verdict holds no sizes
}

uint64_t split_hash(const std::string& id, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

// Every folder under the roots holding a session.json, sorted.
std::vector<std::string> find_sessions(const std::vector<std::string>& roots) {
  std::vector<std::string> out;
  for (auto& root : roots) {
    std::error_code ec;
    if (fs::exists(agent::layout::session_options(root))) out.push_back(root);
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory() && fs::exists(agent::layout::session_options(it->path().string())))
        out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The task of a session as session.json names it ("level1/saxpy", or a path's last folder).
std::string session_task(const std::string& session) {
  auto reader = agent::SessionReader::open(session);
  return reader ? reader->task() : "";
}

Result<std::vector<std::string>> make_fixit_pairs(const std::vector<std::string>& roots, FixitStats& stats) {
  std::vector<std::string> out;
  for (auto& session : find_sessions(roots)) {
    ++stats.sessions;
    auto reader = agent::SessionReader::open(session);
    if (!reader) {
      stats.skipped.push_back(reader.error().message);
      continue;
    }
    const std::string& task = reader->task();
    for (auto& traj : reader->trajectories()) {
      for (auto& issue : traj.issues)
        if (agent::hides_rounds(issue.kind))
          stats.skipped.push_back(issue.message);
      // A pair is two rounds in a row: across a gap the model saw other feedback.
      for (size_t i = 0; i + 1 < traj.rounds.size(); ++i) {
        const agent::SessionRound &a = traj.rounds[i], &b = traj.rounds[i + 1];
        if (b.round != a.round + 1 || !fixed(a.summary, b.summary)) continue;
        auto failed = reader->candidate(a), repaired = reader->candidate(b);
        auto feedback = reader->feedback(a);
        if (!failed || failed->cuda || !repaired || repaired->cuda || !feedback) continue;  // a CUDA candidate, or a round without feedback
        ++stats.pairs;
        out.push_back(dump(ojson{{"kind", "fixit"}, {"source_id", "task:" + task}, {"task", task},
                                 {"session", fs::path(session).filename().string()}, {"sample", traj.sample}, {"round", a.round},
                                 {"failed_verdict", model_verdict(*reader, a)}, {"fixed_verdict", model_verdict(*reader, b)},
                                 {"verified", b.summary.passed},
                                 {"verified_by", !b.summary.passed ? "none" : b.summary.gpu_verified ? "gpu" : "cpu_engine"},
                                 {"failed_ptx", failed->text},
                                 {"feedback", *feedback}, {"fixed_ptx", repaired->text}}));
      }
    }
  }
  return out;
}

Result<ExportStats> export_chat(const std::vector<std::string>& inputs, const std::string& out_dir, uint64_t seed) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", out_dir, ec.message())};
  std::map<std::string, std::vector<std::string>> split_lines;  // train/valid/test -> lines
  std::map<std::string, std::map<std::string, int>> counts;     // dimension -> value -> examples
  std::map<std::string, std::string> split_of_source;
  for (auto& input : inputs) {
    auto text = read_file(input);
    if (!text) return Error{fmt::format("cannot read {}: {}", input, text.error().message)};
    int line_no = 0;
    for (std::string_view line : split(*text, '\n')) {
      ++line_no;
      if (trim(line).empty()) continue;
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) return Error{fmt::format("{}:{}: not a JSON object", input, line_no)};
      std::string kind = j.value("kind", ""), user, assistant;
      if (kind == "pair") {
        // A module without source (PTX from a library's fatbin) is no source->PTX example; its
        // mutants are examples through `data mutate`.
        if (!j.value("assembles", false) || j.value("cuda", "").empty()) continue;
        user = fmt::format("Compile this CUDA C++ to PTX for {} (as nvcc {} would).\n\n```cuda\n{}\n```", j.value("arch", ""),
                           j.value("flags", ""), j.value("cuda", ""));
        assistant = fmt::format("```ptx\n{}```", j.value("ptx", ""));
      } else if (kind == "good" || kind == "mutant") {
        user = fmt::format("Fix this PTX module for {} if it has errors, and answer with the complete module.\n\n```ptx\n{}```",
                           j.value("arch", ""), kind == "good" ? j.value("ptx", "") : j.value("ptx", ""));
        assistant = kind == "good" ? fmt::format("It has no errors.\n\n```ptx\n{}```", j.value("ptx", ""))
                                   : fmt::format("{}\n\n```ptx\n{}```", j.value("explanation", ""), j.value("fixed", ""));
      } else if (kind == "fixit") {
        user = fmt::format("Your PTX for the task {} failed.\n\n```ptx\n{}```\n\nThe toolchain said:\n{}", j.value("task", ""),
                           j.value("failed_ptx", ""), j.value("feedback", ""));
        assistant = fmt::format("```ptx\n{}```", j.value("fixed_ptx", ""));
      } else {
        return Error{fmt::format("{}:{}: unknown kind '{}' (pair, good, mutant, fixit)", input, line_no, kind)};
      }
      std::string source = j.value("source_id", "");
      uint64_t h = split_hash(source, seed) % 10;
      std::string which = h == 0 ? "test" : h == 1 ? "valid" : "train";
      split_of_source[source] = which;
      ojson example = {{"messages",
                        {{{"role", "system"}, {"content", kSystem}}, {{"role", "user"}, {"content", user}},
                         {{"role", "assistant"}, {"content", assistant}}}},
                       {"kind", kind},
                       {"source_id", source}};
      split_lines[which].push_back(dump(example));
      ++counts["kind"][kind];
      ++counts["split"][which];
      if (j.contains("arch")) ++counts["arch"][j.value("arch", "")];
      if (j.contains("origin")) ++counts["origin"][j.value("origin", "")];
      if (kind == "mutant") ++counts["defect"][j.value("defect", "")];
      if (kind == "pair" && !j.value("family", "").empty()) ++counts["family"][j.value("family", "")];
    }
  }
  ExportStats st;
  for (auto which : {"train", "valid", "test"}) {
    std::string body;
    for (auto& l : split_lines[which]) body += l + "\n";
    if (auto s = write_file(out_dir + "/" + which + ".jsonl", body); !s) return s.error();
  }
  st.train = static_cast<int>(split_lines["train"].size());
  st.valid = static_cast<int>(split_lines["valid"].size());
  st.test = static_cast<int>(split_lines["test"].size());
  std::string card = fmt::format("# Dataset card\n\n{} examples: {} train, {} valid, {} test, from {} sources (split by a "
                                 "hash of the source id with seed {}: no source is in two splits).\n\n",
                                 st.train + st.valid + st.test, st.train, st.valid, st.test, split_of_source.size(), seed);
  for (auto& [dim, values] : counts) {
    card += fmt::format("## By {}\n\n| {} | examples |\n|---|---|\n", dim, dim);
    for (auto& [v, n] : values) card += fmt::format("| {} | {} |\n", v.empty() ? "(none)" : v, n);
    card += "\n";
  }
  card += "## How it was made\n\n"
          "- pair: nvcc compiled the CUDA source for the target with the flags; ptxas assembled the PTX (resources kept in "
          "the pairs file); duplicates of an earlier PTX (same normalised text) were dropped.\n"
          "- good / mutant: a one-line defect in a good module, kept when ptxas or ptxforge's front end rejects it; the "
          "answer explains the defect from the diagnostic and gives the original module.\n"
          "- fixit: a compile-session round that failed, the toolchain's feedback on it, and the next round that fixed it.\n"
          "Inputs: " + fmt::format("{}", fmt::join(inputs, ", ")) + ".\n";
  if (auto s = write_file(out_dir + "/card.md", card); !s) return s.error();
  st.card = card;
  return st;
}

}  // namespace ptxforge::data
