#include "agent/session.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/compile.h"
#include "agent/hardware.h"
#include "agent/options.h"
#include "agent/session_layout.h"
#include "task/seeds.h"
#include "task/task_spec.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
constexpr std::pair<SessionStatus, std::string_view> kSessionStatuses[] = {
    {SessionStatus::verified, "verified"},
    {SessionStatus::assembled_not_verified, "assembled, NOT verified on a GPU"},
    {SessionStatus::not_verified, "not verified"},
    {SessionStatus::pending, "pending"},
    {SessionStatus::stopped, "stopped"}};
}  // namespace

std::string_view to_string(SessionStatus s) {
  for (auto& [status, name] : kSessionStatuses)
    if (status == s) return name;
  return "?";
}

std::optional<SessionStatus> session_status_from_string(std::string_view s) {
  for (auto& [status, name] : kSessionStatuses)
    if (name == s) return status;
  return std::nullopt;
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}


Status save_messages(const std::string& dir, const std::vector<llm::Message>& msgs) {
  json j = json::array();
  for (auto& m : msgs) j.push_back({{"role", m.role}, {"content", m.content}});
  if (auto s = write_file(layout::messages(dir), j.dump(1)); !s) return s;
  return write_file(layout::prompt(dir), render_conversation(msgs));
}

Result<std::vector<llm::Message>> load_messages(const std::string& dir) {
  auto text = read_file(layout::messages(dir));
  if (!text) return text.error();
  try {
    std::vector<llm::Message> out;
    for (auto& m : json::parse(*text)) out.push_back({m.at("role"), m.at("content")});
    return out;
  } catch (const std::exception& e) {
    return Error{fmt::format("{} is damaged: {}", layout::messages(dir), e.what())};
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
            {"on_engine", s.on_engine},
            {"speedup_vs_nvcc", s.speedup_vs_nvcc},
            {"speedup_vs_library", s.speedup_vs_library},
            {"registers", s.registers},
            {"spill_bytes", s.spill_bytes},
            {"prompt_tokens", s.prompt_tokens},
            {"completion_tokens", s.completion_tokens},
            {"cached", s.cached},
            {"gpu", s.gpu},
            {"seed", task::seed_text(s.seed)},  // a string: 64 bits lose digits in many JSON readers
            {"candidate", std::filesystem::path(s.candidate).filename().string()}};  // relative: sessions move
  return write_file(layout::summary(dir), j.dump(2));
}

std::optional<RoundSummary> load_round(const std::string& dir) {
  auto text = read_file(layout::summary(dir));
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
    s.on_engine = j.value("on_engine", false);
    s.speedup_vs_nvcc = j.value("speedup_vs_nvcc", 0.0);
    s.speedup_vs_library = j.value("speedup_vs_library", 0.0);
    s.registers = j.value("registers", 0);
    s.spill_bytes = j.value("spill_bytes", 0);
    s.prompt_tokens = j.value("prompt_tokens", 0L);
    s.completion_tokens = j.value("completion_tokens", 0L);
    s.cached = j.value("cached", false);
    s.gpu = j.value("gpu", -1);
    if (auto seed = task::parse_seed(j.value("seed", "0")); seed) s.seed = *seed;
    // Saved as a file name in the round's folder (older sessions saved a path): found again
    // wherever the session now lies.
    std::string candidate = j.value("candidate", "");
    if (!candidate.empty()) s.candidate = dir + "/" + std::filesystem::path(candidate).filename().string();
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged summary: the round is evaluated again
  }
}

namespace {

fs::path absolute_of(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return a.empty() ? fs::path(p) : a;
}

// `inner` relative to `outer` when it lies inside it, else empty.
std::string inside(const fs::path& inner, const fs::path& outer) {
  fs::path rel = inner.lexically_relative(outer);
  if (rel.empty() || *rel.begin() == "..") return "";
  return rel.generic_string();
}

}  // namespace

std::string task_reference_json(const std::string& task_dir, const std::string& session_dir) {
  fs::path task = absolute_of(task_dir);
  if (auto data = data_dir()) {
    std::string in_suite = inside(task, absolute_of(*data + "/tasks"));
    if (!in_suite.empty()) return json({{"suite", in_suite}}).dump();
  }
  return json({{"path", task.lexically_relative(absolute_of(session_dir)).generic_string()}}).dump();
}

