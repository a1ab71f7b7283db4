// The run record's JSON, written and read in one file so the two cannot drift apart: every key
// render_report_json writes, record_from_json reads back (record_json_test.cpp renders, parses
// and renders again over a record with every part filled).
#include "eval/record_json.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu/measurement_json.h"
#include "task/seeds.h"

namespace ptxforge::eval {

namespace {

// Whether any size set was also timed on a vendor library.
bool has_library_timing(const gpu::TimeReport& t) {
  return std::any_of(t.sizes.begin(), t.sizes.end(), [](const gpu::SizeTiming& s) { return s.library.has_value(); });
}

}  // namespace

std::string render_report_json(const RunRecord& r) {
  using nlohmann::json;
  json j;
  j["task"] = r.task;
  j["candidate"] = r.candidate;
  j["arch"] = r.arch;
  j["seed"] = task::seed_text(r.seed);  // a string: a 64-bit number loses digits in many JSON readers
  j["verdict"] = r.verdict();
  j["passed"] = r.passed;
  j["gpu_verified"] = r.gpu_verified;
  j["verified_by"] = std::string(to_string(r.verified_by));
  j["check_wall_s"] = r.check_wall_s;
  j["stages"] = json::array();
  for (auto& s : r.stages) {
    json sj = {{"name", std::string(to_string(s.id))}, {"status", std::string(stage_status_name(s.status))},
               {"summary", s.summary}, {"seconds", s.seconds}};
    if (s.held_back) sj["held_back"] = true;  // the summary names a held-back size set
    j["stages"].push_back(sj);
  }
  SourceText src(r.source_name, r.source_text);
  j["diagnostics"] = json::parse(render_json(r.diagnostics, src));
  for (auto& d : j["diagnostics"]["diagnostics"]) d["file"] = src.name();  // as check --format json gives them
  j["resources"] = json::array();
  for (auto& f : r.resources)
    j["resources"].push_back({{"name", f.name}, {"entry", f.is_entry}, {"registers", f.registers}, {"shared_bytes", f.shared_bytes},
                              {"spill_stores", f.spill_stores}, {"spill_loads", f.spill_loads}, {"local_bytes", f.local_bytes}});
  if (r.verify) j["verify"] = *r.verify;
  if (r.time) {
    j["time"] = *r.time;
    j["time"]["method"] =
        "CUDA events around the kernel launches alone, 3 warm-up runs, up to 100 trials or the task's time "
        "budget; before every trial, outside the timed interval: inputs copied in from input sets drawn from the "
        "run's seed (a set of its own for every trial and warm-up run where all of them take at most 64 MiB, "
        "else a rotation of 5 to 8 sets; the trial cap drawn per run), outputs poisoned (the baselines' zeroed), "
        "the candidate's .global variables and the gaps between them restored byte for byte, then the L2 flushed by "
        "writing a buffer of at least twice the L2 size; the candidate's scratch zeroed inside the timed interval; "
        "after every trial, outside the timed interval, its outputs compared on the GPU with the reference's for "
        "its input set, under the task's tolerance; the last trial also checked on the host (guards, unchanged "
        "inputs)";
    if (!has_library_timing(*r.time)) j["time"]["library"] = "no library baseline here (the task names none)";
  }
  if (r.limits) {
    json rows = json::array();
    for (auto& row : r.limits->rows)
      rows.push_back({{"size_set", row.size_set}, {"bytes", row.bytes}, {"flops", row.flops}, {"fastest_ms", row.fastest_ms},
                      {"median_ms", row.median_ms}, {"bytes_per_s", row.bytes_per_s}, {"flops_per_s", row.flops_per_s},
                      {"pass", row.pass}});
    j["physical_limits"] = {{"note", r.limits->note},
                            {"margin", kPhysicalLimitMargin},
                            {"flops_margin", r.limits->peaks.flops_margin},
                            {"peak_bytes_per_s", r.limits->peaks.bytes_per_s},
                            {"peak_flops_per_s", r.limits->peaks.flops_per_s},
                            {"flops_kind", r.limits->peaks.flops_kind},
                            {"sizes", rows}};
  }
  if (r.failure) j["failure"] = *r.failure;
  if (r.guard) j["guard"] = std::string(gpu::to_string(*r.guard));
  if (!r.guard_note.empty()) j["guard_note"] = r.guard_note;
  j["proofs"] = json::array();
  for (auto& p : r.proofs) {
    json pj = {{"family", p.family}, {"in_ptx", p.in_ptx}, {"ptx_count", p.ptx_count}};
    if (!p.alternatives.empty()) pj["alternatives"] = p.alternatives;
    pj["in_sass"] = p.in_sass ? json(*p.in_sass) : json(nullptr);
    pj["sass_opcodes"] = p.sass_opcodes;
    pj["sass_count"] = p.sass_count;
    pj["executed"] = p.executed ? json(*p.executed) : json(nullptr);
    pj["executed_warps"] = p.executed_warps;
    if (p.executed) {
      pj["executed_work"] = p.executed_work;
      pj["work_unit"] = p.work_unit;
    }
    if (p.min_warps) pj["min_warps"] = p.min_warps;
    if (p.ncu_threads) pj["ncu_threads"] = *p.ncu_threads;
    j["proofs"].push_back(pj);
  }
  if (!r.sass_note.empty()) j["sass_note"] = r.sass_note;
  if (!r.executed_note.empty()) j["executed_note"] = r.executed_note;
  if (r.executed_by != VerifiedBy::none) j["executed_by"] = std::string(to_string(r.executed_by));
  if (!r.ncu_note.empty()) j["ncu_note"] = r.ncu_note;
  if (r.profile) {
    auto summary = [](const toolchain::ProfileSummary& s) {
      auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
      json stalls = json::array();
      for (auto& [why, share] : s.top_stalls) stalls.push_back({{"reason", why}, {"share", share}});
      return json{{"kernel", s.kernel}, {"duration_us", s.duration_us}, {"achieved_occupancy_pct", opt(s.achieved_occupancy)},
                  {"theoretical_occupancy_pct", opt(s.theoretical_occupancy)}, {"occupancy_limiter", s.occupancy_limiter},
                  {"registers", s.registers}, {"block_size", s.block_size}, {"shared_bytes_per_block", s.shared_bytes_per_block},
                  {"dram_pct", opt(s.dram_pct)}, {"l2_pct", opt(s.l2_pct)}, {"sm_pct", opt(s.sm_pct)}, {"tensor_pipe_pct", opt(s.tensor_pct)},
                  {"fma_pipe_pct", opt(s.fma_pct)}, {"top_stalls", stalls},
                  {"shared_wavefronts_per_request", opt(s.shared_wavefronts_per_request)}, {"local_bytes", opt(s.local_bytes)}};
    };
    json pj = {{"note", r.profile->note}, {"size_set", r.profile->size_set}, {"candidate", json::array()}, {"reference", json::array()}};
    for (auto& s : r.profile->candidate) pj["candidate"].push_back(summary(s));
    for (auto& s : r.profile->reference) pj["reference"].push_back(summary(s));
    j["profile"] = pj;
  }
  j["flags"] = r.flags;
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

// ---- Reading it back ----

namespace {

using nlohmann::json;

// A parse failure anywhere in the record, thrown where it is found and caught once, at the top.
struct Bad {
  std::string message;
};

// nlohmann's messages open with "[json.exception.type_error.302] ": the rest says it.
std::string plain_message(const std::exception& e) {
  std::string m = e.what();
  if (m.rfind("[json.exception.", 0) == 0)
    if (size_t end = m.find("] "); end != std::string::npos) return m.substr(end + 2);
  return m;
}

// The quoted source lines are rebuilt as a text this long at most: a line number beyond it
// in a record is damage, not a module.
constexpr uint32_t kMaxQuotedLine = 1u << 22;

// One JSON value and its path in the record ("stages[2].status"), so every error names it.
class Node {
 public:
  Node(const json& v, std::string where) : v_(&v), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& why) const { throw Bad{where_.empty() ? why : fmt::format("{}: {}", where_, why)}; }

  Node at(std::string_view key) const {
    object();
    auto it = v_->find(key);
    if (it == v_->end()) fail(fmt::format("no '{}'", key));
    return child(*it, key);
  }
  std::optional<Node> find(std::string_view key) const {
    object();
    auto it = v_->find(key);
    if (it == v_->end()) return std::nullopt;
    return child(*it, key);
  }
  std::vector<Node> items() const {
    if (!v_->is_array()) fail(fmt::format("expected a list, found {}", v_->type_name()));
    std::vector<Node> out;
    for (size_t i = 0; i < v_->size(); ++i) out.emplace_back((*v_)[i], fmt::format("{}[{}]", where_, i));
    return out;
  }
  std::string str() const {
    if (!v_->is_string()) fail(fmt::format("expected a string, found {}", v_->type_name()));
    return v_->get<std::string>();
  }
  bool boolean() const {
    if (!v_->is_boolean()) fail(fmt::format("expected true or false, found {}", v_->type_name()));
    return v_->get<bool>();
  }
  // null: a NaN or an infinity, which JSON cannot hold and the renderer writes as null.
  double real() const {
    if (v_->is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v_->is_number()) fail(fmt::format("expected a number, found {}", v_->type_name()));
    return v_->get<double>();
  }
  std::optional<double> maybe_real() const { return v_->is_null() ? std::nullopt : std::optional<double>(real()); }
  std::optional<bool> maybe_boolean() const { return v_->is_null() ? std::nullopt : std::optional<bool>(boolean()); }
  template <typename T>
  T integer() const {
    if (!v_->is_number_integer()) fail(fmt::format("expected a whole number, found {}", v_->type_name()));
    bool fits = v_->is_number_unsigned() ? v_->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
                                         : v_->get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min());
    if (!fits) fail(fmt::format("{} is out of range", v_->dump()));
    return static_cast<T>(v_->is_number_unsigned() ? v_->get<uint64_t>() : static_cast<uint64_t>(v_->get<int64_t>()));
  }
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (auto& n : items()) out.push_back(n.str());
    return out;
  }
  // A measurement, through its own from_json (gpu/measurement_json.h).
  template <typename T>
  T measurement() const {
    object();
    try {
      return v_->get<T>();
    } catch (const std::exception& e) {
      fail(plain_message(e));
    }
  }

