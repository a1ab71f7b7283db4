// The stage functions, their table (eval/stages.h) and the Pipeline that walks it. Each
// stage reads what the earlier ones left in the Candidate and the record and returns its own
// verdict; the GPU stages send jobs to the worker with the launch spec check resolved.
#include "eval/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/engine_path.h"
#include "eval/held_back.h"
#include "eval/limits.h"
#include "eval/profile.h"
#include "eval/sanitize.h"
#include "eval/target_gate.h"
#include "gpu/locate_fault.h"
#include "gpu/protocol.h"
#include "ptx/front_end.h"
#include "ptx/parser.h"
#include "task/launch_spec.h"
#include "task/seeds.h"
#include "toolchain/nvcc.h"
#include "toolchain/nvrtc.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string plural(size_t n, const char* word) {
  std::string w = word;
  return fmt::format("{} {}{}", n, w, n == 1 ? "" : (w.back() == 'h' ? "es" : "s"));
}

StageResult result(StageStatus status, std::string summary) {
  StageResult r;
  r.status = status;
  r.summary = std::move(summary);
  return r;
}

// A failing case in one line. For a model, a held-back case carries no number that depends on
// its sizes (eval/held_back.h): not its name, counts, indices, values or offsets.
std::string describe_case_failure(const gpu::CaseResult& c, Audience a, const task::Task& task) {
  if (!c.shown && a == Audience::model)
    return fmt::format("a held-back size, seed {}: {}", c.seed_index, held_back_case_lines(c, task)[0]);
  std::vector<std::string> why = c.problems;
  for (auto& o : c.outputs)
    if (!o.pass)
      why.push_back(fmt::format("'{}' has {} of {} elements wrong{}", o.output, o.mismatches, o.count,
                                o.hint.empty() ? "" : " (" + o.hint + ")"));
  std::string place = c.shown ? fmt::format("size set '{}'", c.size_set) : fmt::format("size set '{}' (held back)", c.size_set);
  // The CPU engine names the first wrong element and its last writer (docs/emu.md, section 6).
  std::string first_wrong = c.wrong.empty() ? "" : "; first wrong element " + describe_wrong_element(c.wrong.front());
  return fmt::format("{}, seed {}: {}{}", place, c.seed_index, why.empty() ? "failed" : why[0], first_wrong);
}

// A runtime failure in one line; for a model, one on a held-back size is its kind and class
// only (a fault's message carries offsets and buffer sizes).
std::string describe_failure(const gpu::Failure& f, Audience a, const task::Task& task) {
  if (f.held_back && a == Audience::model)
    return held_back_failure_text(f, task) + " (on a held-back size, not shown to you)";
  std::string where = f.where.empty() ? "" : " (" + f.where + ")";
  return fmt::format("{}: {}{}{}", to_string(f.kind), f.message, finding_suffix(f), where);
}

// A candidate over one of ptxforge's policy limits (eval/limits.h): its findings join the
// diagnostics, on the candidate's lines, and the stage fails naming the first.
StageResult over_limit(RunRecord& r, const Diagnostics& found, const std::string& file, const std::string& after) {
  for (auto& d : found.list()) r.diagnostics.add(d);
  const Diagnostic& first = found.list().front();
  std::string at = first.loc.line ? fmt::format("{}:{}: ", file, first.loc.line) : std::string();
  size_t more = found.list().size() - 1;
  return result(StageStatus::failed, fmt::format("{}{} [{}]{}; {}", at, first.message, first.check_id,
                                                 more ? fmt::format(" (and {} more)", more) : "", after));
}

}  // namespace

double StageContext::stage_seconds() const { return since(stage_started); }

