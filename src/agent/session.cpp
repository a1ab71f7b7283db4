#include "agent/session.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/text.h"

namespace ptxforge::agent {

using nlohmann::json;

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

std::string round_dir(const std::string& trajectory_dir, int round) { return fmt::format("{}/round-{:02}", trajectory_dir, round); }

Status save_messages(const std::string& dir, const std::vector<llm::Message>& msgs) {
  json j = json::array();
  for (auto& m : msgs) j.push_back({{"role", m.role}, {"content", m.content}});
  if (auto s = write_file(dir + "/messages.json", j.dump(1)); !s) return s;
  return write_file(dir + "/prompt.md", render_conversation(msgs));
}

Result<std::vector<llm::Message>> load_messages(const std::string& dir) {
  auto text = read_file(dir + "/messages.json");
  if (!text) return text.error();
  try {
    std::vector<llm::Message> out;
    for (auto& m : json::parse(*text)) out.push_back({m.at("role"), m.at("content")});
    return out;
  } catch (const std::exception& e) {
    return Error{fmt::format("{}/messages.json is damaged: {}", dir, e.what())};
  }
}

std::string render_conversation(const std::vector<llm::Message>& msgs) {
  std::string out;
  for (auto& m : msgs) out += fmt::format("<!-- {} -->\n{}\n\n", m.role, m.content);
  return out;
}

Status save_round(const std::string& dir, const RoundSummary& s) {
  json j = {{"round", s.round},
            {"sample", s.sample},
            {"verdict", s.verdict},
            {"stage", s.stage},
            {"extracted", s.extracted},
            {"passed", s.passed},
            {"gpu_verified", s.gpu_verified},
            {"assembled", s.assembled},
            {"no_gpu", s.no_gpu},
            {"speedup_vs_nvcc", s.speedup_vs_nvcc},
            {"speedup_vs_library", s.speedup_vs_library},
            {"registers", s.registers},
            {"spill_bytes", s.spill_bytes},
            {"prompt_tokens", s.prompt_tokens},
            {"completion_tokens", s.completion_tokens},
            {"cached", s.cached},
            {"candidate", s.candidate}};
  return write_file(dir + "/round.json", j.dump(2));
}

std::optional<RoundSummary> load_round(const std::string& dir) {
  auto text = read_file(dir + "/round.json");
  if (!text) return std::nullopt;
  try {
    json j = json::parse(*text);
    RoundSummary s;
    s.round = j.at("round");
    s.sample = j.value("sample", 1);
    s.verdict = j.at("verdict");
    s.stage = j.value("stage", "");
    s.extracted = j.value("extracted", false);
    s.passed = j.value("passed", false);
    s.gpu_verified = j.value("gpu_verified", false);
    s.assembled = j.value("assembled", false);
    s.no_gpu = j.value("no_gpu", false);
    s.speedup_vs_nvcc = j.value("speedup_vs_nvcc", 0.0);
    s.speedup_vs_library = j.value("speedup_vs_library", 0.0);
    s.registers = j.value("registers", 0);
    s.spill_bytes = j.value("spill_bytes", 0);
    s.prompt_tokens = j.value("prompt_tokens", 0L);
    s.completion_tokens = j.value("completion_tokens", 0L);
    s.cached = j.value("cached", false);
    s.candidate = j.value("candidate", "");
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged summary: the round is evaluated again
  }
}

}  // namespace ptxforge::agent