 private:
  void object() const {
    if (!v_->is_object()) fail(fmt::format("expected an object, found {}", v_->type_name()));
  }
  Node child(const json& v, std::string_view key) const { return Node(v, where_.empty() ? std::string(key) : fmt::format("{}.{}", where_, key)); }
  const json* v_;
  std::string where_;
};

StageResult parse_stage(const Node& n) {
  StageResult s;
  Node name = n.at("name");
  auto id = stage_id_from_string(name.str());
  if (!id) name.fail(fmt::format("unknown stage '{}'", name.str()));
  s.id = *id;
  Node status = n.at("status");
  bool known = false;
  for (auto st : {StageStatus::passed, StageStatus::failed, StageStatus::skipped, StageStatus::not_run})
    if (stage_status_name(st) == status.str()) {
      s.status = st;
      known = true;
    }
  if (!known) status.fail(fmt::format("unknown status '{}' (passed, FAILED, skipped, not run)", status.str()));
  s.summary = n.at("summary").str();
  s.seconds = n.at("seconds").real();
  if (auto h = n.find("held_back")) s.held_back = h->boolean();
  return s;
}

SourceLoc parse_loc(const Node& n) { return {n.at("line").integer<uint32_t>(), n.at("column").integer<uint32_t>()}; }

// The diagnostics as render_json writes them, and the source lines they quote, which become
// source_text so that rendering them again quotes the same lines.
void parse_diagnostics(const Node& n, RunRecord& r) {
  r.source_name = n.at("file").str();
  std::vector<std::string> lines;  // lines[i]: line i + 1
  std::vector<bool> quoted;
  for (auto& d : n.at("diagnostics").items()) {
    Diagnostic x;
    Node severity = d.at("severity");
    bool known = false;
    for (auto s : {Severity::error, Severity::warning, Severity::note})
      if (severity_name(s) == severity.str()) {
        x.severity = s;
        known = true;
      }
    if (!known) severity.fail(fmt::format("unknown severity '{}' (error, warning, note)", severity.str()));
    x.loc = parse_loc(d);
    x.length = d.at("length").integer<uint32_t>();
    x.check_id = d.at("check").str();
    x.message = d.at("message").str();
    if (auto h = d.find("hint")) x.hint = h->str();
    if (auto f = d.find("fixit")) x.fixit = FixIt{parse_loc(*f), f->at("length").integer<uint32_t>(), f->at("replacement").str()};
    for (auto& note : d.at("notes").items()) x.notes.push_back({parse_loc(note), note.at("message").str()});
    Node source_line = d.at("source_line");
    std::string line = source_line.str();
    if (!line.empty()) {
      if (x.loc.line == 0 || x.loc.line > kMaxQuotedLine) d.at("line").fail("a quoted line needs a line number from 1 to 4194304");
      if (line.find('\n') != std::string::npos || line.back() == '\r') source_line.fail("a quoted line holds a line break");
      size_t i = x.loc.line - 1;
      if (lines.size() <= i) {
        lines.resize(i + 1);
        quoted.resize(i + 1);
      }
      if (quoted[i] && lines[i] != line) source_line.fail(fmt::format("line {} is quoted two different ways", x.loc.line));
      lines[i] = line;
      quoted[i] = true;
    }
    r.diagnostics.add(std::move(x));
  }
  if (n.at("errors").integer<size_t>() != r.diagnostics.error_count() ||
      n.at("warnings").integer<size_t>() != r.diagnostics.warning_count())
    n.fail("the error and warning counts disagree with the list");
  for (size_t i = 0; i < lines.size(); ++i) r.source_text += lines[i] + (i + 1 < lines.size() ? "\n" : "");
}

