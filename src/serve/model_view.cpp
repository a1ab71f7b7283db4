// The record for the model audience (model_view.h). The typed record is reduced first (stage
// texts, the failure, the notes), rendered with the one JSON printer, and then the JSON loses
// what only the person's form carries (held-back cases' detail, phases, counts). A last pass
// over every string takes out held-back set names and server paths wherever a message quoted
// them, so a message added to a stage later cannot reopen the hole.
#include "serve/model_view.h"

#include <cmath>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "eval/held_back.h"

namespace ptxforge::serve {

namespace {

using nlohmann::json;

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `text` with every whole-word `word` replaced by `with`.
std::string replace_word(const std::string& text, const std::string& word, const std::string& with) {
  if (word.empty()) return text;
  std::string out;
  size_t at = 0;
  while (true) {
    size_t hit = text.find(word, at);
    if (hit == std::string::npos) break;
    bool left = hit == 0 || !word_char(text[hit - 1]);
    bool right = hit + word.size() >= text.size() || !word_char(text[hit + word.size()]);
    out.append(text, at, hit - at);
    out += left && right ? with : word;
    at = hit + word.size();
  }
  out.append(text, at, std::string::npos);
  return out;
}

std::string replace_all(std::string text, const std::string& what, const std::string& with) {
  if (what.empty()) return text;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
  return text;
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// What every string of the record goes through last.
struct Scrub {
  std::vector<std::string> held_back_names;  // held-back size sets that are no shown set's or parameter's name
  std::vector<std::string> prefixes;         // server folders, removed where a message names a file in them
  std::vector<std::pair<std::string, std::string>> texts;  // a held-back failure's own words -> its class
  std::regex run_dirs{R"(/[^\s'":()]*ptxforge-[A-Za-z0-9_-]*-[A-Za-z0-9]{6}/)"};  // TempDir's folders

  std::string operator()(std::string s) const {
    for (auto& [from, to] : texts) s = replace_all(std::move(s), from, to);
    for (auto& p : prefixes) s = replace_all(std::move(s), p, "");
    s = std::regex_replace(s, run_dirs, "");
    for (auto& n : held_back_names) s = replace_word(s, n, "held-back");
    return s;
  }
  void walk(json& j) const {
    if (j.is_string()) j = (*this)(j.get<std::string>());
    else if (j.is_array() || j.is_object())
      for (auto& v : j) walk(v);
  }
};

Scrub scrub_for(const eval::RunRecord& r, const task::Task& t) {
  Scrub s;
  for (auto& set : t.sizes) {
    if (set.shown) continue;
    bool other = t.find_param(set.name) != nullptr;
    for (auto& shown : t.sizes) other = other || (shown.shown && shown.name == set.name);
    if (!other) s.held_back_names.push_back(set.name);
  }
  if (size_t slash = r.candidate.rfind('/'); slash != std::string::npos && slash > 0)
    s.prefixes.push_back(r.candidate.substr(0, slash + 1));
  if (!t.dir.empty()) s.prefixes.push_back(t.dir + "/");
  if (r.failure && r.failure->held_back) {
    std::string cls = eval::held_back_failure_text(*r.failure, t);
    if (!r.failure->message.empty()) s.texts.emplace_back(r.failure->message, cls);
    if (!r.failure->where.empty()) s.texts.emplace_back(r.failure->where, "a held-back size");
  }
  return s;
}

// A passing verify in words that hold no held-back detail: the case counts (the number of
// held-back sets times the seeds, nothing of their sizes) and the shown sets by name.
std::string passing_verify_summary(const eval::RunRecord& r) {
  size_t held = 0;
  std::vector<std::string> shown;
  for (auto& c : r.verify->cases) {
    if (!c.shown) ++held;
    else if (std::find(shown.begin(), shown.end(), c.size_set) == shown.end()) shown.push_back(c.size_set);
  }
  return fmt::format("{} case{} passed ({} on held-back sizes) {}; shown size sets {}", r.verify->cases.size(),
                     r.verify->cases.size() == 1 ? "" : "s", held,
                     r.verify->engine == gpu::Engine::cpu ? "on the CPU engine" : "on a GPU", fmt::join(shown, ", "));
}

// A passing prove names how many warps ran each family, summed over every verify case.
std::string without_counts(std::string s) {
  size_t open = s.find(" (warp executions:");
  if (open == std::string::npos) return s;
  size_t close = s.find(')', open);
  return s.erase(open, close == std::string::npos ? std::string::npos : close - open + 1);
}

// The record with the model's words in it, before it becomes JSON.
eval::RunRecord reduced(const eval::RunRecord& in, const task::Task& t) {
  eval::RunRecord r = in;
  for (auto& s : r.stages) {
    s.summary = s.text(eval::Audience::model);
    if (s.held_back && s.id == eval::StageId::prove) r.executed_note = s.summary;  // it held the person's words
    s.held_back = false;
    s.model_summary.clear();
    if (s.id == eval::StageId::verify && s.status == eval::StageStatus::passed && r.verify && !r.verify->cases.empty())
      s.summary = passing_verify_summary(r);
    if (s.id == eval::StageId::prove && s.status == eval::StageStatus::passed) s.summary = without_counts(s.summary);
  }
  r.candidate = base_name(r.candidate);
  r.source_name = base_name(r.source_name);
  if (r.failure && r.failure->held_back) {
    gpu::Failure f;
    f.kind = r.failure->kind;
    f.message = eval::held_back_failure_text(*r.failure, t);
    f.held_back = true;
    r.failure = f;
  }
  auto held_back_set = [&](const std::string& name) {
    for (auto& s : t.sizes)
      if (s.name == name) return !s.shown;
    return false;
  };
  if (r.limits) std::erase_if(r.limits->rows, [&](const eval::LimitRow& row) { return held_back_set(row.size_set); });
  if (r.profile && held_back_set(r.profile->size_set)) r.profile.reset();
  return r;
}

// The time object's speedups (the geometric mean over the timed sets), only where the time
// stage passed: a speed that was not checked is no speed.
void add_speedups(json& time, const eval::RunRecord& r) {
  const eval::StageResult* st = r.find_stage(eval::StageId::time);
  if (!r.time || !st || st->status != eval::StageStatus::passed) return;
  eval::Speedups sp = eval::speedups(r);
  if (sp.vs_reference > 0) time["speedup_vs_reference"] = sp.vs_reference;
  if (sp.vs_library > 0) time["speedup_vs_library"] = sp.vs_library;
}

}  // namespace

std::string render_model_record(const eval::RunRecord& record, const task::Task& task) {
  eval::RunRecord r = reduced(record, task);
  json j = json::parse(eval::render_report_json(r));
  bool has_held_back = std::any_of(task.sizes.begin(), task.sizes.end(), [](auto& s) { return !s.shown; });
  if (j.contains("verify") && r.verify) {
    json& v = j["verify"];
    // Each of these is a sum over every case, held-back ones included, or scales with their sizes.
    for (const char* key : {"seconds", "phases", "counts", "executed"}) v.erase(key);
    json& cases = v["cases"];
    for (size_t i = 0; i < r.verify->cases.size() && i < cases.size(); ++i) {
      const gpu::CaseResult& c = r.verify->cases[i];
      if (c.shown) continue;
      cases[i] = {{"size_set", "held-back"},
                  {"shown", false},
                  {"pass", c.pass},
                  {"problems", c.pass ? std::vector<std::string>{} : eval::held_back_case_lines(c, task)}};
    }
  }
  if (j.contains("failure") && r.failure && r.failure->held_back) {
    j["failure"] = {{"kind", std::string(gpu::to_string(r.failure->kind))}, {"message", r.failure->message}, {"held_back", true}};
  }
  if (has_held_back && j.contains("proofs"))
    for (auto& p : j["proofs"])
      for (const char* key : {"executed_warps", "executed_work", "min_warps"}) p.erase(key);
  if (j.contains("time")) add_speedups(j["time"], r);
  // Wall times scale with the held-back sizes (verify and prove run every case): a passing
  // candidate that spins in proportion to a size would read it back from them.
  if (has_held_back) {
    j.erase("check_wall_s");
    if (j.contains("stages"))
      for (auto& st : j["stages"]) st.erase("seconds");
  }
  scrub_for(record, task).walk(j);
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace ptxforge::serve