// check: the PTX (from NVRTC for a .cu candidate), the front end, the launch spec.
StageResult check(StageContext& ctx) {
  Candidate& c = ctx.candidate;
  RunRecord& r = ctx.record;
  auto text = read_file(c.path);
  if (!text) return result(StageStatus::failed, text.error().message);
  c.ptx_name = c.path;
  c.ptx = *text;
  std::string spec_text = *text;  // where the `// @launch` lines are read
  std::string compiled_by;        // which compiler made the PTX, when it was not NVRTC, and why
  if (ends_with(c.path, ".cu")) {
    auto compiled = toolchain::compile_cuda_to_ptx(*text, c.path, r.arch);
    if (!compiled) return result(StageStatus::failed, compiled.error().message);
    c.ptx = compiled->ptx;
    if (compiled->compiler == toolchain::CudaCompiler::nvcc) compiled_by = "; " + compiled->note;
    // The launch spec stays in the .cu's comments; the PTX is written beside it, spec first.
    c.ptx_name = ctx.work_dir + "/candidate.ptx";
    std::string with_spec;
    for (auto line : split(*text, '\n'))
      // Every `// @` line, typos included, so that a misspelt directive is reported, not dropped.
      if (starts_with(trim(line), "// @")) with_spec += std::string(trim(line)) + "\n";
    spec_text = with_spec + c.ptx;
    if (auto s = write_file(c.ptx_name, spec_text); !s) return result(StageStatus::failed, s.error().message);
  }
  r.source_name = c.ptx_name;
  r.source_text = c.ptx;
  ptx::CheckResult fe = ptx::check_source(c.ptx);
  r.diagnostics = fe.diags;
  std::string counts = fmt::format("{}, {}", plural(fe.diags.error_count(), "error"), plural(fe.diags.warning_count(), "warning"));
  if (!fe.ok()) return result(StageStatus::failed, counts);
  c.module = std::move(fe.module);
  Result<task::LaunchSpec> spec = Error{""};
  if (!ctx.opts.launch_path.empty()) {
    auto lt = read_file(ctx.opts.launch_path);
    spec = lt ? task::parse_launch_toml(*lt, ctx.opts.launch_path) : Result<task::LaunchSpec>(lt.error());
  } else {
    spec = task::parse_launch_comments(spec_text, c.ptx_name);
  }
  if (spec) {
    if (auto s = task::check_launch_spec(*spec, ctx.task, c.module, c.ptx_name); !s) spec = s.error();
  }
  if (!spec) return result(StageStatus::failed, "launch spec: " + spec.error().message);
  c.launch = std::move(*spec);
  return result(StageStatus::passed,
                fmt::format("{}; launch spec: {}{}", counts, plural(c.launch.launches.size(), "launch"), compiled_by));
}

StageResult assemble(StageContext& ctx) {
  Candidate& c = ctx.candidate;
  RunRecord& r = ctx.record;
  // Policy first: a module over a limit never reaches ptxas (a huge .align alone makes it write
  // a cubin of that size), so nothing after this does work on it.
  PolicyInput in{c.ptx.size(), 0, ctx.task.device_heap_bytes};
  if (ends_with(c.path, ".cu")) {
    std::error_code ec;
    auto bytes = std::filesystem::file_size(c.path, ec);
    if (!ec) in.cuda_bytes = bytes;
  }
  if (Diagnostics found = check_policy(c.module, in); !found.empty())
    return over_limit(r, found, c.ptx_name, "not assembled");
  // The CPU engine runs the PTX itself: without ptxas the candidate goes on unassembled.
  if (ctx.on_engine && !find_cuda_tool("ptxas")) return result(StageStatus::skipped, "no ptxas: not assembled");
  toolchain::AssembleOptions aopts;
  aopts.arch = r.arch;
  if (!c.ptx_name.empty()) aopts.source_name = c.ptx_name;  // ptxas's messages name the candidate
  auto asmr = toolchain::assemble(c.ptx, aopts);
  if (!asmr) return result(StageStatus::failed, asmr.error().message);
  for (auto& d : asmr->diags.list()) r.diagnostics.add(d);
  r.resources = asmr->functions;
  c.resources = asmr->functions;
  if (!asmr->ok) return result(StageStatus::failed, fmt::format("ptxas: {}", plural(asmr->diags.error_count(), "error")));
  if (Diagnostics found = check_cubin_size(asmr->cubin.size()); !found.empty())
    return over_limit(r, found, c.ptx_name, "the cubin is not kept");
  std::string cubin = ctx.work_dir + "/candidate.cubin";
  if (auto s = write_file(cubin, asmr->cubin); !s) return result(StageStatus::failed, s.error().message);
  c.cubin_path = cubin;
  int regs = 0, spills = 0;
  for (auto& f : asmr->functions)
    if (f.is_entry) {
      regs = std::max(regs, f.registers);
      spills += f.spill_stores + f.spill_loads;
    }
  return result(StageStatus::passed, fmt::format("{} for {}: {} registers, {} spill bytes", asmr->backend, r.arch, regs, spills));
}

