// The text printer of a RunRecord: what a person reads after `ptxforge run`. The JSON form,
// which agents and the results store read, is in record_json.cpp beside its parser.
#include <algorithm>

#include <fmt/format.h>

#include "eval/engine_path.h"
#include "eval/profile.h"
#include "eval/record.h"
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
  for (auto& w : c.wrong) out += fmt::format("      {}\n", describe_wrong_element(w));
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
  if (r.verified_by == VerifiedBy::gpu) out += "  verified on a GPU\n";
  if (r.verified_by == VerifiedBy::cpu_engine) out += "  verified on the CPU engine (not timed)\n";
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

}  // namespace ptxforge::eval
