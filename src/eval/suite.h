// Validating a task of the suite: its solution passes on the GPU (and again on a warm
// worker, which is what a model's next round costs), every kind of trivial output fails the
// task, and the reference agrees with the library baseline where there is one.
#pragma once

#include <string>
#include <vector>

#include "eval/pipeline.h"

namespace ptxforge::eval {

struct TrivialAudit {
  int kinds = 0;                           // kinds of trivial output tried
  std::vector<std::string> holes;          // kinds that no size set rejects
  int library_checks = 0;                  // size sets where reference and library were compared
  std::vector<std::string> disagreements;  // where they differ
};

// A trivial candidate fails the task when any size set rejects it: on a 1-element scan,
// copying the input IS the answer, and the other sizes must catch it.
TrivialAudit audit_trivial_cases(const std::vector<gpu::CaseResult>& cases, const std::string& library);

// A validated task's standing, as `suite validate --json` spells it (to_string): passed,
// failed, not_verified (no GPU here: checked and assembled only), skipped (this GPU does not
// satisfy the task's min_target: its solution checked and assembled for that target, and
// nothing ran; counted apart from failures) or invalid (task.toml does not load).
enum class ValidationStatus { passed, failed, not_verified, skipped, invalid };
std::string_view to_string(ValidationStatus s);

struct TaskValidation {
  RunRecord run, warm;
  bool no_gpu = false;     // verify was skipped: there is no GPU here (--device gpu) or the engine does not run it
  std::string target_gap;  // non-empty: this GPU cannot run the task's min_target, and why (eval/target_gate.h)
  std::string error;       // the trivial-output audit could not run
  TrivialAudit audit;
  bool ok() const {
    return run.passed && warm.verified_by != VerifiedBy::none && error.empty() && audit.holes.empty() && audit.disagreements.empty();
  }
  ValidationStatus status() const;
};

TaskValidation validate_task(Pipeline& pipeline, const task::Task& t, bool time, Device device = Device::automatic);

// One line of `suite list`: the task's folder id ("level3/bgemm_tcgen05"), the target it
// needs ("needs sm_100a"), its size sets, tags and library baseline.
std::string suite_list_line(const std::string& id, const task::Task& t);

}  // namespace ptxforge::eval