// verify, on the GPU worker: every size set (held-back ones too, unless --sizes shown) and seed.
// On the CPU engine: the candidate's and the reference's PTX, on the task's CPU size sets.
StageResult verify(StageContext& ctx) {
  RunRecord& r = ctx.record;
  // A GPU that cannot run the task's target would fail to load the cubin with a driver error
  // naming neither target: say why instead, as "no GPU" does (eval/target_gate.h).
  if (!ctx.on_engine && ctx.device)
    if (const auto& info = ctx.device(); info)
      if (auto gap = target_gap(ctx.task.min_target, info->arch())) {
        ctx.halt = true;
        return result(StageStatus::skipped, fmt::format("NOT verified: {} (checked and assembled for {})", *gap, r.arch));
      }
  gpu::Job job;
  job.kind = gpu::JobKind::verify;
  job.task_dir = ctx.task.dir;
  job.launch = ctx.candidate.launch;
  job.candidate_cubin = ctx.candidate.cubin_path;
  job.held_back = ctx.opts.held_back;
  job.seeds = ctx.opts.seeds;
  job.seed = r.seed;
  std::string reference_note;
  if (ctx.on_engine) {
    auto ref = reference_ptx(ctx.task, cache_dir());
    if (!ref) return result(StageStatus::failed, "the task's reference has no PTX for the CPU engine: " + ref.error().message);
    job.candidate_ptx = ctx.candidate.ptx_name;  // the PTX check read (for a .cu: NVRTC's, with the launch lines)
    job.reference_ptx = ref->path;
    job.size_sets = cpu_size_sets(ctx.task, ctx.opts.held_back);
    reference_note = ref->source;
  } else {
    auto ref = toolchain::build_reference(ctx.task.dir + "/reference.cu", r.arch);
    if (!ref) return result(StageStatus::failed, "the task's reference does not build: " + ref.error().message);
    job.reference_cubin = ref->cubin_path;
  }
  ctx.job = job;
  gpu::Outcome out = ctx.worker.run(job, ctx.on_engine ? ctx.opts.verify_timeout * kEngineTimeoutFactor : ctx.opts.verify_timeout);
  if (out.guard) {
    r.guard = out.guard;
    r.guard_note = out.guard_note;
  }
  if (out.failure && out.failure->out_of_bounds && !ctx.on_engine) {
    // The worker is gone with its context; fresh ones run the case again to name the buffer.
    if (auto at = gpu::locate_out_of_bounds(ctx.worker, job, *out.failure, ctx.opts.verify_timeout))
      gpu::name_fault_buffer(*out.failure, *at);
  }
  if (out.failure) {
    r.failure = out.failure;
    r.check_wall_s = since(ctx.run_started);
    // A kernel the engine does not run (mma, TMA, ...) is not verified: never a pass, never a
    // wrong fail (docs/emu.md, section 9). The verdict says so; nothing after this can run.
    if (ctx.on_engine && out.failure->kind == gpu::FailureKind::unsupported) {
      ctx.halt = true;
      // A task for a newer GPU than the engine's stand-in target says which one would run it.
      std::string want = assemble_target(ctx.task.min_target, "sm_90a");
      std::string needs = want != "sm_90a" ? fmt::format(" (the task needs an {} GPU)", want) : "";
      StageResult s = result(StageStatus::skipped, "NOT verified: " + out.failure->message + needs);
      s.seconds = ctx.stage_seconds();
      return s;
    }
    if (out.failure->kind == gpu::FailureKind::driver) {
      ctx.halt = true;  // no GPU here: nothing after this can run
      StageResult s = result(StageStatus::skipped, "NOT verified on a GPU: " + out.failure->message);
      s.seconds = ctx.stage_seconds();
      return s;
    }
    StageResult s = result(StageStatus::failed, describe_failure(*out.failure, Audience::person, ctx.task));
    s.held_back = out.failure->held_back;
    if (s.held_back) s.model_summary = describe_failure(*out.failure, Audience::model, ctx.task);
    return s;
  }
  r.verify = out.verify;
  if (!r.verify) {
    r.verify = gpu::VerifyReport{};  // a reply without cases verifies nothing
    return result(StageStatus::failed, "the worker returned no cases");
  }
  r.check_wall_s = since(ctx.run_started);
  for (auto& c : r.verify->cases)
    if (!c.pass) {
      StageResult s = result(StageStatus::failed, describe_case_failure(c, Audience::person, ctx.task));
      s.held_back = !c.shown;
      if (s.held_back) s.model_summary = describe_case_failure(c, Audience::model, ctx.task);
      return s;
    }
  size_t held = 0;
  for (auto& c : r.verify->cases) held += c.shown ? 0 : 1;
  if (ctx.on_engine) {
    // A pass must cover every set asked for: an engine that skipped one has not verified it.
    for (auto& set : job.size_sets)
      if (std::none_of(r.verify->cases.begin(), r.verify->cases.end(), [&](auto& c) { return c.size_set == set; }))
        return result(StageStatus::failed, fmt::format("the CPU engine returned no case for size set '{}'", set));
    r.verified_by = VerifiedBy::cpu_engine;
    return result(StageStatus::passed, fmt::format("{} passed ({} on held-back sizes) on the CPU engine, size sets {}; "
                                                   "reference PTX from {}; engine {:.3f} s",
                                                   plural(r.verify->cases.size(), "case"), held, fmt::join(job.size_sets, ", "),
                                                   reference_note, r.verify->seconds));
  }
  r.gpu_verified = true;
  r.verified_by = VerifiedBy::gpu;
  const gpu::VerifyPhases& p = r.verify->phases;
  return result(StageStatus::passed,
                fmt::format("{} passed ({} on held-back sizes), worker {:.3f} s (inputs {:.3f}, reference {:.3f}, "
                            "candidate {:.3f}, comparison {:.3f})",
                            plural(r.verify->cases.size(), "case"), held, r.verify->seconds, p.inputs_s, p.reference_s,
                            p.candidate_s, p.compare_s));
}

