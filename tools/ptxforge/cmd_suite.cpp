// ptxforge suite: the shipped tasks. `list` names them, `show` prints a task as a model sees
// it (held-back sizes hidden), and `validate` proves each task sound: its solution passes on
// the GPU, and trivial outputs (all zeros, a copy of an input, never written) fail it. A task
// whose min_target this GPU does not satisfy is skipped, with the reason, once its solution
// checked and assembled for that target (eval/target_gate.h); skips are not failures.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_parse.h"
#include "eval/suite.h"
#include "task/task_spec.h"
#include "task/task_view.h"

namespace ptxforge::cli {

namespace {

int suite_list() {
  auto dirs = task::list_task_dirs();
  if (!dirs) {
    std::cerr << "ptxforge suite list: " << dirs.error().message << "\n";
    return kExitUsage;
  }
  int bad = 0;
  for (auto& d : *dirs) {
    auto t = task::load_task(d);
    std::string id = std::filesystem::path(d).parent_path().filename().string() + "/" + std::filesystem::path(d).filename().string();
    if (!t) {
      std::cout << fmt::format("{:<28} INVALID task.toml:\n{}", id, t.error().message);
      ++bad;
      continue;
    }
    std::cout << eval::suite_list_line(id, *t);
  }
  return bad ? kExitInputErrors : kExitOk;
}

int suite_show(const std::string& name) {
  auto dir = task::find_task_dir(name);
  if (!dir) {
    std::cerr << "ptxforge suite show: " << dir.error().message << "\n";
    return kExitUsage;
  }
  auto t = task::load_task(*dir);
  if (!t) {
    std::cerr << t.error().message;
    return kExitInputErrors;
  }
  std::cout << task::render_task_for_model(*t);
  return kExitOk;
}

// The task folders `--task` names: every suite task whose name is `only` or whose path holds
// it (`--task level1`), else a task folder given by path. Nothing matching is a usage error
// with a guess, never a silent "0 tasks validated".
Result<std::vector<std::string>> tasks_to_validate(const std::vector<std::string>& dirs, const std::string& only) {
  if (only.empty()) return dirs;
  std::vector<std::string> picked;
  for (auto& d : dirs)
    if (std::filesystem::path(d).filename().string() == only || d.find(only) != std::string::npos) picked.push_back(d);
  if (!picked.empty()) return picked;
  auto dir = task::find_task_dir(only);
  if (!dir) return dir.error();
  return std::vector<std::string>{*dir};
}

struct ValidateCounts {
  int validated = 0, failed = 0, no_gpu = 0;
  int skipped = 0;  // this GPU does not satisfy the task's min_target (not a failure)
};

// One task's validation, as text on stdout or as one element of the JSON document.
void validate_one(eval::Pipeline& pipeline, const std::string& d, bool time, eval::Device device, ValidateCounts& n,
                  nlohmann::json* out) {
  std::string name = std::filesystem::path(d).filename().string();
  nlohmann::json j = {{"task", name}, {"folder", d}};
  auto t = task::load_task(d);
  if (!t) {
    ++n.failed;
    if (!out) std::cout << fmt::format("{}: INVALID task.toml\n{}", name, t.error().message);
    j["status"] = std::string(eval::to_string(eval::ValidationStatus::invalid));
    j["error"] = t.error().message;
    if (out) out->push_back(std::move(j));
    return;
  }
  eval::TaskValidation v = eval::validate_task(pipeline, *t, time, device);
  const eval::RunRecord& r = v.run;
  const eval::TrivialAudit& a = v.audit;
  if (out) {
    j["record"] = nlohmann::json::parse(eval::render_report_json(r));
    // The same solution again with a fresh seed and the worker warm, as a compile round pays it.
    if (v.warm.verified_by != eval::VerifiedBy::none || !v.warm.stages.empty()) j["warm_record"] = nlohmann::json::parse(eval::render_report_json(v.warm));
    j["trivial_outputs"] = {{"kinds", a.kinds}, {"holes", a.holes}, {"library_checks", a.library_checks},
                            {"disagreements", a.disagreements}};
    if (!v.error.empty()) j["error"] = v.error;
    if (!v.target_gap.empty()) j["skipped_because"] = v.target_gap;
  } else {
    std::cout << eval::render_report_text(r);
  }
  eval::ValidationStatus status = v.status();
  if (status == eval::ValidationStatus::skipped) {
    if (!out) std::cout << fmt::format("{}: SKIPPED, {}; its solution checked and assembled for {}\n\n", name, v.target_gap, r.arch);
  } else if (r.verified_by == eval::VerifiedBy::none) {
    // Not verified: no GPU here, or an instruction the CPU engine does not run.
    const char* why = "NOT verified (no GPU)";
    for (auto& s : r.stages)
      if (s.id == eval::StageId::verify && s.summary.find("not supported by the CPU engine") != std::string::npos)
        why = "NOT verified (not supported by the CPU engine)";
    if (!out) std::cout << fmt::format("{}: solution {}\n\n", name, v.no_gpu ? why : "FAILED");
  } else if (!v.error.empty()) {
    if (!out) std::cout << fmt::format("{}: the trivial-output check failed to run: {}\n\n", name, v.error);
  } else if (!out) {
    for (auto& dis : a.disagreements) std::cout << "  DISAGREES: " << dis << "\n";
    for (auto& h : a.holes) std::cout << "  HOLE: " << h << "\n";
    std::cout << fmt::format(
        "{}: solution {}{}, {} of {} kinds of trivial output rejected{}, candidate checked in {:.3f} s (warm worker: {:.3f} s)\n\n",
        name, r.passed ? "passed" : "FAILED", r.verified_by == eval::VerifiedBy::cpu_engine ? " on the CPU engine" : "", a.kinds - static_cast<int>(a.holes.size()), a.kinds,
        a.library_checks ? fmt::format(", reference agrees with {} on {} of {} size sets", task::baseline_spec(t->baseline->kind).id,
                                       a.library_checks - static_cast<int>(a.disagreements.size()), a.library_checks)
                         : "",
        r.check_wall_s, v.warm.check_wall_s);
  }
  n.validated += status == eval::ValidationStatus::passed;
  n.failed += status == eval::ValidationStatus::failed;
  n.no_gpu += status == eval::ValidationStatus::not_verified;
  n.skipped += status == eval::ValidationStatus::skipped;
  j["status"] = std::string(eval::to_string(status));
  if (out) out->push_back(std::move(j));
}

int suite_validate(const std::string& only, bool time, eval::Device device, bool json) {
  auto dirs = task::list_task_dirs();
  if (!dirs) {
    std::cerr << "ptxforge suite validate: " << dirs.error().message << "\n";
    return kExitUsage;
  }
  auto picked = tasks_to_validate(*dirs, only);
  if (!picked) {
    std::cerr << "ptxforge suite validate: " << picked.error().message << "\n";
    return kExitUsage;
  }
  eval::Pipeline pipeline;
  ValidateCounts n;
  nlohmann::json tasks = nlohmann::json::array();
  for (auto& d : *picked) validate_one(pipeline, d, time, device, n, json ? &tasks : nullptr);
  if (json) {
    // One document, whatever the number of tasks (docs/json.md).
    nlohmann::json doc = {{"tasks", tasks},          {"validated", n.validated}, {"failed", n.failed},
                          {"not_verified", n.no_gpu}, {"skipped", n.skipped}};
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} tasks validated, {} failed{}{}\n", n.validated, n.failed,
                             n.no_gpu ? fmt::format(", {} NOT verified ({})", n.no_gpu,
                                                    device == eval::Device::gpu ? "no GPU" : "no GPU, or not supported by the CPU engine")
                                      : "",
                             n.skipped ? fmt::format(", {} skipped (this GPU does not satisfy their min_target)", n.skipped) : "");
  }
  if (n.failed) return kExitInputErrors;
  return n.no_gpu ? kExitUsage : kExitOk;
}

}  // namespace

int cmd_suite(const std::vector<std::string>& args) {
  CLI::App app("The task suite: list, show a task as a model sees it, validate tasks on the GPU", "suite");
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "list the tasks");
  std::string show_name, only;
  auto* show = app.add_subcommand("show", "print a task as the model is shown it");
  show->add_option("task", show_name, "task name")->required();
  auto* validate = app.add_subcommand("validate", "every solution passes and trivial outputs fail (on a GPU, or on the CPU engine: --device)");
  validate->add_option("--task", only, "only this task");
  bool no_time = false, json = false;
  std::string device = "auto";
  validate->add_flag("--no-time", no_time, "skip timing the solutions");
  validate->add_option("--device", device, "where the solutions run: auto (a GPU where a driver is found, else the CPU "
                       "engine), gpu or cpu")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}))->capture_default_str();
  validate->add_flag("--json", json, "print one JSON document: a record per task and the counts");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (list->parsed()) return suite_list();
  if (show->parsed()) return suite_show(show_name);
  return suite_validate(only, !no_time, *eval::device_from_string(device), json);
}

}  // namespace ptxforge::cli
