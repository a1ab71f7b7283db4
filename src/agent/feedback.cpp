#include "agent/feedback.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/compile.h"  // SpeedupBase
#include "eval/engine_path.h"
#include "eval/held_back.h"
#include "eval/profile.h"
#include "util/text.h"

namespace ptxforge::agent {

namespace {

const char* kAskAgain =
    "Fix the problems and answer with the complete corrected module in one ```ptx block, launch lines first.";

std::string cap(std::string s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  s.resize(max_chars);
  return s + "\n[... feedback cut at " + std::to_string(max_chars) + " characters]\n";
}

// ptxas's info and warning lines with a code, "(C7515) Potential Performance Loss: ...": the
// module assembled, but ptxas serialised, injected or ignored something, at a cost in speed.
// Returns the code ("C7515"), or "" for any other diagnostic.
std::string performance_code(const Diagnostic& d) {
  if (d.check_id != "ptxas" || d.severity == Severity::error) return "";
  const std::string& m = d.message;
  for (size_t at = m.find("(C"); at != std::string::npos; at = m.find("(C", at + 1))
    if (at + 7 <= m.size() && m[at + 6] == ')' &&
        std::all_of(m.begin() + static_cast<long>(at) + 2, m.begin() + static_cast<long>(at) + 6,
                    [](char c) { return c >= '0' && c <= '9'; }))
      return m.substr(at + 1, 5);
  return "";
}

constexpr size_t kMaxPerformanceNotes = 6;

// One line per code (ptxas repeats a note for every place it applies, differing only in the
// line it names), with how often it came; at most kMaxPerformanceNotes codes.
std::string performance_notes(const Diagnostics& diags) {
  struct Note {
    std::string code, text;
    int times = 0;
  };
  std::vector<Note> notes;
  for (auto& d : diags.list()) {
    std::string code = performance_code(d);
    if (code.empty()) continue;
    auto same = std::find_if(notes.begin(), notes.end(), [&](const Note& n) { return n.code == code; });
    if (same == notes.end())
      same = notes.insert(notes.end(), {code, d.loc.line ? fmt::format("line {}: {}", d.loc.line, d.message) : d.message, 0});
    ++same->times;
  }
  if (notes.empty()) return "";
  std::string out = "## ptxas performance notes\nThe module assembled, but ptxas reports code it had to slow down:\n";
  for (size_t i = 0; i < std::min(notes.size(), kMaxPerformanceNotes); ++i)
    out += fmt::format("- {}{}\n", notes[i].text, notes[i].times > 1 ? fmt::format(" ({} times)", notes[i].times) : "");
  if (notes.size() > kMaxPerformanceNotes) out += fmt::format("- ... and {} more\n", notes.size() - kMaxPerformanceNotes);
  return out + "\n";
}

// The geometric mean over the timed size sets of the base's time over the candidate's; 0 when
// nothing was timed against that base. `name` gets the base's name ("cuBLAS sgemm").
double measured_speedup(const eval::RunRecord& r, SpeedupBase base, std::string& name) {
  name = base == SpeedupBase::library ? "the library" : "nvcc's kernel";
  if (!r.time || !r.time->trials_pass) return 0;
  double log_sum = 0;
  int n = 0;
  for (auto& s : r.time->sizes) {
    if (s.candidate.median_ms <= 0) continue;
    double other = s.reference.median_ms;
    if (base == SpeedupBase::library) {
      if (!s.library) continue;
      other = s.library->median_ms;
      if (!s.library_name.empty()) name = s.library_name;
    }
    if (other <= 0) continue;
    log_sum += std::log(other / s.candidate.median_ms);
    ++n;
  }
  return n ? std::exp(log_sum / n) : 0;
}

std::string target_text(const SpeedupTarget& t) {
  double tenths = t.speedup * 10;
  std::string number = tenths == std::round(tenths) ? fmt::format("{:.1f}", t.speedup) : fmt::format("{:g}", t.speedup);
  return fmt::format("{}x {}", number, t.base == SpeedupBase::library ? "the library" : "nvcc");
}

// The last line: what the model should do next, which is "fix it" only when something failed.
std::string closing_line(const eval::RunRecord& r, const eval::StageResult* failed, const SpeedupTarget& target) {
  if (failed) return kAskAgain;
  if (r.passed) {
    if (target.speedup <= 0)
      return "The kernel is correct. Make it faster if you can, keeping it correct; answer with the complete module.";
    std::string base;
    double got = measured_speedup(r, target.base, base);
    if (got <= 0)
      return fmt::format("The kernel is correct, but its speed against {} was not measured in this run, so the target "
                         "({}) is not judged. Make it faster if you can, keeping it correct; answer with the complete "
                         "module.",
                         base, target_text(target));
    if (got >= target.speedup)
      return fmt::format("Verified at {:.2f}x {}, which meets the target of {}. Nothing more is asked.", got, base,
                         target_text(target));
    return fmt::format("Verified at {:.2f}x {}; the target is {}: make it faster, keeping it correct, and answer with "
                       "the complete module in one ```ptx block, launch lines first.",
                       got, base, target_text(target));
  }
  const eval::StageResult* verify = r.find_stage(eval::StageId::verify);
  if (verify && verify->status == eval::StageStatus::skipped && r.failure && r.failure->kind == gpu::FailureKind::unsupported)
    return "It passed the checks, but the CPU engine does not run everything it uses and there is no GPU here, so it is "
           "not verified yet. It will be verified where there is a GPU; nothing is asked of you now.";
  if (verify && verify->status == eval::StageStatus::skipped)
    return "It passed the checks and assembled, but it could not be run here: there is no GPU on this machine, so it "
           "is not verified yet. It will be verified where there is one; nothing is asked of you now.";
  return fmt::format("Nothing failed, but the kernel was not verified: {}.", r.verdict(eval::Audience::model));
}

}  // namespace

std::string roofline_summary(const task::Task& t, const eval::RunRecord& r, const Hardware& hw) {
  if (!r.time || (!t.roofline_bytes && !t.roofline_flops)) return "";
  std::string out;
  for (auto& s : r.time->sizes) {
    const task::SizeSet* set = nullptr;
    for (auto& x : t.sizes)
      if (x.name == s.size_set) set = &x;
    if (!set || s.candidate.median_ms <= 0) continue;
    double secs = s.candidate.median_ms / 1e3;
    std::vector<std::string> parts;
    if (t.roofline_bytes)
      if (auto b = t.roofline_bytes->evaluate(set->values))
        parts.push_back(fmt::format("{:.0f} GB/s = {:.0f}% of the {:.0f} GB/s peak", b->as_double() / secs / 1e9,
                                    100 * b->as_double() / secs / 1e9 / hw.peak_bandwidth_gbs(), hw.peak_bandwidth_gbs()));
    // The peak of the unit the task's flops may run on: the tensor cores at its precision, else FP32.
    std::optional<double> tensor = hw.peak_tensor_tflops(t.tensor_cores);
    double peak = tensor ? *tensor : hw.peak_fp32_tflops();
    std::string unit = tensor ? fmt::format("{} tensor-core", task::to_string(t.tensor_cores)) : std::string("FP32");
    if (t.roofline_flops)
      if (auto f = t.roofline_flops->evaluate(set->values); f && f->as_double() > 0)
        parts.push_back(fmt::format("{:.2f} TFLOP/s = {:.0f}% of the {:.1f} TFLOP/s {} peak", f->as_double() / secs / 1e12,
                                    100 * f->as_double() / secs / 1e12 / peak, peak, unit));
    if (!parts.empty()) out += fmt::format("- {}: {}\n", s.size_set, fmt::join(parts, "; "));
  }
  return out;
}

std::string verdict_in_feedback(std::string_view feedback) {
  for (auto line : split(feedback, '\n'))
    if (starts_with(line, "Result: ")) return std::string(line.substr(8));
  return "";
}

std::string feedback_no_code(const std::string& why) {
  return fmt::format("Your reply could not be used: {}.\n\n{}", why, kAskAgain);
}

std::string feedback_truncated(int max_tokens, std::string_view reply) {
  bool begun = reply.find("```") != std::string_view::npos;
  return fmt::format(
      "Your reply was cut at {} tokens (the limit), so none of it was checked{}. Answer with a shorter module: one "
      "```ptx block with little or no text before it, launch lines first; loops instead of long hand-unrolled "
      "sequences; no comments besides the launch lines.",
      max_tokens, begun ? "" : ": the code block had not even begun");
}

std::string feedback_for(const task::Task& t, const eval::RunRecord& r, const Hardware& hw, size_t max_chars) {
  return feedback_for(t, r, hw, SpeedupTarget{}, max_chars);
}

std::string feedback_for(const task::Task& t, const eval::RunRecord& r, const Hardware& hw, const SpeedupTarget& target,
                         size_t max_chars) {
  std::string out;
  const eval::StageResult* failed = nullptr;
  for (auto& s : r.stages)
    if (s.status == eval::StageStatus::failed && !failed) failed = &s;
  // Held-back size sets are never named to the model: every verdict, failure and case below
  // carries a flag saying so, and is printed here in its model form.
  out += fmt::format("Result: {}\n\n", r.verdict(eval::Audience::model));
  // Which engine judged it: the model must not take a CPU verdict for a GPU one, nor look for a time.
  bool on_engine = r.verified_by == eval::VerifiedBy::cpu_engine || (r.verify && r.verify->engine == gpu::Engine::cpu) ||
                   (r.failure && r.failure->finding);
  if (r.verified_by == eval::VerifiedBy::cpu_engine)
    out += "Verified on the CPU engine (ptxforge's PTX interpreter), not on a GPU: the results are correct there, and no "
           "time was measured.\n\n";
  else if (r.verified_by == eval::VerifiedBy::gpu)
    out += "Verified on a GPU.\n\n";
  else if (on_engine)
    out += "Run on the CPU engine (ptxforge's PTX interpreter), which checks every access, race and barrier exactly.\n\n";
  // 1. What must be fixed first: diagnostics (front end, then ptxas) on the lines of the module.
  if (r.diagnostics.error_count() > 0) {
    SourceText src("candidate.ptx", r.source_text);
    Diagnostics errors;
    for (auto& d : r.diagnostics.list())
      if (d.severity == Severity::error && errors.list().size() < 15) errors.add(d);
    out += "## Errors\n" + render_text(errors, src) + "\n";
  } else if (failed && (failed->id == eval::StageId::check || failed->id == eval::StageId::assemble)) {
    out += fmt::format("## Problem\n{}\n\n", failed->text(eval::Audience::model));
  }
  // 2. The GPU's verdict.
  // No GPU, or a kernel the CPU engine does not run: nothing ran, so nothing failed at run time.
  if (r.failure && r.failure->kind != gpu::FailureKind::driver && r.failure->kind != gpu::FailureKind::unsupported) {
    if (r.failure->held_back) {
      // Its message carries offsets and buffer sizes: only its kind and class (eval/held_back.h).
      out += fmt::format("## Runtime failure ({})\n{} — on a held-back size (not shown to you)\n\n",
                         gpu::to_string(r.failure->kind), eval::held_back_failure_text(*r.failure, t));
    } else {
      std::string where = r.failure->where.empty() ? "" : " — " + r.failure->where;
      out += fmt::format("## Runtime failure ({})\n{}{}{}\n\n", gpu::to_string(r.failure->kind), r.failure->message,
                         eval::finding_suffix(*r.failure), where);
    }
  }
  // 2b. Correct results, but compute-sanitizer saw a defect (eval/sanitize.h).
  if (failed && failed->id == eval::StageId::sanitize) {
    const std::string& text = failed->text(eval::Audience::model);
    const char* hint = starts_with(text, "memcheck") ? "an access outside a buffer (or misaligned), which the results did not show"
                       : starts_with(text, "racecheck")
                           ? "threads of a block write and read the same shared memory with no bar.sync between them: the result "
                             "depends on timing"
                       : starts_with(text, "synccheck") ? "a barrier that not every thread it waits for reaches, or a wrong mask"
                       : starts_with(text, "initcheck")
                           ? "a read of memory nothing wrote: an output read before your kernel wrote it (outputs are not "
                             "zeroed for you), an output element never written, or shared memory read before any thread wrote it"
                           : "";
    out += fmt::format("## compute-sanitizer\nThe results were correct, but {}\n{}{}\n\n", text, *hint ? "This means " : "", hint);
  }
  if (r.verify) {
    int shown = 0;
    for (auto& c : r.verify->cases) {
      if (c.pass || shown >= 2) continue;
      ++shown;
      if (shown == 1) out += "## Wrong results\n";
      if (!c.shown) {
        // No count, index, value, error or number-bearing hint: each could give its sizes away.
        out += fmt::format("On a held-back size (not shown to you), seed {}:\n", c.seed_index);
        for (auto& line : eval::held_back_case_lines(c, t)) out += "- " + line + "\n";
        continue;
      }
      out += fmt::format("On size set '{}', seed {}:\n", c.size_set, c.seed_index);
      for (auto& p : c.problems) out += "- " + p + "\n";
      for (auto& o : c.outputs) {
        if (o.pass) continue;
        out += fmt::format("- output '{}': {} of {} elements wrong, max abs error {:g}, {} NaN, {} never written\n", o.output,
                           o.mismatches, o.count, o.max_abs_error, o.nan_count, o.never_written);
        // The CPU engine names each wrong element's indices and last writer; the GPU, index and values.
        size_t named = 0;
        for (auto& w : c.wrong)
          if (w.output == o.output && named < 4) {
            out += "  " + eval::describe_wrong_element(w) + "\n";
            ++named;
          }
        for (size_t i = 0; named == 0 && i < std::min<size_t>(o.first.size(), 4); ++i)
          out += fmt::format("  [{}] expected {:g}, got {:g}\n", o.first[i].index, o.first[i].expected, o.first[i].actual);
        if (!o.hint.empty()) out += "  hint: " + o.hint + "\n";
      }
    }
    if (shown) out += "\n";
  }
  // 3. Performance, once correct. A timed trial that computed a wrong result makes the times meaningless.
  if (r.time && !r.time->trials_pass) {
    out += "## Wrong results while timed\n- " + r.time->trial_problem +
           "\nEvery timed run gets fresh inputs and outputs; the kernel must compute every time.\n\n";
  } else if (r.time) {
    out += "## Performance (median time; L2 flushed before each run)\n";
    for (auto& s : r.time->sizes) {
      out += fmt::format("- {}: {:.4f} ms; nvcc's kernel {:.4f} ms ({:.2f}x)", s.size_set, s.candidate.median_ms,
                         s.reference.median_ms, s.candidate.median_ms > 0 ? s.reference.median_ms / s.candidate.median_ms : 0);
      if (s.library) out += fmt::format("; {} {:.4f} ms ({:.2f}x)", s.library_name, s.library->median_ms,
                                        s.candidate.median_ms > 0 ? s.library->median_ms / s.candidate.median_ms : 0);
      out += "\n";
    }
    out += roofline_summary(t, r, hw);
    if (!r.time->reverify_pass) out += "- " + r.time->reverify_problem + "\n";
    out += "\n";
  }
  if (!r.resources.empty()) {
    out += "## Resources (ptxas)\n";
    for (auto& f : r.resources)
      if (f.is_entry)
        out += fmt::format("- {}: {} registers, {} bytes of static shared memory, {} bytes spilled (stores) / {} (loads)\n",
                           f.name, f.registers, f.shared_bytes, f.spill_stores, f.spill_loads);
    out += "\n";
  }
  // `--profile`: why it is as fast as it is (Nsight Compute), beside nvcc's kernel.
  if (r.profile) {
    std::string p = eval::render_profile(*r.profile);
    if (!p.empty()) out += p + "\n";
  }
  if (r.diagnostics.error_count() == 0) out += performance_notes(r.diagnostics);
  // Where the task names alternatives ("mma.sync | wgmma.mma_async"), a family is reported
  // only while none of them has passed the check it failed.
  auto covered = [&](const eval::InstructionProof& p, auto&& passes) {
    if (passes(p)) return true;
    for (auto& q : r.proofs)
      if (std::find(p.alternatives.begin(), p.alternatives.end(), q.family) != p.alternatives.end() && passes(q))
        return true;
    return false;
  };
  std::vector<std::string> missing;
  for (auto& p : r.proofs) {
    if (covered(p, [](const eval::InstructionProof& q) { return q.in_ptx; })) continue;
    std::vector<std::string> group = {p.family};
    group.insert(group.end(), p.alternatives.begin(), p.alternatives.end());
    std::sort(group.begin(), group.end());
    std::string name = fmt::format("{}", fmt::join(group, " or "));
    if (std::find(missing.begin(), missing.end(), name) == missing.end()) missing.push_back(name);
  }
  if (!missing.empty()) out += fmt::format("## Missing required instructions\nThe task requires {}.\n\n", fmt::join(missing, ", "));
  std::vector<std::string> dropped;
  for (auto& p : r.proofs)
    if (p.in_ptx && p.in_sass == false &&
        !covered(p, [](const eval::InstructionProof& q) { return q.in_ptx && q.in_sass != false; }))
      dropped.push_back(fmt::format("{} (ptxas emitted none of {})", p.family, fmt::join(p.sass_opcodes, ", ")));
  if (!dropped.empty())
    out += fmt::format("## Required instructions that ptxas removed\n{} occur in your PTX but not in the machine code: "
                       "ptxas deletes instructions that can never run or whose results are never used. Make them do "
                       "the kernel's work.\n\n",
                       fmt::join(dropped, "; "));
  std::vector<std::string> idle;
  for (auto& p : r.proofs)
    if (p.in_ptx && p.executed == false &&
        !covered(p, [](const eval::InstructionProof& q) { return q.executed == true; }))
      idle.push_back(p.family);
  if (!idle.empty())
    out += fmt::format("## Required instructions that never ran\n{} {} in the machine code, but a copy of your kernel with a "
                       "counter before each of them counted no warp reaching them on any test case. Put them on the path "
                       "that computes the result.\n\n",
                       fmt::join(idle, ", "), idle.size() == 1 ? "is" : "are");
  if (r.diagnostics.warning_count() > 0 && r.diagnostics.error_count() == 0) {
    SourceText src("candidate.ptx", r.source_text);
    Diagnostics warnings;
    for (auto& d : r.diagnostics.list())
      if (d.severity == Severity::warning && performance_code(d).empty() && warnings.list().size() < 5) warnings.add(d);
    if (!warnings.empty()) out += "## Warnings\n" + render_text(warnings, src) + "\n";
  }
  out += closing_line(r, failed, target);
  return cap(out, max_chars);
}

}  // namespace ptxforge::agent