// The verify job again under each of compute-sanitizer's tools (eval/sanitize.h), each in a
// worker of its own started under the sanitizer, on the size sets where the tool can bite.
// The first tool that reports an error, or whose run does not finish cleanly, fails the stage.
StageResult sanitize(StageContext& ctx) {
  if (ctx.on_engine) return result(StageStatus::skipped, "the CPU engine's checks ran in verify");
  std::optional<std::string> tool = ctx.opts.sanitizer.empty() ? find_cuda_tool("compute-sanitizer") : ctx.opts.sanitizer;
  if (!tool) return result(StageStatus::skipped, "compute-sanitizer is not installed");
  if (ctx.worker_argv.empty()) return result(StageStatus::skipped, "no worker process to run under compute-sanitizer");
  auto help = run_process({*tool, "--help"}, std::chrono::seconds(30));
  bool shared_initcheck = help && (help->out + help->err).find("initcheck-address-space") != std::string::npos;
  auto timeout = ctx.opts.verify_timeout * 20;  // the tools slow kernels down 10-100x
  std::vector<std::string> passed;
  for (SanitizerTool which : kSanitizerTools) {
    gpu::Job job = sanitizer_job(*ctx.job, ctx.task, which);
    std::string log = fmt::format("{}/{}.log", ctx.work_dir, to_string(which));
    gpu::WorkerClient sanitized(sanitizer_argv(*tool, which, log, shared_initcheck, ctx.worker_argv));
    auto ex = sanitized.exchange(gpu::encode_job(job), timeout);
    std::optional<gpu::Outcome> out;
    std::string exchange_error = ex.ok ? "" : fmt::format("{}: {}", to_string(ex.failure.kind), ex.failure.message);
    if (ex.ok) {
      auto decoded = gpu::decode_outcome(ex.reply);
      if (decoded) out = *decoded;
      else exchange_error = decoded.error().message;
    }
    int code = sanitized.finish(std::chrono::seconds(120));
    auto text = read_file(log);
    ToolVerdict v = judge_sanitizer(which, parse_sanitizer_log(text ? *text : ""), code, out, exchange_error);
    if (!v.passed) {
      StageResult s = result(StageStatus::failed, v.summary);
      for (auto& set : ctx.task.sizes)
        if (!set.shown && std::find(job.size_sets.begin(), job.size_sets.end(), set.name) != job.size_sets.end()) s.held_back = true;
      // The tool ran on a held-back set too: its counts and report lines may carry its sizes.
      if (s.held_back) s.model_summary = held_back_sanitizer_text(v.model_summary, ctx.task);
      return s;
    }
    passed.push_back(std::string(to_string(which)) + (which == SanitizerTool::initcheck && !shared_initcheck ? " (global memory only)" : ""));
  }
  return result(StageStatus::passed, fmt::format("0 errors from {}", fmt::join(passed, ", ")));
}

