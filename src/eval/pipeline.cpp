#include "eval/pipeline.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>

#include "gpu/driver.h"
#include "ptx/front_end.h"
#include "ptx/parser.h"
#include "task/launch_spec.h"
#include "toolchain/nvcc.h"
#include "toolchain/nvrtc.h"
#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::eval {

namespace fs = std::filesystem;

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string plural(size_t n, const char* word) {
  std::string w = word;
  return fmt::format("{} {}{}", n, w, n == 1 ? "" : (w.back() == 'h' ? "es" : "s"));
}

std::string describe_case_failure(const gpu::CaseResult& c) {
  std::vector<std::string> why = c.problems;
  for (auto& o : c.outputs)
    if (!o.pass)
      why.push_back(fmt::format("'{}' has {} of {} elements wrong{}", o.output, o.mismatches, o.count,
                                o.hint.empty() ? "" : " (" + o.hint + ")"));
  return fmt::format("size set '{}'{}, seed {}: {}", c.size_set, c.shown ? "" : " (held back)", c.seed,
                     why.empty() ? "failed" : why[0]);
}

// The target to assemble for: the GPU's own (sm_90a on an H200), else sm_90a.
std::string pick_arch(const RunOptions& opts) {
  if (!opts.arch.empty()) return opts.arch;
  if (auto info = gpu::device_info()) return info->arch();
  return "sm_90a";
}

}  // namespace

std::vector<InstructionProof> prove_in_ptx(const std::string& ptx, const std::vector<std::string>& families) {
  std::vector<InstructionProof> out;
  for (auto& f : families) out.push_back({f, false, 0, std::nullopt, std::nullopt});
  if (families.empty()) return out;
  Diagnostics diags;
  ptx::Module m = ptx::parse(ptx, diags);
  for (auto& item : m.items) {
    auto* fn = std::get_if<ptx::Function>(&item.node);
    if (!fn || !fn->body) continue;
    ptx::for_each_statement(*fn->body, [&](const ptx::Statement& s) {
      auto* ins = std::get_if<ptx::Instruction>(&s.node);
      if (!ins) return;
      std::string full = ins->full_opcode();
      for (auto& p : out) {
        bool match = starts_with(full, p.family) && (full.size() == p.family.size() || full[p.family.size()] == '.');
        if (match) {
          p.in_ptx = true;
          ++p.ptx_count;
        }
      }
    });
  }
  return out;
}

Pipeline::Pipeline(std::vector<std::string> worker_argv) : worker_(std::move(worker_argv)) {}
Pipeline::~Pipeline() = default;

