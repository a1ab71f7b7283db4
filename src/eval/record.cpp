#include "eval/record.h"

#include <fmt/format.h>

namespace ptxforge::eval {

std::string_view stage_status_name(StageStatus s) {
  switch (s) {
    case StageStatus::passed: return "passed";
    case StageStatus::failed: return "FAILED";
    case StageStatus::skipped: return "skipped";
    case StageStatus::not_run: return "not run";
  }
  return "?";
}

StageResult& RunRecord::stage(std::string_view name) {
  for (auto& s : stages)
    if (s.name == name) return s;
  stages.push_back({std::string(name), StageStatus::not_run, "", 0});
  return stages.back();
}

const StageResult* RunRecord::find_stage(std::string_view name) const {
  for (auto& s : stages)
    if (s.name == name) return &s;
  return nullptr;
}

std::string RunRecord::verdict() const {
  for (auto& s : stages)
    if (s.status == StageStatus::failed) return fmt::format("FAILED at {}: {}", s.name, s.summary);
  if (!gpu_verified) {
    const StageResult* v = find_stage("verify");
    if (v && v->summary.rfind("NOT verified", 0) == 0) return v->summary;
    return "NOT verified on a GPU" + (v && !v->summary.empty() ? ": " + v->summary : std::string());
  }
  return flags.empty() ? "passed" : fmt::format("passed, but {}", flags.front());
}

}  // namespace ptxforge::eval