Result<std::string> resolve_task_reference(std::string_view reference_json, const std::string& session_dir) {
  json ref;
  try {
    ref = json::parse(reference_json);
  } catch (const std::exception& e) {
    return Error{fmt::format("the task reference is damaged: {}", e.what())};
  }
  std::error_code ec;
  if (ref.contains("suite")) {
    std::string name = ref["suite"].get<std::string>();
    auto data = data_dir();
    if (!data) return Error{fmt::format("the session's task is the suite's '{}', but no data directory was found "
                                        "(set PTXFORGE_DATA_DIR to the folder that holds tasks/)", name)};
    std::string dir = *data + "/tasks/" + name;
    if (!fs::exists(dir + "/task.toml", ec)) return Error{fmt::format("the session's task '{}' is not in {}/tasks", name, *data)};
    return dir;
  }
  if (ref.contains("path")) {
    std::string rel = ref["path"].get<std::string>();
    fs::path dir = fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(session_dir) / rel;
    dir = dir.lexically_normal();
    if (!fs::exists(dir / "task.toml", ec))
      return Error{fmt::format("the session's task folder {} (saved as '{}', relative to the session) has no task.toml; "
                               "move the task beside the session as it was", dir.string(), rel)};
    return dir.string();
  }
  return Error{"the task reference names neither a suite task nor a path"};
}

std::string session_options_json(const CompileOptions& o) {
  json j = json::object();
  j["task"] = json::parse(task_reference_json(o.task_dir, o.out));
  for (auto& row : option_rows())
    if (!row.session_key.empty()) j[std::string(row.session_key)] = row.save(o);
  return j.dump(2);
}

Result<CompileOptions> session_options_from(std::string_view text, const std::string& session_dir) {
  auto damaged = [&](const std::string& why) {
    return Error{fmt::format("{} is damaged: {}", layout::session_options(session_dir), why)};
  };
  try {
    json j = json::parse(text);
    CompileOptions o;
    o.out = session_dir;
    if (j.contains("task")) {
      auto dir = resolve_task_reference(j["task"].dump(), session_dir);
      if (!dir) return dir.error();
      o.task_dir = *dir;
    } else if (j.contains("task_dir")) {  // sessions saved before the task was saved portably
      o.task_dir = j["task_dir"].get<std::string>();
    } else {
      return damaged("no task");
    }
    if (!j.contains("model")) return damaged("no model");
    // In the table's order: "arch" sets the run's target too, so a session saved before
    // run_arch was its own key runs for the prompt's target. A key missing from an older
    // session keeps CompileOptions' default.
    for (auto& row : option_rows()) {
      std::string key(row.session_key);
      if (key.empty() || !j.contains(key)) continue;
      Status s = ok_status();
      try {
        s = row.load(o, j[key]);
      } catch (const std::exception& e) {  // a value of the wrong JSON type
        s = Error{e.what()};
      }
      if (!s) return damaged(fmt::format("'{}': {}", key, s.error().message));
    }
    return o;
  } catch (const std::exception& e) {
    return damaged(e.what());
  }
}

Status validate_options(const CompileOptions& o) {
  auto t = task::load_task(o.task_dir);
  if (!t) return t.error();
  if (auto s = check_hardware_profile(o.hardware_profile); !s) return s.error();
  for (const std::string* arch : {&o.prompt.arch, &o.run.arch}) {
    CompileOptions scratch;
    if (auto s = option_row(Option::arch).parse(scratch, *arch, "--arch"); !s) return s;
  }
  // The ranges of the numbers (--rounds, --max-tokens, ...), from the option table.
  if (auto s = check_ranges(o); !s) return s;
  if (o.target_speedup > 0 && o.target_base == SpeedupBase::library && !t->baseline)
    return Error{fmt::format("task {} has no library baseline: give --target-speedup relative to nvcc (e.g. 1.2x)", t->name)};
  if (o.prices.known && (o.prices.input_per_mtok < 0 || o.prices.output_per_mtok < 0))
    return Error{"--price takes two numbers that are not negative, e.g. 2.5,10"};
  // The model spec: a provider that can be built. A missing API key is not an error here: the
  // session is kept and resumes once the key is set.
  size_t colon = o.model.find(':');
  std::string kind = o.model.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : o.model.substr(colon + 1);
  if ((kind == "openai" || kind == "anthropic") && !rest.empty()) return ok_status();
  llm::ProviderOptions po;
  po.manual_dir = o.out;
  if (auto p = llm::make_provider(o.model, po); !p) return p.error();
  return ok_status();
}

Result<std::string> claim_session_dir(const std::string& base) {
  std::error_code ec;
  fs::path parent = fs::path(base).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  for (int k = 1; k < 1000; ++k) {
    std::string dir = k == 1 ? base : fmt::format("{}-{}", base, k);
    if (fs::create_directory(dir, ec)) return dir;  // created now: no other session has it
    if (ec) return Error{fmt::format("cannot create the session folder {}: {}", dir, ec.message())};
  }
  return Error{fmt::format("cannot find a free session folder beside {}", base)};
}

}  // namespace ptxforge::agent
