#include "eval/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

#include "eval/target_gate.h"
#include "task/baselines.h"

namespace ptxforge::eval {

std::string_view to_string(ValidationStatus s) {
  switch (s) {
    case ValidationStatus::passed: return "passed";
    case ValidationStatus::failed: return "failed";
    case ValidationStatus::not_verified: return "not_verified";
    case ValidationStatus::skipped: return "skipped";
    case ValidationStatus::invalid: return "invalid";
  }
  return "?";
}

ValidationStatus TaskValidation::status() const {
  if (run.verified_by == VerifiedBy::none) {
    bool stage_failed = false;
    for (auto& s : run.stages) stage_failed = stage_failed || s.status == StageStatus::failed;
    // Skipped only once its solution checked and assembled for the target it needs.
    if (!target_gap.empty()) return stage_failed ? ValidationStatus::failed : ValidationStatus::skipped;
    return no_gpu ? ValidationStatus::not_verified : ValidationStatus::failed;
  }
  return ok() ? ValidationStatus::passed : ValidationStatus::failed;
}

TrivialAudit audit_trivial_cases(const std::vector<gpu::CaseResult>& cases, const std::string& library) {
  TrivialAudit a;
  std::map<std::string, std::pair<int, int>> kinds;  // kind -> (size sets, size sets rejecting it)
  for (auto& c : cases) {
    if (c.trivial == "library") {
      ++a.library_checks;
      if (!c.pass && !c.outputs.empty()) {
        const auto& o = c.outputs.front();
        a.disagreements.push_back(fmt::format("the reference and {} differ on size set '{}': {} of {} elements, max abs error {:g}",
                                              library, c.size_set, o.mismatches, o.count, o.max_abs_error));
      }
      continue;
    }
    auto& k = kinds[c.trivial];
    k.first += 1;
    k.second += c.pass ? 0 : 1;
  }
  for (auto& [kind, counts] : kinds) {
    ++a.kinds;
    if (counts.second == 0) a.holes.push_back(fmt::format("an output that is '{}' passes on all {} size sets", kind, counts.first));
  }
  return a;
}

TaskValidation validate_task(Pipeline& pipeline, const task::Task& t, bool time, Device device) {
  TaskValidation v;
  RunOptions opts;
  opts.time = time;
  opts.device = device;
  v.run = pipeline.run(t, t.dir + "/solution.ptx", opts);
  if (v.run.verified_by == VerifiedBy::none) {
    const StageResult* verify = v.run.find_stage(StageId::verify);
    v.no_gpu = verify && verify->status == StageStatus::skipped;
    // A GPU the task's target does not run on: the pipeline assembled for that target and
    // skipped verify; say so apart from "no GPU" (the CPU engine never gets here with one).
    if (device != Device::cpu && !pipeline.uses_engine(opts))
      if (const auto& info = pipeline.device(); info)
        if (auto gap = target_gap(t.min_target, info->arch())) v.target_gap = *gap;
    return v;
  }
  auto trivial = pipeline.check_trivial_outputs(std::chrono::seconds(120));
  if (!trivial) {
    v.error = trivial.error().message;
    return v;
  }
  v.audit = audit_trivial_cases(*trivial, t.baseline ? std::string(task::baseline_spec(t.baseline->kind).id) : "");
  // The same candidate again with a fresh seed, as a model's next round would come: the worker
  // is warm and the reference cubin cached, but inputs and reference outputs are new, so this
  // is the per-candidate cost (perf/warm_check.sh).
  opts.time = false;
  v.warm = pipeline.run(t, t.dir + "/solution.ptx", opts);
  return v;
}

std::string suite_list_line(const std::string& id, const task::Task& t) {
  return fmt::format("{:<28} needs {:<8} {:>2} size sets ({} held back)  {}{}\n", id, t.min_target, t.sizes.size(),
                     t.sizes.size() - t.size_sets(false).size(), fmt::join(t.tags, ","),
                     t.baseline ? "  baseline " + std::string(task::baseline_spec(t.baseline->kind).id) : "");
}

}  // namespace ptxforge::eval