InstructionProof parse_proof(const Node& n) {
  InstructionProof p;
  p.family = n.at("family").str();
  if (auto a = n.find("alternatives")) p.alternatives = a->strings();
  p.in_ptx = n.at("in_ptx").boolean();
  p.ptx_count = n.at("ptx_count").integer<int>();
  p.in_sass = n.at("in_sass").maybe_boolean();
  p.sass_opcodes = n.at("sass_opcodes").strings();
  p.sass_count = n.at("sass_count").integer<int>();
  p.executed = n.at("executed").maybe_boolean();
  p.executed_warps = n.at("executed_warps").integer<uint64_t>();
  if (p.executed) {
    if (auto w = n.find("executed_work")) p.executed_work = w->integer<uint64_t>();
    if (auto u = n.find("work_unit")) p.work_unit = u->str();
  }
  if (auto m = n.find("min_warps")) p.min_warps = m->integer<uint64_t>();
  if (auto t = n.find("ncu_threads")) p.ncu_threads = t->integer<uint64_t>();
  return p;
}

PhysicalLimits parse_limits(const Node& n) {
  PhysicalLimits l;
  l.note = n.at("note").str();
  if (auto m = n.find("flops_margin")) l.peaks.flops_margin = m->real();  // records before it was its own figure: the default
  l.peaks.bytes_per_s = n.at("peak_bytes_per_s").real();
  l.peaks.flops_per_s = n.at("peak_flops_per_s").real();
  l.peaks.flops_kind = n.at("flops_kind").str();
  for (auto& row : n.at("sizes").items())
    l.rows.push_back({row.at("size_set").str(), row.at("bytes").real(), row.at("flops").real(), row.at("fastest_ms").real(),
                      row.at("median_ms").real(), row.at("bytes_per_s").real(), row.at("flops_per_s").real(),
                      row.at("pass").boolean()});
  return l;
}

