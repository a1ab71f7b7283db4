// Task bodies for clients, built only from what task::render_task_for_model already shows a
// model, plus the shown sets' names and the required families, so the API can never show more
// of a task than a prompt does.
#include "serve/task_json.h"

#include <nlohmann/json.hpp>

#include "task/baselines.h"
#include "task/task_view.h"

namespace ptxforge::serve {

using json = nlohmann::json;

std::string task_summary(const task::Task& t) {
  std::string s;
  for (char c : t.description) s += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  // The first sentence: up to the first ". " (or the end).
  if (auto stop = s.find(". "); stop != std::string::npos) s.resize(stop + 1);
  auto first = s.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  s = s.substr(first);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > 200) s = s.substr(0, 197) + "...";
  return s;
}

std::string task_list_json(const TaskCatalog& tasks) {
  json list = json::array();
  for (auto& e : tasks.entries()) list.push_back({{"name", e.name}, {"level", e.task.level}, {"summary", task_summary(e.task)}});
  return json{{"tasks", list}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string task_json(const TaskCatalog::Entry& e) {
  json shown = json::array();
  for (auto* s : e.task.size_sets(/*include_held_back=*/false)) shown.push_back(s->name);
  json baseline = nullptr;
  if (e.task.baseline) baseline = std::string(task::baseline_spec(e.task.baseline->kind).id);
  json j = {{"name", e.name},
            {"prompt", task::render_task_for_model(e.task)},
            {"shown_size_sets", shown},
            {"required", e.task.required_instructions},
            {"baseline", baseline}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace ptxforge::serve
