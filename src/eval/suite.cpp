#include "eval/suite.h"

#include <fmt/format.h>
#include <map>

namespace ptxforge::eval {

std::string_view to_string(ValidationStatus s) {
  switch (s) {
    case ValidationStatus::passed: return "passed";
    case ValidationStatus::failed: return "failed";
    case ValidationStatus::not_verified: return "not_verified";
    case ValidationStatus::invalid: return "invalid";
  }
  return "?";
}

ValidationStatus TaskValidation::status() const {
  if (run.verified_by == VerifiedBy::none) return no_gpu ? ValidationStatus::not_verified : ValidationStatus::failed;
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

}  // namespace ptxforge::eval
