// Text and JSON printers of a RunRecord: what a person reads after `ptxforge run`, and what
// agents and the benchmark store read.
#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "eval/record.h"
#include "eval/profile.h"
#include "gpu/measurement_json.h"
#include "task/seeds.h"

namespace ptxforge::eval {

namespace {

std::string paint(const std::string& s, const char* code, bool color) {
  return color ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
}

void case_details(std::string& out, const gpu::CaseResult& c) {
  out += fmt::format("    size set '{}'{}, seed {}:\n", c.size_set, c.shown ? "" : " (held back)", c.seed_index);
  for (auto& p : c.problems) out += fmt::format("      {}\n", p);
  for (auto& o : c.outputs) {
    if (o.pass) continue;
    out += fmt::format("      output '{}': {} of {} elements outside tolerance (matched {:.4f}%), max abs error {:g}, "
                       "max rel error {:g}, {} NaN, {} Inf, {} never written\n",
                       o.output, o.mismatches, o.count, 100 * o.matched_fraction, o.max_abs_error, o.max_rel_error,
                       o.nan_count, o.inf_count, o.never_written);
    for (auto& m : o.first) out += fmt::format("        [{}] expected {:g}, got {:g}\n", m.index, m.expected, m.actual);
    if (!o.hint.empty()) out += fmt::format("      hint: {}\n", o.hint);
  }
}

// Whether any size set was also timed on a vendor library.
bool has_library_timing(const gpu::TimeReport& t) {
  return std::any_of(t.sizes.begin(), t.sizes.end(), [](const gpu::SizeTiming& s) { return s.library.has_value(); });
}

}  // namespace

std::string render_report_text(const RunRecord& r, bool color) {
  std::string out =
      fmt::format("task {}  candidate {}  arch {}  seed {}\n", r.task, r.candidate, r.arch, task::seed_text(r.seed));
  for (auto& s : r.stages) {
    const char* code = s.status == StageStatus::passed ? "32" : s.status == StageStatus::failed ? "31" : "33";
    std::string status = fmt::format("{:<8}", stage_status_name(s.status));
    out += fmt::format("  {:<9} {} {}{}\n", to_string(s.id), paint(status, code, color), s.summary,
                       s.seconds > 0 ? fmt::format(" ({:.3f} s)", s.seconds) : "");
  }
  if (r.diagnostics.error_count() > 0 || r.diagnostics.warning_count() > 0) {
    SourceText src(r.source_name, r.source_text);
    out += "\n" + render_text(r.diagnostics, src, color);
  }
  if (r.verify) {
    int shown_failures = 0;
    for (auto& c : r.verify->cases)
      if (!c.pass && shown_failures++ < 3) {
        if (shown_failures == 1) out += "\n  failing cases:\n";
        case_details(out, c);
      }
  }
  if (r.time && !r.time->sizes.empty()) {
    out += fmt::format(
        "\n  timing (CUDA events around the kernel alone; before each trial, fresh inputs from a rotation of "
        "input sets, outputs poisoned, L2 flushed; median of N trials, every one checked on the GPU):\n");
    out += fmt::format("    {:<14} {:>12} {:>12} {:>9} {:>12} {:>9}\n", "size set", "candidate", "nvcc ref", "vs nvcc", "library", "vs lib");
    for (auto& s : r.time->sizes) {
      double vs_ref = s.candidate.median_ms > 0 ? s.reference.median_ms / s.candidate.median_ms : 0;
      std::string lib = s.library ? fmt::format("{:.4f} ms", s.library->median_ms) : "-";
      std::string vs_lib = s.library && s.candidate.median_ms > 0 ? fmt::format("{:.2f}x", s.library->median_ms / s.candidate.median_ms) : "-";
      out += fmt::format("    {:<14} {:>9.4f} ms {:>9.4f} ms {:>8.2f}x {:>12} {:>9}   (N={}, stdev {:.4f} ms)\n", s.size_set,
                         s.candidate.median_ms, s.reference.median_ms, vs_ref, lib, vs_lib, s.candidate.trials,
                         s.candidate.stdev_ms);
    }
    double trials_s = 0, gpu_s = 0, after_s = 0;
    for (auto& s : r.time->sizes) {
      trials_s += s.cost.candidate_s;
      gpu_s += s.cost.compare_gpu_s;
      after_s += s.cost.check_s;
    }
    if (trials_s > 0)
      out += fmt::format("    checking every trial: {:.3f} s on the GPU within {:.3f} s of trials, {:.3f} s after them\n",
                         gpu_s, trials_s, after_s);
    if (!has_library_timing(*r.time)) out += "    library: no library baseline here (the task names none)\n";
  }
  if (r.limits && !r.limits->rows.empty()) {
    const double fm = r.limits->peaks.flops_margin;
    out += fmt::format("\n  physical limits ({}; fastest trial, {:.0f}% margin{}):\n", r.limits->note, kPhysicalLimitMargin * 100,
                       fm == kPhysicalLimitMargin ? "" : fmt::format(", {:.0f}% on the flops", fm * 100));
    for (auto& row : r.limits->rows)
      out += fmt::format("    {:<14} {} and {:.4g} flops in {:.4f} ms: {}, {}{}\n", row.size_set, format_bytes(row.bytes), row.flops,
                         row.fastest_ms, format_rate(row.bytes_per_s, "B"), format_rate(row.flops_per_s, "FLOP"),
                         row.pass ? "" : "  IMPOSSIBLE");
  }
  if (!r.resources.empty()) {
    out += "\n  resources:";
    for (auto& f : r.resources)
      if (f.is_entry)
        out += fmt::format(" {}: {} registers, {} B smem, {} B spill stores, {} B spill loads;", f.name, f.registers,
                           f.shared_bytes, f.spill_stores, f.spill_loads);
    out += "\n";
  }
  if (!r.proofs.empty()) {
    out += "\n  required instructions (in the PTX; in the SASS, by opcode; executed):\n";
    auto yes_no = [](const std::optional<bool>& b) { return b ? (*b ? "yes" : "NO") : "-"; };
    for (auto& p : r.proofs) {
      std::string sass = p.sass_opcodes.empty() ? "-" : fmt::format("{} ({})", yes_no(p.in_sass), p.sass_count);
      bool weighed = p.work_unit != "warp executions";
      std::string ran =
          p.executed ? fmt::format("{} ({} warps{}{})", yes_no(p.executed), p.executed_warps,
                                   weighed ? fmt::format(", {} {}", p.executed_work, p.work_unit) : "",
                                   p.min_warps ? fmt::format("; per-case floor up to {} {}", p.min_warps, p.work_unit) : "")
                     : "-";
      std::string ncu = p.ncu_threads ? fmt::format("  ncu {} threads", *p.ncu_threads) : "";
      std::string or_else = p.alternatives.empty() ? "" : fmt::format("  (or {})", fmt::join(p.alternatives, ", "));
      out += fmt::format("    {:<24} ptx {} ({})  sass {}  executed {}{}{}\n", p.family, p.in_ptx ? "yes" : "NO",
                         p.ptx_count, sass, ran, ncu, or_else);
    }
    if (!r.sass_note.empty()) out += fmt::format("    SASS from: {}\n", r.sass_note);
    if (!r.executed_note.empty()) out += fmt::format("    executed: {}\n", r.executed_note);
    if (!r.ncu_note.empty()) out += fmt::format("    ncu: {}\n", r.ncu_note);
  }
  if (r.profile) {
    std::string p = render_profile(*r.profile);
    out += p.empty() ? fmt::format("  {}\n", r.profile->note) : "\n" + p;
  }
  if (r.guard == gpu::GuardMode::canary)
    out += fmt::format("  {}\n", paint("note: no guard pages, canaries only: " + r.guard_note, "33", color));
  for (auto& f : r.flags) out += fmt::format("  {}\n", paint("flag: " + f, "33", color));
  std::string verdict = r.verdict();
  out += fmt::format("\nverdict: {}\n", paint(verdict, r.passed ? "32" : "31", color));
  return out;
}

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
        "budget; before every trial, outside the timed interval: inputs copied in from a rotation of input sets "
        "drawn from the run's seed (5 to 8 sets, and the trial cap, drawn per run), outputs poisoned (the "
        "baselines' zeroed), the candidate's .global sections restored byte for byte, then the L2 flushed by "
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

}  // namespace ptxforge::eval
