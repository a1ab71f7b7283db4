#include "gpu/protocol.h"

#include <cmath>
#include <stdexcept>
#include <fmt/format.h>

#include "gpu/measurement_json.h"
#include "gpu/peaks_json.h"
#include "task/seeds.h"

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

// The resolved launch spec travels as the text of its expressions; the worker parses those
// expressions back (not the PTX, not the `// @launch` lines).
static SizeExpr expr_from(const json& j) {
  auto e = SizeExpr::parse(j.get<std::string>());
  if (!e) throw std::runtime_error("expression '" + j.get<std::string>() + "': " + e.error().message);
  return *e;
}
static Dim3Expr dim3_from(const json& j) {
  auto e = Dim3Expr::parse(j.get<std::string>());
  if (!e) throw std::runtime_error("shape '" + j.get<std::string>() + "': " + e.error().message);
  return *e;
}
void to_json(json& j, const LaunchSpec& spec) {
  j = {{"launches", json::array()}, {"scratch", json::array()}, {"tensor_maps", json::array()}};
  for (size_t i = 0; i < spec.launches.size(); ++i) {
    const Launch& l = spec.launches[i];
    json lj = {{"entry", l.entry}, {"grid", l.grid.text()}, {"block", l.block.text()}, {"smem", l.smem.text()}, {"args", l.args},
               {"line", i < spec.launch_lines.size() ? spec.launch_lines[i] : 0}};
    if (l.has_cluster) lj["cluster"] = l.cluster.text();
    j["launches"].push_back(lj);
  }
  for (auto& sc : spec.scratch)
    j["scratch"].push_back({{"name", sc.name}, {"dtype", std::string(dtype_name(sc.dtype))}, {"count", sc.count.text()}, {"line", sc.line}});
  for (auto& tm : spec.tensor_maps) {
    json box = json::array();
    for (auto& b : tm.box) box.push_back(b.text());
    j["tensor_maps"].push_back({{"name", tm.name}, {"box", box}, {"swizzle", tm.swizzle}, {"interleave", tm.interleave},
                                {"l2", tm.l2_promotion}, {"oob", tm.oob_fill}, {"line", tm.line}});
  }
}
void from_json(const json& j, LaunchSpec& spec) {
  spec = {};
  for (auto& lj : j.at("launches")) {
    Launch l;
    l.entry = lj.at("entry");
    l.grid = dim3_from(lj.at("grid"));
    l.block = dim3_from(lj.at("block"));
    if (lj.contains("cluster")) {
      l.cluster = dim3_from(lj.at("cluster"));
      l.has_cluster = true;
    }
    l.smem = expr_from(lj.at("smem"));
    l.args = lj.at("args").get<std::vector<std::string>>();
    spec.launches.push_back(std::move(l));
    spec.launch_lines.push_back(lj.value("line", 0));
  }
  for (auto& sj : j.value("scratch", json::array())) {
    Scratch sc;
    sc.name = sj.at("name");
    auto dt = parse_dtype(sj.at("dtype").get<std::string>());
    if (!dt) throw std::runtime_error("unknown dtype " + sj.at("dtype").dump());
    sc.dtype = *dt;
    sc.count = expr_from(sj.at("count"));
    sc.line = sj.value("line", 0);
    spec.scratch.push_back(std::move(sc));
  }
  for (auto& tj : j.value("tensor_maps", json::array())) {
    TensorMapChoice tm;
    tm.name = tj.at("name");
    for (auto& b : tj.at("box")) tm.box.push_back(expr_from(b));
    tm.swizzle = tj.value("swizzle", "none");
    tm.interleave = tj.value("interleave", "none");
    tm.l2_promotion = tj.value("l2", "none");
    tm.oob_fill = tj.value("oob", "zero");
    tm.line = tj.value("line", 0);
    spec.tensor_maps.push_back(std::move(tm));
  }
}
}  // namespace ptxforge::task

