#include "gpu/protocol.h"

#include <cmath>
#include <fmt/format.h>

#include "gpu/measurement_json.h"

using nlohmann::json;

namespace ptxforge::task {
// NaN and infinities are not JSON numbers: they travel as strings.
static json num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
static double unnum(const json& j) {
  if (j.is_string()) {
    auto s = j.get<std::string>();
    return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
  }
  return j.get<double>();
}
void to_json(json& j, const Mismatch& m) { j = {{"index", m.index}, {"expected", num(m.expected)}, {"actual", num(m.actual)}}; }
void from_json(const json& j, Mismatch& m) {
  m.index = j.at("index");
  m.expected = unnum(j.at("expected"));
  m.actual = unnum(j.at("actual"));
}
void to_json(json& j, const Comparison& c) {
  j = {{"output", c.output},       {"count", c.count},           {"mismatches", c.mismatches},
       {"matched_fraction", c.matched_fraction}, {"max_abs_error", num(c.max_abs_error)},
       {"max_rel_error", num(c.max_rel_error)},  {"nan_count", c.nan_count}, {"inf_count", c.inf_count},
       {"never_written", c.never_written},       {"first_mismatches", c.first}, {"pass", c.pass}, {"hint", c.hint}};
}
void from_json(const json& j, Comparison& c) {
  c.output = j.at("output");
  c.count = j.at("count");
  c.mismatches = j.at("mismatches");
  c.matched_fraction = j.at("matched_fraction");
  c.max_abs_error = unnum(j.at("max_abs_error"));
  c.max_rel_error = unnum(j.at("max_rel_error"));
  c.nan_count = j.at("nan_count");
  c.inf_count = j.at("inf_count");
  c.never_written = j.at("never_written");
  c.first = j.at("first_mismatches").get<std::vector<Mismatch>>();
  c.pass = j.at("pass");
  c.hint = j.at("hint");
}
}  // namespace ptxforge::task

namespace ptxforge::gpu {

void to_json(json& j, const Failure& f) { j = {{"kind", f.kind}, {"message", f.message}, {"where", f.where}}; }
void from_json(const json& j, Failure& f) {
  f.kind = j.at("kind");
  f.message = j.at("message");
  f.where = j.value("where", "");
}
void to_json(json& j, const CaseResult& c) {
  j = {{"trivial", c.trivial}, {"size_set", c.size_set}, {"shown", c.shown}, {"seed", c.seed}, {"pass", c.pass}, {"outputs", c.outputs}, {"problems", c.problems}};
}
void from_json(const json& j, CaseResult& c) {
  c.trivial = j.value("trivial", "");
  c.size_set = j.at("size_set");
  c.shown = j.at("shown");
  c.seed = j.at("seed");
  c.pass = j.at("pass");
  c.outputs = j.at("outputs").get<std::vector<task::Comparison>>();
  c.problems = j.at("problems").get<std::vector<std::string>>();
}
void to_json(json& j, const TimingStats& t) {
  j = {{"trials", t.trials}, {"min_ms", t.min_ms}, {"median_ms", t.median_ms}, {"mean_ms", t.mean_ms}, {"stdev_ms", t.stdev_ms}};
}
void from_json(const json& j, TimingStats& t) {
  t.trials = j.at("trials");
  t.min_ms = j.at("min_ms");
  t.median_ms = j.at("median_ms");
  t.mean_ms = j.at("mean_ms");
  t.stdev_ms = j.at("stdev_ms");
}
void to_json(json& j, const SizeTiming& t) {
  j = {{"size_set", t.size_set}, {"candidate", t.candidate}, {"reference", t.reference}};
  if (t.library) {
    j["library"] = *t.library;
    j["library_name"] = t.library_name;
  }
}
void from_json(const json& j, SizeTiming& t) {
  t.size_set = j.at("size_set");
  t.candidate = j.at("candidate");
  t.reference = j.at("reference");
  if (j.contains("library")) {
    t.library = j.at("library").get<TimingStats>();
    t.library_name = j.value("library_name", "");
  }
}
void to_json(json& j, const VerifyReport& r) { j = {{"cases", r.cases}, {"seconds", r.seconds}}; }
void from_json(const json& j, VerifyReport& r) {
  r.cases = j.at("cases").get<std::vector<CaseResult>>();
  r.seconds = j.at("seconds");
}
void to_json(json& j, const TimeReport& r) {
  j = {{"sizes", r.sizes}, {"reverify_pass", r.reverify_pass}, {"reverify_problem", r.reverify_problem}, {"seconds", r.seconds}};
}
void from_json(const json& j, TimeReport& r) {
  r.sizes = j.at("sizes").get<std::vector<SizeTiming>>();
  r.reverify_pass = j.at("reverify_pass");
  r.reverify_problem = j.at("reverify_problem");
  r.seconds = j.at("seconds");
}

std::string encode_job(const Job& job) {
  json j = {{"op", job.op},
            {"task_dir", job.task_dir},
            {"candidate_path", job.candidate_path},
            {"launch_path", job.launch_path},
            {"candidate_cubin", job.candidate_cubin},
            {"reference_cubin", job.reference_cubin},
            {"held_back", job.held_back},
            {"seeds", job.seeds},
            {"max_trials", job.max_trials},
            {"budget_s", job.budget_s}};
  return j.dump();
}

Result<Job> decode_job(std::string_view line) {
  try {
    json j = json::parse(line);
    Job job;
    job.op = j.at("op");
    job.task_dir = j.value("task_dir", "");
    job.candidate_path = j.value("candidate_path", "");
    job.launch_path = j.value("launch_path", "");
    job.candidate_cubin = j.value("candidate_cubin", "");
    job.reference_cubin = j.value("reference_cubin", "");
    job.held_back = j.value("held_back", true);
    job.seeds = j.value("seeds", 3);
    job.max_trials = j.value("max_trials", 100);
    job.budget_s = j.value("budget_s", 10.0);
    return job;
  } catch (const std::exception& e) {
    return Error{fmt::format("bad job: {}", e.what())};
  }
}

std::string encode_outcome(const Outcome& o) {
  json j = json::object();
  if (o.verify) j["verify"] = *o.verify;
  if (o.time) j["time"] = *o.time;
  if (o.failure) j["failure"] = *o.failure;
  j["fatal"] = o.fatal;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<Outcome> decode_outcome(std::string_view line) {
  try {
    json j = json::parse(line);
    if (!j.is_object()) return Error{"the worker's reply is not a JSON object"};
    Outcome o;
    if (j.contains("verify")) o.verify = j.at("verify").get<VerifyReport>();
    if (j.contains("time")) o.time = j.at("time").get<TimeReport>();
    if (j.contains("failure")) o.failure = j.at("failure").get<Failure>();
    o.fatal = j.value("fatal", false);
    if (!o.verify && !o.time && !o.failure) return Error{"the worker's reply holds no result"};
    return o;
  } catch (const std::exception& e) {
    return Error{fmt::format("unreadable reply from the worker: {}", e.what())};
  }
}

}  // namespace ptxforge::gpu
