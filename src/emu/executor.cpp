// emu::Executor::run: one job by kind, as the GPU worker's executor answers it (worker/
// executor.cpp), with the CPU engine underneath. Verify walks the same size sets and seeds
// the worker does; trivial makes the same host-side checks (without a library baseline); the
// kinds that need a GPU's clock fail as `unsupported`, never with a made-up number.
#include "emu/executor.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "emu/executor_detail.h"
#include "task/buffers.h"
#include "task/seeds.h"
#include "util/phase_timer.h"
#include "util/text.h"

namespace ptxforge::emu {

using detail::Abort;
using detail::abort_with;
using gpu::FailureKind;

namespace {

// The task's own defence, as in worker/executor_verify.cpp: all zeros, a copy of the first
// input, and outputs never written must each fail the comparison. On the CPU engine the sets
// are the job's `size_sets` when it names them (the parent's cpu_sizes), else every set.
std::vector<gpu::CaseResult> trivial_cases(detail::JobState& s) {
  const gpu::Job& job = *s.job;
  std::vector<gpu::CaseResult> out;
  for (const task::SizeSet* set : s.task.size_sets(true)) {
    if (!job.size_sets.empty() && std::find(job.size_sets.begin(), job.size_sets.end(), set->name) == job.size_sets.end())
      continue;
    std::string where = fmt::format("size set '{}', trivial outputs", set->name);
    uint64_t seed = task::derive_seed(job.seed, task::SeedUse::trivial, task::size_set_key(set->name));
    task::HostCase h = detail::host_case(s.task, *set, seed, where);
    auto expected = detail::run_reference(s, h, where);
    const task::HostBytes* first_input = h.in.empty() ? nullptr : &h.in.begin()->second;
    for (std::string kind : {"zeros", "input-copy", "unwritten"}) {
      gpu::CaseResult cr;
      cr.trivial = kind;
      cr.size_set = set->name;
      cr.shown = set->shown;
      cr.seed = seed;
      for (auto& p : s.task.params) {
        if (!p.is_output()) continue;
        std::vector<uint8_t> actual(expected.at(p.name).size(), 0);
        if (kind == "unwritten") task::fill_poison(actual.data(), actual.size());
        if (kind == "input-copy" && first_input)
          std::memcpy(actual.data(), first_input->data(), std::min(actual.size(), first_input->size()));
        if (p.role == task::Role::inout && kind != "zeros")
          actual.assign(h.in.at(p.name).begin(), h.in.at(p.name).end());  // left unchanged
        cr.outputs.push_back(task::compare_output(p.name, expected.at(p.name).data(), actual.data(), p.dtype,
                                                  h.counts.at(p.name), s.task.tolerance_for(p.name)));
      }
      cr.pass = true;
      for (auto& c : cr.outputs) cr.pass = cr.pass && c.pass;
      out.push_back(std::move(cr));
    }
  }
  return out;
}

// What the engine cannot run at all, refused before anything is loaded.
void refuse_unsupported(const detail::JobState& s) {
  const gpu::Job& job = *s.job;
  if (job.launch.launches.empty()) abort_with(FailureKind::spec, "the job carries no launch");
  if (!job.launch.tensor_maps.empty())
    abort_with(FailureKind::unsupported, "not supported by the CPU engine: tensor-map parameters");
  if (s.task.device_heap_bytes > 0)
    abort_with(FailureKind::unsupported, "not supported by the CPU engine: the device malloc heap");
  if (job.executed_slots > 0)
    abort_with(FailureKind::unsupported,
               "not supported by the CPU engine: an instrumented copy (the engine counts every instruction itself)");
}

std::vector<gpu::InstructionCount> candidate_counts(const Machine& m) {
  std::vector<gpu::InstructionCount> out;
  for (const InstructionCount& c : m.counts())
    out.push_back({c.pos.line, c.pos.col, c.opcode, c.warp_issues, c.lane_executions});
  return out;
}

// The candidate's warp executions per instruction (in the order of Machine::counts) since
// `before`, which then holds the totals: one case's share of the counts.
std::vector<uint64_t> warp_issues_since(const Machine& m, std::vector<uint64_t>& before) {
  std::vector<InstructionCount> now = m.counts();
  std::vector<uint64_t> out(now.size());
  before.resize(now.size(), 0);
  for (size_t i = 0; i < now.size(); ++i) {
    out[i] = now[i].warp_issues - before[i];
    before[i] = now[i].warp_issues;
  }
  return out;
}

}  // namespace

Executor::Executor(MachineFactory make_machine) : make_machine_(std::move(make_machine)) {}

gpu::DeviceInfo Executor::device_info() {
  gpu::DeviceInfo d;
  d.name = "ptxforge CPU engine";
  d.cc_major = 9;  // the limits below are sm_90's, and PTX for it is what the engine reads
  d.cc_minor = 0;
  d.sms = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  d.max_threads_per_block = 1024;
  d.shared_per_block = 48 * 1024;
  d.shared_per_block_optin = 227 * 1024;
  d.shared_per_sm = 228 * 1024;
  d.registers_per_block = 65536;
  d.registers_per_sm = 65536;
  d.memory_bytes = static_cast<size_t>(detail::kMaxCaseBytes);
  d.device_count = 0;  // no GPU: this is the engine
  return d;
}

gpu::Outcome Executor::run(const gpu::Job& job) {
  gpu::Outcome out;
  double t0 = now_s();
  try {
    switch (job.kind) {
      case gpu::JobKind::device: out.device = device_info(); return out;
      case gpu::JobKind::time:
      case gpu::JobKind::peaks: abort_with(FailureKind::unsupported, "not timed: CPU engine");
      case gpu::JobKind::locate:
        abort_with(FailureKind::unsupported,
                   "not needed on the CPU engine: its verify names the buffer of every out-of-bounds access");
      case gpu::JobKind::verify:
      case gpu::JobKind::trivial: break;
    }
    detail::JobState s;
    s.job = &job;
    auto t = task::load_task(job.task_dir);
    if (!t) abort_with(FailureKind::spec, t.error().message);
    s.task = std::move(*t);
    if (job.kind == gpu::JobKind::verify) refuse_unsupported(s);
    s.reference = detail::load_module(make_machine_, job.reference_ptx, "reference");
    gpu::VerifyReport rep;
    rep.engine = gpu::Engine::cpu;
    if (job.kind == gpu::JobKind::trivial) {
      rep.cases = trivial_cases(s);
    } else {
      s.candidate = detail::load_module(make_machine_, job.candidate_ptx, "candidate");
      std::vector<uint64_t> before;  // the candidate's warp issues before the case (prove holds each case to its floors)
      for (const task::SizeSet* set : s.task.size_sets(job.held_back)) {
        if (!job.size_sets.empty() &&
            std::find(job.size_sets.begin(), job.size_sets.end(), set->name) == job.size_sets.end())
          continue;
        for (int k = 1; k <= job.seeds; ++k) {
          rep.cases.push_back(detail::verify_case(
              s, *set,
              task::derive_seed(job.seed, task::SeedUse::verify, task::size_set_key(set->name), static_cast<uint64_t>(k)),
              k));
          rep.cases.back().executed = warp_issues_since(*s.candidate.machine, before);
        }
      }
      rep.counts = candidate_counts(*s.candidate.machine);
      rep.phases = s.phases;
    }
    rep.seconds = now_s() - t0;
    out.verify = std::move(rep);
  } catch (const Abort& a) {
    out.failure = a.failure;
  }
  return out;
}

namespace detail {

[[noreturn]] void abort_with(gpu::FailureKind kind, std::string message, std::string where) {
  gpu::Failure f;
  f.kind = kind;
  f.message = std::move(message);
  f.where = std::move(where);
  throw Abort{std::move(f)};
}

LoadedModule load_module(const MachineFactory& make, const std::string& path, const char* what) {
  if (path.empty())
    abort_with(FailureKind::spec, fmt::format("the job names no {} PTX: the CPU engine runs PTX, not cubins", what));
  auto text = read_file(path);
  if (!text) abort_with(FailureKind::load, fmt::format("reading the {} PTX: {}", what, text.error().message));
  LoadedModule m;
  m.file_name = std::filesystem::path(path).filename().string();
  m.checked = std::make_unique<ptx::CheckResult>(ptx::check_source(*text, {.warnings = false}));
  if (!m.checked->ok()) {
    for (const Diagnostic& d : m.checked->diags.list())
      if (d.severity == Severity::error)
        abort_with(FailureKind::load, fmt::format("the {} PTX does not validate: {}:{}:{}: {}", what, m.file_name,
                                                  d.loc.line, d.loc.col, d.message));
  }
  auto made = make(m.checked->module);
  if (auto* f = std::get_if<Finding>(&made)) {
    gpu::Failure fail = failure_of(*f, m, std::string(what) == "reference");
    throw Abort{std::move(fail)};
  }
  m.machine = std::move(std::get<std::unique_ptr<Machine>>(made));
  if (!m.machine) abort_with(FailureKind::crash, fmt::format("the CPU engine made no machine for the {}", what));
  return m;
}

}  // namespace detail
}  // namespace ptxforge::emu