StageResult time(StageContext& ctx) {
  RunRecord& r = ctx.record;
  if (!ctx.opts.time) return result(StageStatus::skipped, "not asked for (--no-time)");
  if (ctx.on_engine) return result(StageStatus::skipped, "not timed: CPU engine");  // never an invented time
  gpu::Job job = *ctx.job;
  job.kind = gpu::JobKind::time;
  job.max_trials = 100;
  job.budget_s = ctx.task.time_budget_s;
  auto limit = std::chrono::milliseconds(static_cast<int64_t>(ctx.task.time_budget_s * 4000)) + ctx.opts.verify_timeout;
  gpu::Outcome t = ctx.worker.run(job, limit);
  if (t.failure) {
    r.failure = t.failure;
    StageResult s = result(StageStatus::failed, fmt::format("{}: {}", to_string(t.failure->kind), t.failure->message));
    s.held_back = t.failure->held_back;  // the time stage runs shown sets; should that change, this holds
    if (s.held_back) s.model_summary = describe_failure(*t.failure, Audience::model, ctx.task);
    return s;
  }
  if (!t.time) return result(StageStatus::failed, "the worker returned no timings");
  r.time = t.time;
  std::vector<std::string> parts;
  for (auto& s : r.time->sizes) {
    double speedup = s.candidate.median_ms > 0 ? s.reference.median_ms / s.candidate.median_ms : 0;
    parts.push_back(fmt::format("{} {:.4f} ms ({:.2f}x nvcc)", s.size_set, s.candidate.median_ms, speedup));
  }
  // The physical-limit gate and the library ratio (eval/time_gate.h).
  static const Result<gpu::DevicePeaks> no_peaks = Error{"the GPU's peaks are not available here"};
  static const Result<gpu::DeviceInfo> no_device = Error{"the GPU's facts are not available here"};
  const Result<gpu::DevicePeaks>& measured = ctx.peaks ? ctx.peaks() : no_peaks;
  const Result<gpu::DeviceInfo>& info = ctx.device ? ctx.device() : no_device;
  GatePeaks gp = gate_peaks(ctx.task, measured, info ? std::optional<gpu::DeviceInfo>(*info) : std::nullopt);
  TimeVerdict verdict = judge_times(ctx.task, *r.time, gp.limits);
  r.limits = PhysicalLimits{gp.note, gp.limits, verdict.rows};
  for (auto& n : r.time->notes) r.flags.push_back(n);
  for (auto& n : verdict.notes) r.flags.push_back(n);
  if (!r.time->trials_pass) return result(StageStatus::failed, r.time->trial_problem);
  if (!r.time->reverify_pass) return result(StageStatus::failed, r.time->reverify_problem);
  if (!verdict.problems.empty()) {
    if (!ctx.opts.allow_suspicious) return result(StageStatus::failed, fmt::format("{}", fmt::join(verdict.problems, "; ")));
    for (auto& p : verdict.problems) r.flags.push_back(p + " (let through by --allow-suspicious)");
  }
  size_t checked = 0;
  int sets = 0;
  for (auto& s : r.time->sizes) {
    checked += s.checked.size();
    sets = std::max(sets, s.input_sets);
  }
  std::string summary = fmt::format("median {}; {} input sets, {} checked", fmt::join(parts, ", "), sets,
                                    plural(checked, "timed trial"));
  if (!measured) summary += "; " + gp.note;
  return result(StageStatus::passed, summary);
}

