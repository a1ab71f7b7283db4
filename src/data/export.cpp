// Repair pairs from compile sessions, and the chat-format export with its splits and card.
#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "agent/feedback.h"
#include "agent/session.h"
#include "agent/session_layout.h"
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
  if (after.passed && after.gpu_verified) return true;
  // Without a GPU: a module that did not assemble, then one that did.
  return after.no_gpu && after.assembled && !before.assembled;
}

const char* kSystem =
    "You are a compiler backend for NVIDIA GPUs: you write PTX (NVIDIA's virtual ISA) that ptxas accepts and that "
    "computes exactly what is asked.";

// A round's verdict for training data: as the model was told it (agent::verdict_in_feedback),
// never the session summary's, which names held-back size sets and their numbers for a person.
std::string model_verdict(const agent::RoundSummary& s, const std::string& round_dir) {
  auto feedback = read_file(agent::layout::feedback(round_dir));
  std::string v = feedback ? agent::verdict_in_feedback(*feedback) : "";
  return v.empty() && !s.extracted ? s.verdict : v;  // without a run the summary's verdict holds no sizes
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
  auto text = read_file(agent::layout::session_options(session));
  if (!text) return "";
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("task") || !j["task"].is_object()) return "";
  if (j["task"].contains("suite")) return j["task"].value("suite", "");
  return fs::path(j["task"].value("path", "")).filename().string();
}

Result<std::vector<std::string>> make_fixit_pairs(const std::vector<std::string>& roots, FixitStats& stats) {
  std::vector<std::string> out;
  for (auto& session : find_sessions(roots)) {
    ++stats.sessions;
    std::string task = session_task(session);
    auto opts_text = read_file(agent::layout::session_options(session));
    auto opts = json::parse(opts_text ? *opts_text : std::string("{}"), nullptr, false);
    int samples = opts.is_object() ? opts.value("samples", 1) : 1;
    for (int k = 1; k <= samples; ++k) {
      std::string traj = agent::layout::trajectory(session, k, samples);
      for (int r = 1; r < 100; ++r) {
        std::string a = agent::layout::round(traj, r), b = agent::layout::round(traj, r + 1);
        auto before = agent::load_round(a), after = agent::load_round(b);
        if (!before || !after) break;
        if (!fixed(*before, *after)) continue;
        auto failed_ptx = read_file(agent::layout::candidate(a, false)), fixed_ptx = read_file(agent::layout::candidate(b, false));
        auto feedback = read_file(agent::layout::feedback(a));
        if (!failed_ptx || !fixed_ptx || !feedback) continue;  // a CUDA candidate, or a round without feedback
        ++stats.pairs;
        out.push_back(dump(ojson{{"kind", "fixit"}, {"source_id", "task:" + task}, {"task", task},
                                 {"session", fs::path(session).filename().string()}, {"sample", k}, {"round", r},
                                 {"failed_verdict", model_verdict(*before, a)}, {"fixed_verdict", model_verdict(*after, b)},
                                 {"verified", after->passed && after->gpu_verified}, {"failed_ptx", *failed_ptx},
                                 {"feedback", *feedback}, {"fixed_ptx", *fixed_ptx}}));
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