RunRecord Pipeline::run(const task::Task& task, const std::string& candidate_path, const RunOptions& opts) {
  auto t_start = std::chrono::steady_clock::now();
  RunRecord r;
  r.task = task.name;
  r.candidate = candidate_path;
  r.arch = pick_arch(opts);
  for (const char* s : {"check", "assemble", "verify", "time", "prove"}) r.stage(s);

  // check: the PTX (from NVRTC for a .cu candidate), the front end, the launch spec.
  auto t0 = std::chrono::steady_clock::now();
  StageResult& check = r.stage("check");
  auto text = read_file(candidate_path);
  if (!text) {
    check = {"check", StageStatus::failed, text.error().message, 0};
    return r;
  }
  std::string ptx_path = candidate_path;
  std::string ptx = *text;
  last_job_.reset();
  work_.reset();
  auto made = TempDir::create("ptxforge-run");
  if (!made) {
    check = {"check", StageStatus::failed, made.error().message, 0};
    return r;
  }
  work_.emplace(std::move(*made));
  TempDir* keep = &*work_;
  if (ends_with(candidate_path, ".cu")) {
    auto compiled = toolchain::compile_cuda_to_ptx(*text, candidate_path, r.arch);
    if (!compiled) {
      check = {"check", StageStatus::failed, compiled.error().message, since(t0)};
      return r;
    }
    ptx = compiled->ptx;
    // The launch spec stays in the .cu's comments; the PTX travels with it to the worker.
    ptx_path = keep->path() + "/candidate.ptx";
    std::string with_spec;
    for (auto line : split(*text, '\n'))
      // Every `// @` line, typos included, so that a misspelt directive is reported, not dropped.
      if (starts_with(trim(line), "// @")) with_spec += std::string(trim(line)) + "\n";
    if (auto s = write_file(ptx_path, with_spec + ptx); !s) {
      check = {"check", StageStatus::failed, s.error().message, 0};
      return r;
    }
  }
  r.source_name = ptx_path;
  r.source_text = ptx;
  ptx::CheckResult fe = ptx::check_source(ptx);
  r.diagnostics = fe.diags;
  if (!fe.ok()) {
    check = {"check", StageStatus::failed, fmt::format("{}, {}", plural(fe.diags.error_count(), "error"), plural(fe.diags.warning_count(), "warning")), since(t0)};
    return r;
  }
  Result<task::LaunchSpec> spec = Error{""};
  if (!opts.launch_path.empty()) {
    auto lt = read_file(opts.launch_path);
    spec = lt ? task::parse_launch_toml(*lt, opts.launch_path) : Result<task::LaunchSpec>(lt.error());
  } else {
    spec = task::parse_launch_comments(ptx_path == candidate_path ? ptx : *read_file(ptx_path), ptx_path);
  }
  if (spec) {
    if (auto s = task::check_launch_spec(*spec, task, fe.module, ptx_path); !s) spec = s.error();
  }
  if (!spec) {
    check = {"check", StageStatus::failed, "launch spec: " + spec.error().message, since(t0)};
    return r;
  }
  check = {"check", StageStatus::passed,
           fmt::format("{}, {}; launch spec: {}", plural(fe.diags.error_count(), "error"), plural(fe.diags.warning_count(), "warning"),
                       plural(spec->launches.size(), "launch")),
           since(t0)};

  // assemble
  t0 = std::chrono::steady_clock::now();
  StageResult& assemble = r.stage("assemble");
  toolchain::AssembleOptions aopts;
  aopts.arch = r.arch;
  if (!r.source_name.empty()) aopts.source_name = r.source_name;  // ptxas's messages name the candidate
  auto asmr = toolchain::assemble(ptx, aopts);
  if (!asmr) {
    assemble = {"assemble", StageStatus::failed, asmr.error().message, since(t0)};
    return r;
  }
  for (auto& d : asmr->diags.list()) r.diagnostics.add(d);
  r.resources = asmr->functions;
  if (!asmr->ok) {
    assemble = {"assemble", StageStatus::failed, fmt::format("ptxas: {}", plural(asmr->diags.error_count(), "error")), since(t0)};
    return r;
  }
  std::string cubin = keep->path() + "/candidate.cubin";
  if (auto s = write_file(cubin, asmr->cubin); !s) {
    assemble = {"assemble", StageStatus::failed, s.error().message, since(t0)};
    return r;
  }
  int regs = 0, spills = 0;
  for (auto& f : asmr->functions)
    if (f.is_entry) {
      regs = std::max(regs, f.registers);
      spills += f.spill_stores + f.spill_loads;
    }
  assemble = {"assemble", StageStatus::passed,
              fmt::format("{} for {}: {} registers, {} spill bytes", asmr->backend, r.arch, regs, spills), since(t0)};

  // prove (static): every required instruction family occurs in the PTX. Cheap, so it is
  // known even when the GPU stages cannot run.
  r.proofs = prove_in_ptx(ptx, task.required_instructions);
  std::vector<std::string> missing;
  for (auto& p : r.proofs)
    if (!p.in_ptx) missing.push_back(p.family);
  StageResult prove{"prove", missing.empty() ? StageStatus::passed : StageStatus::failed,
                    task.required_instructions.empty()
                        ? "no required instructions"
                        : missing.empty() ? fmt::format("all {} required instruction families occur in the PTX", r.proofs.size())
                                          : fmt::format("missing from the PTX: {}", fmt::join(missing, ", ")),
                    0};

  // verify, on the GPU worker
  t0 = std::chrono::steady_clock::now();
  StageResult& verify = r.stage("verify");
  auto ref = toolchain::build_reference(task.dir + "/reference.cu", r.arch);
  if (!ref) {
    verify = {"verify", StageStatus::failed, "the task's reference does not build: " + ref.error().message, since(t0)};
    r.stage("prove") = prove;
    return r;
  }
  gpu::Job job;
  job.op = "verify";
  job.task_dir = task.dir;
  job.candidate_path = ptx_path;
  job.launch_path = opts.launch_path;
  job.candidate_cubin = cubin;
  job.reference_cubin = ref->cubin_path;
  job.held_back = opts.held_back;
  job.seeds = opts.seeds;
  last_job_ = job;
  gpu::Outcome out = worker_.run(job, opts.verify_timeout);
  if (out.failure) {
    r.failure = out.failure;
    bool no_gpu = out.failure->kind == "driver";
    verify = {"verify", no_gpu ? StageStatus::skipped : StageStatus::failed,
              no_gpu ? "NOT verified on a GPU: " + out.failure->message
                     : fmt::format("{}: {}{}", out.failure->kind, out.failure->message,
                                   out.failure->where.empty() ? "" : " (" + out.failure->where + ")"),
              since(t0)};
    r.stage("prove") = prove;
    r.check_wall_s = since(t_start);
    return r;
  }
  r.verify = out.verify;
  const gpu::CaseResult* first_bad = nullptr;
  for (auto& c : r.verify->cases)
    if (!c.pass && !first_bad) first_bad = &c;
  size_t held = 0;
  for (auto& c : r.verify->cases) held += c.shown ? 0 : 1;
  if (first_bad) {
    verify = {"verify", StageStatus::failed, describe_case_failure(*first_bad), since(t0)};
    r.stage("prove") = prove;
    r.check_wall_s = since(t_start);
    return r;
  }
  r.gpu_verified = true;
  verify = {"verify", StageStatus::passed,
            fmt::format("{} passed ({} on held-back sizes), worker {:.3f} s", plural(r.verify->cases.size(), "case"), held, r.verify->seconds),
            since(t0)};
  r.check_wall_s = since(t_start);
  if (opts.sanitize) {
    StageResult san = sanitize(job, task.racecheck, opts.verify_timeout * 20);
    r.stages.insert(r.stages.begin() + 3, san);  // after verify
    if (san.status == StageStatus::failed) {
      r.stage("prove") = prove;
      return r;
    }
  }

  // time
  StageResult& time = r.stage("time");
  if (!opts.time) {
    time = {"time", StageStatus::skipped, "not asked for (--no-time)", 0};
  } else {
    t0 = std::chrono::steady_clock::now();
    job.op = "time";
    job.max_trials = 100;
    job.budget_s = task.time_budget_s;
    auto limit = std::chrono::milliseconds(static_cast<int64_t>(task.time_budget_s * 4000)) + opts.verify_timeout;
    gpu::Outcome t = worker_.run(job, limit);
    if (t.failure) {
      r.failure = t.failure;
      time = {"time", StageStatus::failed, fmt::format("{}: {}", t.failure->kind, t.failure->message), since(t0)};
    } else {
      r.time = t.time;
      std::vector<std::string> parts;
      for (auto& s : r.time->sizes) {
        double speedup = s.candidate.median_ms > 0 ? s.reference.median_ms / s.candidate.median_ms : 0;
        parts.push_back(fmt::format("{} {:.4f} ms ({:.2f}x nvcc)", s.size_set, s.candidate.median_ms, speedup));
        if (s.library && s.candidate.median_ms > 0 && s.library->median_ms / s.candidate.median_ms > 10)
          r.flags.push_back(fmt::format("suspicious: {:.1f}x faster than {} on '{}'", s.library->median_ms / s.candidate.median_ms,
                                        s.library_name, s.size_set));
      }
      if (!r.time->reverify_pass) {
        time = {"time", StageStatus::failed, r.time->reverify_problem, since(t0)};
      } else {
        time = {"time", StageStatus::passed, fmt::format("median {}", fmt::join(parts, ", ")), since(t0)};
      }
    }
  }
  r.stage("prove") = prove;
  r.passed = r.gpu_verified;
  for (auto& s : r.stages) r.passed = r.passed && s.status != StageStatus::failed;
  return r;
}

