// ptxforge suite: the shipped tasks. `list` names them, `show` prints a task as a model sees
// it (held-back sizes hidden), and `validate` proves each task sound: its solution passes on
// the GPU, and trivial outputs (all zeros, a copy of an input, never written) fail it.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

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
    std::cout << fmt::format("{:<28} {:>2} size sets ({} held back)  {}{}\n", id, t->sizes.size(),
                             t->sizes.size() - t->size_sets(false).size(), fmt::join(t->tags, ","),
                             t->baseline ? "  baseline " + t->baseline->library : "");
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

int suite_validate(const std::string& only, bool time, bool json_lines) {
  auto dirs = task::list_task_dirs();
  if (!dirs) {
    std::cerr << "ptxforge suite validate: " << dirs.error().message << "\n";
    return kExitUsage;
  }
  eval::Pipeline pipeline;
  int failed = 0, validated = 0, no_gpu = 0;
  for (auto& d : *dirs) {
    std::string name = std::filesystem::path(d).filename().string();
    if (!only.empty() && name != only && d.find(only) == std::string::npos) continue;
    auto t = task::load_task(d);
    if (!t) {
      std::cout << fmt::format("{}: INVALID task.toml\n{}", name, t.error().message);
      ++failed;
      continue;
    }
    eval::TaskValidation v = eval::validate_task(pipeline, *t, time);
    const eval::RunRecord& r = v.run;
    if (json_lines) std::cout << eval::render_report_json(r) << "\n";
    else std::cout << eval::render_report_text(r);
    if (!r.gpu_verified) {
      no_gpu += v.no_gpu ? 1 : 0;
      failed += v.no_gpu ? 0 : 1;
      std::cout << fmt::format("{}: solution {}\n\n", name, v.no_gpu ? "NOT verified (no GPU)" : "FAILED");
      continue;
    }
    if (!v.error.empty()) {
      std::cout << fmt::format("{}: the trivial-output check failed to run: {}\n\n", name, v.error);
      ++failed;
      continue;
    }
    for (auto& d : v.audit.disagreements) std::cout << "  DISAGREES: " << d << "\n";
    for (auto& h : v.audit.holes) std::cout << "  HOLE: " << h << "\n";
    failed += v.ok() ? 0 : 1;
    validated += v.ok() ? 1 : 0;
    const eval::TrivialAudit& a = v.audit;
    std::cout << fmt::format("{}: solution {}, {} of {} kinds of trivial output rejected{}, candidate checked in {:.3f} s (warm worker: {:.3f} s)\n\n", name,
                             r.passed ? "passed" : "FAILED", a.kinds - static_cast<int>(a.holes.size()), a.kinds,
                             a.library_checks ? fmt::format(", reference agrees with {} on {} of {} size sets", t->baseline->library,
                                                            a.library_checks - static_cast<int>(a.disagreements.size()), a.library_checks)
                                              : "",
                             r.check_wall_s, v.warm.check_wall_s);
  }
  std::cout << fmt::format("{} tasks validated, {} failed{}\n", validated, failed,
                           no_gpu ? fmt::format(", {} NOT verified (no GPU)", no_gpu) : "");
  if (failed) return kExitInputErrors;
  return no_gpu ? kExitUsage : kExitOk;
}

}  // namespace

int cmd_suite(const std::vector<std::string>& args) {
  CLI::App app("The task suite: list, show a task as a model sees it, validate tasks on the GPU", "suite");
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "list the tasks");
  std::string show_name, only;
  auto* show = app.add_subcommand("show", "print a task as the model is shown it");
  show->add_option("task", show_name, "task name")->required();
  auto* validate = app.add_subcommand("validate", "every solution passes and trivial outputs fail (needs a GPU)");
  validate->add_option("--task", only, "only this task");
  bool no_time = false, json = false;
  validate->add_flag("--no-time", no_time, "skip timing the solutions");
  validate->add_flag("--json", json, "print each result record as one JSON line");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (list->parsed()) return suite_list();
  if (show->parsed()) return suite_show(show_name);
  return suite_validate(only, !no_time, json);
}

}  // namespace ptxforge::cli
