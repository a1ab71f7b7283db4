// ptxforge suite: the shipped tasks. `list` names them, `show` prints a task as a model sees
// it (held-back sizes hidden), and `validate` proves each task sound: its solution passes on
// the GPU, and trivial outputs (all zeros, a copy of an input, never written) fail it.
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cli_parse.h"
#include "eval/pipeline.h"
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
    eval::RunOptions opts;
    opts.time = time;
    eval::RunRecord r = pipeline.run(*t, d + "/solution.ptx", opts);
    if (json_lines) std::cout << eval::render_report_json(r) << "\n";
    else std::cout << eval::render_report_text(r);
    if (!r.gpu_verified) {
      bool gpu_missing = r.find_stage("verify")->status == eval::StageStatus::skipped;
      no_gpu += gpu_missing ? 1 : 0;
      failed += gpu_missing ? 0 : 1;
      std::cout << fmt::format("{}: solution {}\n\n", name, gpu_missing ? "NOT verified (no GPU)" : "FAILED");
      continue;
    }
    auto trivial = pipeline.check_trivial_outputs(std::chrono::seconds(120));
    if (!trivial) {
      std::cout << fmt::format("{}: the trivial-output check failed to run: {}\n\n", name, trivial.error().message);
      ++failed;
      continue;
    }
    int accepted = 0, trivial_count = 0, library_checks = 0, disagreements = 0;
    std::map<std::string, std::pair<int, int>> kinds;  // kind -> (size sets, size sets rejecting it)
    for (auto& c : *trivial) {
      if (c.trivial == "library") {
        ++library_checks;
        if (!c.pass) {
          ++disagreements;
          const auto& o = c.outputs.front();
          std::cout << fmt::format("  DISAGREES: the reference and {} differ on size set '{}': {} of {} elements, max abs "
                                   "error {:g}\n", t->baseline->library, c.size_set, o.mismatches, o.count, o.max_abs_error);
        }
        continue;
      }
      // A trivial candidate fails the task when any size set rejects it (on a 1-element scan,
      // copying the input IS the answer; the other sizes must catch it).
      auto& k = kinds[c.trivial];
      k.first += 1;
      k.second += c.pass ? 0 : 1;
    }
    for (auto& [kind, counts] : kinds) {
      ++trivial_count;
      if (counts.second == 0) {
        ++accepted;
        std::cout << fmt::format("  HOLE: an output that is '{}' passes on all {} size sets\n", kind, counts.first);
      }
    }
    // The same candidate again, as a model's next round would come: the worker is warm and
    // holds the task's inputs and reference outputs, so this is the per-candidate cost.
    eval::RunOptions again = opts;
    again.time = false;
    eval::RunRecord warm = pipeline.run(*t, d + "/solution.ptx", again);
    bool ok = r.passed && warm.gpu_verified && accepted == 0 && disagreements == 0;
    failed += ok ? 0 : 1;
    validated += ok ? 1 : 0;
    std::cout << fmt::format("{}: solution {}, {} of {} kinds of trivial output rejected{}, candidate checked in {:.3f} s (warm worker: {:.3f} s)\n\n", name,
                             r.passed ? "passed" : "FAILED", trivial_count - accepted, trivial_count,
                             library_checks ? fmt::format(", reference agrees with {} on {} of {} size sets", t->baseline->library,
                                                          library_checks - disagreements, library_checks)
                                            : "",
                             r.check_wall_s, warm.check_wall_s);
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