toolchain::ProfileSummary parse_profile_summary(const Node& n) {
  toolchain::ProfileSummary s;
  s.kernel = n.at("kernel").str();
  s.duration_us = n.at("duration_us").real();
  s.achieved_occupancy = n.at("achieved_occupancy_pct").maybe_real();
  s.theoretical_occupancy = n.at("theoretical_occupancy_pct").maybe_real();
  s.occupancy_limiter = n.at("occupancy_limiter").str();
  s.registers = n.at("registers").integer<int>();
  s.block_size = n.at("block_size").integer<int>();
  s.shared_bytes_per_block = n.at("shared_bytes_per_block").integer<long>();
  s.dram_pct = n.at("dram_pct").maybe_real();
  s.l2_pct = n.at("l2_pct").maybe_real();
  s.sm_pct = n.at("sm_pct").maybe_real();
  s.tensor_pct = n.at("tensor_pipe_pct").maybe_real();
  s.fma_pct = n.at("fma_pipe_pct").maybe_real();
  for (auto& st : n.at("top_stalls").items()) s.top_stalls.emplace_back(st.at("reason").str(), st.at("share").real());
  s.shared_wavefronts_per_request = n.at("shared_wavefronts_per_request").maybe_real();
  s.local_bytes = n.at("local_bytes").maybe_real();
  return s;
}