const std::vector<Stage>& stage_table() {
  static const std::vector<Stage> table = {
      {StageId::check, check},
      {StageId::assemble, assemble},
      {StageId::verify, verify},
      {StageId::sanitize, sanitize, [](const RunOptions& o) { return o.sanitize; }},
      {StageId::time, time},
      {StageId::prove, prove, nullptr, /*after_stop=*/true},
      {StageId::profile, profile, [](const RunOptions& o) { return o.profile; }},
  };
  return table;
}

namespace {

// Where a stage goes in the record: its own place if listed, else before the first listed
// stage that comes after it in the table (sanitize lands between verify and time).
StageResult& place(RunRecord& r, StageId id) {
  for (auto& s : r.stages)
    if (s.id == id) return s;
  const auto& table = stage_table();
  auto index = [&](StageId x) {
    for (size_t i = 0; i < table.size(); ++i)
      if (table[i].id == x) return i;
    return table.size();
  };
  auto at = r.stages.begin();
  while (at != r.stages.end() && index(at->id) < index(id)) ++at;
  StageResult fresh;
  fresh.id = id;
  return *r.stages.insert(at, fresh);
}

}  // namespace

Pipeline::Pipeline(std::vector<std::string> worker_argv)
    : worker_argv_(worker_argv), client_(std::make_unique<gpu::WorkerClient>(std::move(worker_argv))), runner_(*client_) {
  if (worker_argv_.size() >= 2 && worker_argv_[1] == "worker") engine_argv_ = {worker_argv_[0], "emu-worker"};
}
Pipeline::Pipeline(gpu::JobRunner& runner) : runner_(runner) {}
Pipeline::Pipeline(gpu::JobRunner& runner, gpu::JobRunner& engine) : runner_(runner), engine_runner_(&engine) {}
Pipeline::~Pipeline() = default;

// As gpu::ask_device_info, keeping the failure's kind: `auto` takes the engine on `driver` only.
const Result<gpu::DeviceInfo>& Pipeline::device() {
  if (!device_) {
    gpu::Job job;
    job.kind = gpu::JobKind::device;
    gpu::Outcome o = runner_.run(job, std::chrono::seconds(60));
    if (o.failure) {
      no_gpu_ = o.failure->kind == gpu::FailureKind::driver;
      device_ = Result<gpu::DeviceInfo>(Error{o.failure->message});
    } else if (!o.device) {
      device_ = Result<gpu::DeviceInfo>(Error{"the worker did not describe the GPU"});
    } else {
      device_ = *o.device;
    }
  }
  return *device_;
}

bool Pipeline::uses_engine(const RunOptions& opts) {
  switch (opts.device) {
    case Device::gpu: return false;
    case Device::cpu: return true;
    // Without an engine (a pipeline on a test's fake worker), auto keeps today's "NOT verified".
    case Device::automatic: device(); return no_gpu_ && (engine_runner_ || !engine_argv_.empty());
  }
  return false;
}