namespace ptxforge::gpu {

namespace {
constexpr std::pair<JobKind, std::string_view> kJobKinds[] = {
    {JobKind::verify, "verify"}, {JobKind::time, "time"}, {JobKind::trivial, "trivial"}, {JobKind::device, "device_info"},
    {JobKind::peaks, "peaks"},
    {JobKind::locate, "locate"}};
constexpr std::pair<Placement, std::string_view> kPlacements[] = {
    {Placement::guarded, "guarded"}, {Placement::exact, "exact"}, {Placement::exact_unwritten, "exact_unwritten"}};
}  // namespace

std::string_view to_string(Placement p) {
  for (auto& [kind, name] : kPlacements)
    if (kind == p) return name;
  return "?";
}

std::optional<Placement> placement_from_string(std::string_view s) {
  for (auto& [kind, name] : kPlacements)
    if (name == s) return kind;
  return std::nullopt;
}

std::string_view to_string(JobKind k) {
  for (auto& [kind, name] : kJobKinds)
    if (kind == k) return name;
  return "?";
}

std::optional<JobKind> job_kind_from_string(std::string_view s) {
  for (auto& [kind, name] : kJobKinds)
    if (name == s) return kind;
  return std::nullopt;
}

static json dim3_json(const std::array<uint32_t, 3>& d) { return json::array({d[0], d[1], d[2]}); }
static std::array<uint32_t, 3> dim3_of(const json& j) {
  if (!j.is_array() || j.size() != 3) throw std::runtime_error("a thread or CTA index is not three numbers: " + j.dump());
  return {j[0].get<uint32_t>(), j[1].get<uint32_t>(), j[2].get<uint32_t>()};
}
void to_json(json& j, const EmuThread& t) { j = {{"cta", dim3_json(t.cta)}, {"thread", dim3_json(t.thread)}}; }
void from_json(const json& j, EmuThread& t) {
  t.cta = dim3_of(j.at("cta"));
  t.thread = dim3_of(j.at("thread"));
}
void to_json(json& j, const EmuFinding& f) {
  j = {{"check", f.check}, {"line", f.line}, {"col", f.col}};
  if (f.thread) j["thread"] = *f.thread;
  if (!f.buffer.empty()) {
    j["buffer"] = f.buffer;
    j["offset"] = f.offset;
  }
  if (f.other)
    j["other"] = {{"line", f.other->line}, {"col", f.other->col}, {"thread", f.other->thread}, {"write", f.other->write}};
}
void from_json(const json& j, EmuFinding& f) {
  f.check = j.at("check");
  f.line = j.value("line", 0u);
  f.col = j.value("col", 0u);
  if (j.contains("thread")) f.thread = j.at("thread").get<EmuThread>();
  f.buffer = j.value("buffer", "");
  f.offset = j.value("offset", uint64_t{0});
  if (j.contains("other")) {
    const json& o = j.at("other");
    f.other = EmuFinding::Other{o.value("line", 0u), o.value("col", 0u), o.at("thread").get<EmuThread>(),
                                o.value("write", false)};
  }
}
void to_json(json& j, const WrongElement& w) {
  j = {{"output", w.output}, {"index", w.index}, {"expected", w.expected}, {"actual", w.actual}};
  if (!w.multi_index.empty()) j["multi_index"] = w.multi_index;
  if (w.never_written) j["never_written"] = true;
  if (w.writer) j["writer"] = {{"thread", w.writer->thread}, {"line", w.writer->line}};
}
void from_json(const json& j, WrongElement& w) {
  w.output = j.at("output");
  w.index = j.at("index");
  w.expected = j.at("expected");
  w.actual = j.at("actual");
  w.multi_index = j.value("multi_index", std::vector<int64_t>{});
  w.never_written = j.value("never_written", false);
  if (j.contains("writer"))
    w.writer = WrongElement::Writer{j.at("writer").at("thread").get<EmuThread>(), j.at("writer").value("line", 0u)};
}
void to_json(json& j, const InstructionCount& c) {
  j = {{"line", c.line}, {"col", c.col}, {"opcode", c.opcode}, {"warp_issues", c.warp_issues},
       {"lane_executions", c.lane_executions}};
}
void from_json(const json& j, InstructionCount& c) {
  c.line = j.at("line");
  c.col = j.value("col", 0u);
  c.opcode = j.value("opcode", "");
  c.warp_issues = j.at("warp_issues");
  c.lane_executions = j.at("lane_executions");
}

void to_json(json& j, const Failure& f) {
  j = {{"kind", std::string(to_string(f.kind))}, {"message", f.message}, {"where", f.where}};
  if (f.held_back) j["held_back"] = true;  // `where` names a held-back size set
  if (f.out_of_bounds) {
    j["out_of_bounds"] = true;
    j["size_set"] = f.size_set;
    j["seed"] = f.seed;
    j["guarded"] = f.guarded;
  }
  if (f.finding) j["finding"] = *f.finding;
}
void from_json(const json& j, Failure& f) {
  std::string kind = j.at("kind");
  auto k = failure_kind_from_string(kind);
  if (!k) throw std::runtime_error(fmt::format("unknown failure kind '{}'", kind));
  f.kind = *k;
  f.message = j.at("message");
  f.where = j.value("where", "");
  f.held_back = j.value("held_back", false);
  f.out_of_bounds = j.value("out_of_bounds", false);
  f.size_set = j.value("size_set", "");
  f.seed = j.value("seed", uint64_t{0});
  f.guarded = j.value("guarded", std::vector<std::string>{});
  if (j.contains("finding")) f.finding = j.at("finding").get<EmuFinding>();
}
void to_json(json& j, const DeviceInfo& d) {
  j = {{"name", d.name},
       {"cc_major", d.cc_major},
       {"cc_minor", d.cc_minor},
       {"sms", d.sms},
       {"max_threads_per_block", d.max_threads_per_block},
       {"shared_per_block", d.shared_per_block},
       {"shared_per_block_optin", d.shared_per_block_optin},
       {"shared_per_sm", d.shared_per_sm},
       {"registers_per_block", d.registers_per_block},
       {"registers_per_sm", d.registers_per_sm},
       {"l2_bytes", d.l2_bytes},
       {"memory_bytes", d.memory_bytes},
       {"clock_khz", d.clock_khz},
       {"memory_clock_khz", d.memory_clock_khz},
       {"bus_width_bits", d.bus_width_bits},
       {"driver_version", d.driver_version},
       {"ordinal", d.ordinal},
       {"device_count", d.device_count}};
}
void from_json(const json& j, DeviceInfo& d) {
  d.name = j.at("name");
  d.cc_major = j.at("cc_major");
  d.cc_minor = j.at("cc_minor");
  d.sms = j.value("sms", 0);
  d.max_threads_per_block = j.value("max_threads_per_block", 0);
  d.shared_per_block = j.value("shared_per_block", 0);
  d.shared_per_block_optin = j.value("shared_per_block_optin", 0);
  d.shared_per_sm = j.value("shared_per_sm", 0);
  d.registers_per_block = j.value("registers_per_block", 0);
  d.registers_per_sm = j.value("registers_per_sm", 0);
  d.l2_bytes = j.value("l2_bytes", 0);
  d.memory_bytes = j.value("memory_bytes", size_t{0});
  d.clock_khz = j.value("clock_khz", 0);
  d.memory_clock_khz = j.value("memory_clock_khz", 0);
  d.bus_width_bits = j.value("bus_width_bits", 0);
  d.driver_version = j.value("driver_version", 0);
  d.ordinal = j.value("ordinal", 0);
  d.device_count = j.value("device_count", 0);
}
// Seeds travel as decimal strings: JSON readers outside this program keep only 53 bits of a number.
static json seed_json(uint64_t seed) { return task::seed_text(seed); }
static uint64_t seed_from(const json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  auto s = task::parse_seed(j.get<std::string>());
  if (!s) throw std::runtime_error(s.error().message);
  return *s;
}
void to_json(json& j, const CaseResult& c) {
  j = {{"trivial", c.trivial},       {"size_set", c.size_set}, {"shown", c.shown},     {"seed", seed_json(c.seed)},
       {"seed_index", c.seed_index}, {"pass", c.pass},         {"outputs", c.outputs}, {"problems", c.problems}};
  if (!c.executed.empty()) j["executed"] = c.executed;
  if (c.output_digest) j["output_digest"] = seed_json(c.output_digest);
  if (!c.wrong.empty()) j["wrong"] = c.wrong;
}
void from_json(const json& j, CaseResult& c) {
  c.trivial = j.value("trivial", "");
  c.size_set = j.at("size_set");
  c.shown = j.at("shown");
  c.seed = seed_from(j.at("seed"));
  c.seed_index = j.value("seed_index", 0);
  c.pass = j.at("pass");
  c.outputs = j.at("outputs").get<std::vector<task::Comparison>>();
  c.problems = j.at("problems").get<std::vector<std::string>>();
  c.executed = j.value("executed", std::vector<uint64_t>{});
  c.output_digest = j.contains("output_digest") ? seed_from(j.at("output_digest")) : 0;
  c.wrong = j.value("wrong", std::vector<WrongElement>{});
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
// Every trial is recorded, so a passing one is kept short: "last" and "problem" only when they say something.
void to_json(json& j, const TrialCheck& c) {
  j = {{"trial", c.trial}, {"input_set", c.input_set}, {"pass", c.pass}};
  if (c.last) j["last"] = true;
  if (!c.problem.empty()) j["problem"] = c.problem;
}
void from_json(const json& j, TrialCheck& c) {
  c.trial = j.at("trial");
  c.input_set = j.at("input_set");
  c.last = j.value("last", false);
  c.pass = j.at("pass");
  c.problem = j.value("problem", "");
}
void to_json(json& j, const SizeTiming& t) {
  j = {{"size_set", t.size_set},
       {"candidate", t.candidate},
       {"reference", t.reference},
       {"input_sets", t.input_sets},
       {"trial_cap", t.trial_cap},
       {"checked_trials", t.checked},
       {"seconds",
        {{"expected_s", t.cost.expected_s},
         {"candidate_s", t.cost.candidate_s},
         {"compare_gpu_s", t.cost.compare_gpu_s},
         {"check_s", t.cost.check_s},
         {"baselines_s", t.cost.baselines_s}}}};
  if (t.library) {
    j["library"] = *t.library;
    j["library_name"] = t.library_name;
  }
}
void from_json(const json& j, SizeTiming& t) {
  t.size_set = j.at("size_set");
  t.candidate = j.at("candidate");
  t.reference = j.at("reference");
  t.input_sets = j.value("input_sets", 0);
  t.trial_cap = j.value("trial_cap", 0);
  t.checked = j.value("checked_trials", std::vector<TrialCheck>{});
  if (auto c = j.find("seconds"); c != j.end() && c->is_object()) {
    t.cost.expected_s = c->value("expected_s", 0.0);
    t.cost.candidate_s = c->value("candidate_s", 0.0);
    t.cost.compare_gpu_s = c->value("compare_gpu_s", 0.0);
    t.cost.check_s = c->value("check_s", 0.0);
    t.cost.baselines_s = c->value("baselines_s", 0.0);
  }
  if (j.contains("library")) {
    t.library = j.at("library").get<TimingStats>();
    t.library_name = j.value("library_name", "");
  }
}
void to_json(json& j, const VerifyReport& r) {
  j = {{"cases", r.cases},
       {"seconds", r.seconds},
       {"phases",
        {{"inputs_s", r.phases.inputs_s},
         {"reference_s", r.phases.reference_s},
         {"candidate_s", r.phases.candidate_s},
         {"compare_s", r.phases.compare_s}}}};
  if (!r.executed.empty()) j["executed"] = r.executed;
  j["engine"] = std::string(to_string(r.engine));
  if (!r.counts.empty()) j["counts"] = r.counts;
}
void from_json(const json& j, VerifyReport& r) {
  r.cases = j.at("cases").get<std::vector<CaseResult>>();
  r.executed = j.value("executed", std::vector<uint64_t>{});
  r.seconds = j.at("seconds");
  if (j.contains("phases")) {
    const json& p = j.at("phases");
    r.phases = {p.at("inputs_s"), p.at("reference_s"), p.at("candidate_s"), p.at("compare_s")};
  }
  std::string engine = j.value("engine", "gpu");  // reports from before the CPU engine came from a GPU
  auto e = engine_from_string(engine);
  if (!e) throw std::runtime_error(fmt::format("unknown engine '{}'", engine));
  r.engine = *e;
  r.counts = j.value("counts", std::vector<InstructionCount>{});
}
void to_json(json& j, const TimeReport& r) {
  j = {{"sizes", r.sizes},
       {"trials_pass", r.trials_pass},
       {"trial_problem", r.trial_problem},
       {"reverify_pass", r.reverify_pass},
       {"reverify_problem", r.reverify_problem},
       {"notes", r.notes},
       {"seconds", r.seconds}};
}
void from_json(const json& j, TimeReport& r) {
  r.sizes = j.at("sizes").get<std::vector<SizeTiming>>();
  r.trials_pass = j.value("trials_pass", false);  // a report that does not say so was not checked
  r.trial_problem = j.value("trial_problem", "");
  r.reverify_pass = j.at("reverify_pass");
  r.reverify_problem = j.at("reverify_problem");
  r.notes = j.value("notes", std::vector<std::string>{});
  r.seconds = j.at("seconds");
}

std::string encode_job(const Job& job) {
  json j = {{"op", std::string(to_string(job.kind))},
            {"task_dir", job.task_dir},
            {"launch", job.launch},
            {"candidate_cubin", job.candidate_cubin},
            {"reference_cubin", job.reference_cubin},
            {"held_back", job.held_back},
            {"seeds", job.seeds},
            {"seed", seed_json(job.seed)},
            {"reset_globals", job.reset_globals},
            {"max_trials", job.max_trials},
            {"budget_s", job.budget_s}};
  if (job.placement != Placement::guarded) j["placement"] = std::string(to_string(job.placement));
  if (!job.size_sets.empty()) j["size_sets"] = job.size_sets;
  if (job.executed_slots > 0) j["executed_slots"] = job.executed_slots;
  if (!job.candidate_ptx.empty()) j["candidate_ptx"] = job.candidate_ptx;
  if (!job.reference_ptx.empty()) j["reference_ptx"] = job.reference_ptx;
  if (job.emu_budget != Job::kDefaultEmuBudget) j["emu_budget"] = seed_json(job.emu_budget);
  if (job.kind == JobKind::locate) j["locate"] = {{"size_set", job.locate_set}, {"seed", job.locate_seed}, {"open", job.open_buffer}};
  return j.dump();
}

Result<Job> decode_job(std::string_view line) {
  try {
    json j = json::parse(line);
    Job job;
    std::string op = j.at("op");
    auto kind = job_kind_from_string(op);
    if (!kind) return Error{fmt::format("bad job: unknown op '{}'", op)};
    job.kind = *kind;
    job.task_dir = j.value("task_dir", "");
    if (j.contains("launch")) job.launch = j.at("launch").get<task::LaunchSpec>();
    job.candidate_cubin = j.value("candidate_cubin", "");
    job.reference_cubin = j.value("reference_cubin", "");
    job.held_back = j.value("held_back", true);
    job.seeds = j.value("seeds", 3);
    if (j.contains("seed")) job.seed = seed_from(j.at("seed"));
    job.reset_globals = j.value("reset_globals", true);
    job.max_trials = j.value("max_trials", 100);
    job.budget_s = j.value("budget_s", 10.0);
    std::string placement = j.value("placement", "guarded");
    auto pl = placement_from_string(placement);
    if (!pl) return Error{fmt::format("bad job: unknown placement '{}'", placement)};
    job.placement = *pl;
    job.size_sets = j.value("size_sets", std::vector<std::string>{});
    job.executed_slots = j.value("executed_slots", 0);
    if (job.executed_slots < 0 || job.executed_slots > 1024) return Error{"bad job: executed_slots out of range"};
    job.candidate_ptx = j.value("candidate_ptx", "");
    job.reference_ptx = j.value("reference_ptx", "");
    if (j.contains("emu_budget")) {  // a decimal string: all 64 bits survive
      try {
        job.emu_budget = seed_from(j.at("emu_budget"));
      } catch (const std::exception&) {
        return Error{"bad job: emu_budget is not a whole number of lane-instructions"};
      }
    }
    if (job.emu_budget == 0) return Error{"bad job: emu_budget must be above zero"};
    if (j.contains("locate")) {
      job.locate_set = j["locate"].value("size_set", "");
      job.locate_seed = j["locate"].value("seed", uint64_t{0});
      job.open_buffer = j["locate"].value("open", "");
    }
    return job;
  } catch (const std::exception& e) {
    return Error{fmt::format("bad job: {}", e.what())};
  }
}

std::string encode_outcome(const Outcome& o) {
  json j = json::object();
  if (o.verify) j["verify"] = *o.verify;
  if (o.time) j["time"] = *o.time;
  if (o.device) j["device"] = *o.device;
  if (o.peaks) j["peaks"] = *o.peaks;
  if (o.failure) j["failure"] = *o.failure;
  if (o.guard) j["guard"] = std::string(to_string(*o.guard));
  if (!o.guard_note.empty()) j["guard_note"] = o.guard_note;
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
    if (j.contains("device")) o.device = j.at("device").get<DeviceInfo>();
    if (j.contains("peaks")) o.peaks = j.at("peaks").get<DevicePeaks>();
    if (j.contains("failure")) o.failure = j.at("failure").get<Failure>();
    o.fatal = j.value("fatal", false);
    if (j.contains("guard")) {
      auto g = guard_mode_from_string(j.at("guard").get<std::string>());
      if (!g) return Error{"the worker's reply names an unknown guard mode " + j.at("guard").dump()};
      o.guard = *g;
    }
    o.guard_note = j.value("guard_note", "");
    if (!o.verify && !o.time && !o.device && !o.peaks && !o.failure) return Error{"the worker's reply holds no result"};
    return o;
  } catch (const std::exception& e) {
    return Error{fmt::format("unreadable reply from the worker: {}", e.what())};
  }
}

}  // namespace ptxforge::gpu