ProfileReport parse_profile(const Node& n) {
  ProfileReport p;
  p.note = n.at("note").str();
  p.size_set = n.at("size_set").str();
  for (auto& s : n.at("candidate").items()) p.candidate.push_back(parse_profile_summary(s));
  for (auto& s : n.at("reference").items()) p.reference.push_back(parse_profile_summary(s));
  return p;
}

RunRecord parse_record(const Node& j) {
  RunRecord r;
  r.task = j.at("task").str();
  r.candidate = j.at("candidate").str();
  r.arch = j.at("arch").str();
  if (auto s = j.find("seed")) {
    auto seed = task::parse_seed(s->str());
    if (!seed) s->fail(seed.error().message);
    r.seed = *seed;
  }
  r.passed = j.at("passed").boolean();
  r.gpu_verified = j.at("gpu_verified").boolean();
  // Records written before the CPU engine have no "verified_by": a GPU verified them or nothing did.
  r.verified_by = r.gpu_verified ? VerifiedBy::gpu : VerifiedBy::none;
  if (auto v = j.find("verified_by")) {
    auto by = verified_by_from_string(v->str());
    if (!by) v->fail(fmt::format("unknown verified_by '{}' (none, gpu or cpu_engine)", v->str()));
    r.verified_by = *by;
  }
  if (auto w = j.find("check_wall_s")) r.check_wall_s = w->real();
  for (auto& s : j.at("stages").items()) {
    StageResult st = parse_stage(s);
    if (r.find_stage(st.id)) s.fail(fmt::format("the stage '{}' comes twice", to_string(st.id)));
    r.stages.push_back(std::move(st));
  }
  if (auto d = j.find("diagnostics")) parse_diagnostics(*d, r);
  if (auto res = j.find("resources"))
    for (auto& f : res->items()) {
      toolchain::FunctionResources x;
      x.name = f.at("name").str();
      x.is_entry = f.at("entry").boolean();
      x.registers = f.at("registers").integer<int>();
      x.shared_bytes = f.at("shared_bytes").integer<int>();
      x.spill_stores = f.at("spill_stores").integer<int>();
      x.spill_loads = f.at("spill_loads").integer<int>();
      x.local_bytes = f.at("local_bytes").integer<int>();
      r.resources.push_back(std::move(x));
    }
  if (auto v = j.find("verify")) r.verify = v->measurement<gpu::VerifyReport>();
  if (auto t = j.find("time")) r.time = t->measurement<gpu::TimeReport>();  // its "method" and "library" notes are the renderer's
  if (auto l = j.find("physical_limits")) r.limits = parse_limits(*l);
  if (auto f = j.find("failure")) r.failure = f->measurement<gpu::Failure>();
  if (auto g = j.find("guard")) {
    auto mode = gpu::guard_mode_from_string(g->str());
    if (!mode) g->fail(fmt::format("unknown guard mode '{}' (vmm, canary, exact)", g->str()));
    r.guard = *mode;
  }
  if (auto n = j.find("guard_note")) r.guard_note = n->str();
  if (auto p = j.find("proofs"))
    for (auto& proof : p->items()) r.proofs.push_back(parse_proof(proof));
  if (auto n = j.find("sass_note")) r.sass_note = n->str();
  if (auto n = j.find("executed_note")) r.executed_note = n->str();
  if (auto v = j.find("executed_by")) {
    auto by = verified_by_from_string(v->str());
    if (!by) v->fail(fmt::format("unknown executed_by '{}' (none, gpu or cpu_engine)", v->str()));
    r.executed_by = *by;
  }
  if (auto n = j.find("ncu_note")) r.ncu_note = n->str();
  if (auto p = j.find("profile")) r.profile = parse_profile(*p);
  if (auto f = j.find("flags")) r.flags = f->strings();
  return r;
}

}  // namespace

Result<RunRecord> record_from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return Error{fmt::format("not a complete JSON document (cut off or damaged?): {}", plain_message(e))};
  }
  if (!j.is_object()) return Error{fmt::format("not a run record: expected a JSON object, found {}", j.type_name())};
  try {
    return parse_record(Node(j, ""));
  } catch (const Bad& b) {
    return Error{"not a run record: " + b.message};
  }
}
}  // namespace ptxforge::eval