gpu::JobRunner& Pipeline::engine() {
  if (engine_runner_) return *engine_runner_;
  if (engine_argv_.empty()) return no_engine_;
  engine_client_ = std::make_unique<gpu::WorkerClient>(engine_argv_);
  engine_runner_ = engine_client_.get();
  return *engine_runner_;
}

const Result<gpu::DevicePeaks>& Pipeline::peaks() {
  if (!peaks_) {
    const auto& info = device();
    if (!info) peaks_ = Result<gpu::DevicePeaks>(info.error());
    else
      peaks_ = gpu::device_peaks(runner_, *info, peaks_cache_dir_.empty() ? cache_dir() : peaks_cache_dir_, false);
  }
  return *peaks_;
}

// The target to assemble for: the GPU's own (sm_90a on an H200), else sm_90a; the task's
// min_target where that one does not satisfy it (a tcgen05 task on an H200 is still checked
// and assembled for sm_100a; verify then says why it did not run, eval/target_gate.h).
std::string Pipeline::pick_arch(const RunOptions& opts, const task::Task& task) {
  if (!opts.arch.empty()) return opts.arch;
  std::string have = "sm_90a";
  // --device cpu never starts the GPU worker
  if (opts.device != Device::cpu)
    if (auto& info = device(); info) have = info->arch();
  return assemble_target(task.min_target, have);
}

RunRecord Pipeline::run(const task::Task& task, const std::string& candidate_path, const RunOptions& opts) {
  RunRecord r;
  r.task = task.name;
  r.candidate = candidate_path;
  r.arch = pick_arch(opts, task);
  r.seed = opts.seed ? *opts.seed : task::fresh_seed();
  for (auto& st : stage_table())
    if (!st.wanted) r.stage(st.id);
  last_job_.reset();
  work_.reset();
  auto made = TempDir::create("ptxforge-run");
  if (!made) {
    StageResult& check = r.stage(StageId::check);
    check.status = StageStatus::failed;
    check.summary = made.error().message;
    return r;
  }
  work_.emplace(std::move(*made));
  last_on_engine_ = uses_engine(opts);
  StageContext ctx{task, opts, last_on_engine_ ? engine() : runner_, worker_argv_, work_->path(), r, {}, std::nullopt,
                   std::chrono::steady_clock::now(), {}, false, last_on_engine_,
                   [this]() -> const Result<gpu::DeviceInfo>& { return device(); },
                   [this]() -> const Result<gpu::DevicePeaks>& { return peaks(); }};
  ctx.candidate.path = candidate_path;
  bool stopped = false;
  for (const Stage& st : stage_table()) {
    if (st.wanted && !st.wanted(opts)) continue;
    if (stopped && !(st.after_stop && ctx.candidate.assembled())) continue;
    if (hooks_.before) hooks_.before(st.id);
    ctx.stage_started = std::chrono::steady_clock::now();
    ctx.halt = false;
    StageResult res = st.run(ctx);
    double seconds = ctx.stage_seconds();
    res.id = st.id;
    if (st.timed && res.status != StageStatus::skipped) res.seconds = seconds;
    place(r, st.id) = res;
    if (hooks_.after) hooks_.after(res, seconds);
    stopped = stopped || res.status == StageStatus::failed || ctx.halt;
  }
  last_job_ = ctx.job;
  r.passed = r.verified_by != VerifiedBy::none;
  for (auto& s : r.stages) r.passed = r.passed && s.status != StageStatus::failed;
  return r;
}

Result<std::vector<gpu::CaseResult>> Pipeline::check_trivial_outputs(std::chrono::milliseconds timeout) {
  if (!last_job_) return Error{"no candidate reached the GPU stages"};
  gpu::Job job = *last_job_;
  job.kind = gpu::JobKind::trivial;
  gpu::Outcome out = last_on_engine_ ? engine().run(job, timeout * kEngineTimeoutFactor) : runner_.run(job, timeout);
  if (out.failure) return Error{fmt::format("{}: {}", to_string(out.failure->kind), out.failure->message)};
  if (!out.verify) return Error{"the worker returned no cases"};
  return out.verify->cases;
}

}  // namespace ptxforge::eval
