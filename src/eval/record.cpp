#include "eval/record.h"

#include <cmath>

#include <fmt/format.h>

namespace ptxforge::eval {

namespace {
constexpr std::pair<StageId, std::string_view> kStageIds[] = {{StageId::check, "check"},   {StageId::assemble, "assemble"},
                                                              {StageId::verify, "verify"}, {StageId::sanitize, "sanitize"},
                                                              {StageId::time, "time"},     {StageId::prove, "prove"}, {StageId::profile, "profile"}};
}  // namespace

std::string_view to_string(StageId s) {
  for (auto& [id, name] : kStageIds)
    if (id == s) return name;
  return "?";
}

std::optional<StageId> stage_id_from_string(std::string_view s) {
  for (auto& [id, name] : kStageIds)
    if (name == s) return id;
  return std::nullopt;
}

std::string_view to_string(VerifiedBy v) {
  switch (v) {
    case VerifiedBy::none: return "none";
    case VerifiedBy::gpu: return "gpu";
    case VerifiedBy::cpu_engine: return "cpu_engine";
  }
  return "?";
}

std::optional<VerifiedBy> verified_by_from_string(std::string_view s) {
  for (VerifiedBy v : {VerifiedBy::none, VerifiedBy::gpu, VerifiedBy::cpu_engine})
    if (to_string(v) == s) return v;
  return std::nullopt;
}

std::string_view stage_status_name(StageStatus s) {
  switch (s) {
    case StageStatus::passed: return "passed";
    case StageStatus::failed: return "FAILED";
    case StageStatus::skipped: return "skipped";
    case StageStatus::not_run: return "not run";
  }
  return "?";
}

StageResult& RunRecord::stage(StageId id) {
  for (auto& s : stages)
    if (s.id == id) return s;
  StageResult fresh;
  fresh.id = id;
  stages.push_back(fresh);
  return stages.back();
}

const StageResult* RunRecord::find_stage(StageId id) const {
  for (auto& s : stages)
    if (s.id == id) return &s;
  return nullptr;
}

Speedups speedups(const RunRecord& r) {
  double ref = 0, lib = 0;
  size_t n_ref = 0, n_lib = 0;
  if (r.time)
    for (auto& t : r.time->sizes) {
      if (!(t.candidate.median_ms > 0)) continue;
      if (t.reference.median_ms > 0) ref += std::log(t.reference.median_ms / t.candidate.median_ms), ++n_ref;
      if (t.library && t.library->median_ms > 0) lib += std::log(t.library->median_ms / t.candidate.median_ms), ++n_lib;
    }
  Speedups s;
  if (n_ref) s.vs_reference = std::exp(ref / static_cast<double>(n_ref));
  if (n_lib) s.vs_library = std::exp(lib / static_cast<double>(n_lib));
  return s;
}

std::string RunRecord::verdict(Audience a) const {
  for (auto& s : stages)
    if (s.status == StageStatus::failed) return fmt::format("FAILED at {}: {}", to_string(s.id), s.text(a));
  if (verified_by == VerifiedBy::cpu_engine) {
    // Never plain "passed": a reader must see that no GPU ran it and nothing was timed.
    std::string passed = "passed (verified on the CPU engine)";
    return flags.empty() ? passed : fmt::format("{}, but {}", passed, flags.front());
  }
  if (!gpu_verified) {
    const StageResult* v = find_stage(StageId::verify);
    if (v && v->text(a).rfind("NOT verified", 0) == 0) return v->text(a);
    return "NOT verified on a GPU" + (v && !v->text(a).empty() ? ": " + v->text(a) : std::string());
  }
  return flags.empty() ? "passed" : fmt::format("passed, but {}", flags.front());
}

}  // namespace ptxforge::eval