StageResult Pipeline::sanitize(const gpu::Job& verified, bool racecheck, std::chrono::milliseconds timeout) {
  auto t0 = std::chrono::steady_clock::now();
  auto tool = find_cuda_tool("compute-sanitizer");
  if (!tool) return {"sanitize", StageStatus::skipped, "compute-sanitizer is not installed", 0};
  gpu::Job job = verified;
  job.held_back = false;  // once, on the shown sizes: the sanitizer slows kernels 10-100x
  job.seeds = 1;
  std::vector<std::string> findings;
  for (const char* which : {"memcheck", "racecheck"}) {
    if (std::string(which) == "racecheck" && !racecheck) continue;
    std::string log = work_->path() + "/" + which + ".log";
    std::vector<std::string> argv = {*tool, "--tool", which, "--log-file", log, "--print-limit", "20"};
    for (auto& a : gpu::default_worker_argv()) argv.push_back(a);
    gpu::WorkerClient sanitized(argv);
    gpu::Outcome out = sanitized.run(job, timeout);
    auto text = read_file(log);
    size_t errors = 0;
    std::string first;
    if (text) {
      for (auto line : split(*text, '\n')) {
        auto at = line.find("ERROR SUMMARY: ");
        if (at != std::string_view::npos) errors += std::strtoul(std::string(line.substr(at + 15)).c_str(), nullptr, 10);
        if (first.empty() && (line.find("Invalid") != std::string_view::npos || line.find("Race reported") != std::string_view::npos ||
                              line.find("Error:") != std::string_view::npos))
          first = std::string(trim(line.substr(line.find_first_not_of("= "))));
      }
    }
    if (out.failure && errors == 0)
      return {"sanitize", StageStatus::failed, fmt::format("{} run failed: {}: {}", which, out.failure->kind, out.failure->message), since(t0)};
    findings.push_back(errors ? fmt::format("{}: {} error{} ({})", which, errors, errors == 1 ? "" : "s", first)
                              : fmt::format("{}: 0 errors", which));
    if (errors) return {"sanitize", StageStatus::failed, fmt::format("{}", fmt::join(findings, "; ")), since(t0)};
  }
  return {"sanitize", StageStatus::passed, fmt::format("{} (shown sizes, one seed)", fmt::join(findings, "; ")), since(t0)};
}

Result<std::vector<gpu::CaseResult>> Pipeline::check_trivial_outputs(std::chrono::milliseconds timeout) {
  if (!last_job_) return Error{"no candidate reached the GPU stages"};
  gpu::Job job = *last_job_;
  job.op = "trivial";
  gpu::Outcome out = worker_.run(job, timeout);
  if (out.failure) return Error{fmt::format("{}: {}", out.failure->kind, out.failure->message)};
  if (!out.verify) return Error{"the worker returned no cases"};
  return out.verify->cases;
}

}  // namespace ptxforge::eval
