// The history section of a round's feedback (agent/progress.h): made from round summaries only.
#include "agent/progress.h"

#include <cmath>
#include <fmt/format.h>

#include "agent/compile.h"  // SpeedupBase
#include "util/text.h"

namespace ptxforge::agent {

namespace {

std::string base_name(SpeedupBase base) { return base == SpeedupBase::library ? "the library" : "nvcc"; }

// What came of a round, in a few words. Stages only: a summary's verdict may name held-back sets.
std::string result_word(const RoundSummary& s) {
  if (s.passed) return s.gpu_verified ? "passed" : "passed on the CPU engine";
  if (s.stage == "extract") return "no usable kernel";
  if (!s.stage.empty()) return "failed at " + s.stage;
  if (s.assembled) return "assembled, not run";
  return "not verified";
}

std::string speed_cell(const RoundSummary& s, SpeedupBase base) {
  if (!s.passed) return "-";
  if (!timed_toward(s, base)) return s.gpu_verified ? "not timed" : "not timed (CPU engine)";
  return fmt::format("{:.2f}x {}", speedup_toward_target(s, base), base_name(base));
}

std::string row(const RoundSummary& s, SpeedupBase base, bool is_best, bool is_current) {
  std::string label = std::to_string(s.round);
  if (is_current) label += " (this round)";
  else if (is_best) label += " (best)";
  return fmt::format("| {} | {} | {} | {} | {} |\n", label, result_word(s), speed_cell(s, base),
                     s.assembled ? std::to_string(s.registers) : "-", s.assembled ? std::to_string(s.spill_bytes) : "-");
}

// "29% slower", "12% faster", or within the noise margin.
std::string change_words(double from, double to) {
  double rel = to / from - 1;
  if (std::fabs(rel) <= kRegressionMargin)
    return fmt::format("about the same (within the {:.0f}% noise margin)", kRegressionMargin * 100);
  return fmt::format("{:.0f}% {}", std::fabs(rel) * 100, rel < 0 ? "slower" : "faster");
}

// Round K's kernel as a fenced block, or "" when its file cannot be read.
std::string kernel_block(const RoundSummary& s) {
  if (s.candidate.empty()) return "";
  auto text = read_file(s.candidate);
  if (!text || text->empty()) return "";
  std::string body = *text;
  if (body.back() != '\n') body += '\n';
  return fmt::format("```{}\n{}```\n", ends_with(s.candidate, ".cu") ? "cuda" : "ptx", body);
}

}  // namespace

double speedup_toward_target(const RoundSummary& s, SpeedupBase base) {
  return base == SpeedupBase::library ? s.speedup_vs_library : s.speedup_vs_nvcc;
}

bool timed_toward(const RoundSummary& s, SpeedupBase base) {
  return s.passed && s.gpu_verified && !s.on_engine && speedup_toward_target(s, base) > 0;
}

bool better_round(const RoundSummary& r, const RoundSummary& than, SpeedupBase base) {
  if (r.passed != than.passed) return r.passed;
  if (!r.passed) return r.assembled && !than.assembled;
  bool r_timed = timed_toward(r, base), than_timed = timed_toward(than, base);
  if (r_timed != than_timed) return r_timed;
  if (r_timed) return speedup_toward_target(r, base) > speedup_toward_target(than, base);
  return r.gpu_verified && !than.gpu_verified;
}

std::string progress_section(const std::vector<RoundSummary>& earlier, const RoundSummary& current, SpeedupBase base,
                             size_t max_chars) {
  if (earlier.empty()) return "";
  // The best verified round before this one, and the last timed one (for the change in speed).
  const RoundSummary* best = nullptr;
  const RoundSummary* previous_timed = nullptr;
  for (auto& s : earlier) {
    if (s.passed && (!best || better_round(s, *best, base))) best = &s;
    if (timed_toward(s, base)) previous_timed = &s;
  }
  bool current_best = current.passed && (!best || better_round(current, *best, base));

  std::string out = "## Your rounds so far\n| round | result | speed | registers | spill bytes |\n|---|---|---|---|---|\n";
  size_t first_shown = earlier.size() > kProgressTableRows ? earlier.size() - kProgressTableRows : 0;
  if (best && static_cast<size_t>(best - earlier.data()) < first_shown) out += row(*best, base, !current_best, false);
  for (size_t i = first_shown; i < earlier.size(); ++i) out += row(earlier[i], base, &earlier[i] == best && !current_best, false);
  out += row(current, base, current_best, true);
  out += "\n";

  bool current_timed = timed_toward(current, base);
  if (current_timed && previous_timed) {
    double from = speedup_toward_target(*previous_timed, base), to = speedup_toward_target(current, base);
    out += fmt::format("Round {} -> {}: {:.2f}x -> {:.2f}x {}, {}.\n", previous_timed->round, current.round, from, to,
                       base_name(base), change_words(from, to));
  }

  // When to point back at the best round: this one is slower than it beyond the noise, or this
  // one failed (or gave no kernel) after a verified round.
  std::string advice;
  if (best && current_timed && timed_toward(*best, base) &&
      speedup_toward_target(current, base) < speedup_toward_target(*best, base) * (1 - kRegressionMargin)) {
    advice = fmt::format("This round is slower than round {} ({:.2f}x {}), the fastest verified kernel so far.", best->round,
                         speedup_toward_target(*best, base), base_name(base));
  } else if (best && !current.passed && !current.stage.empty()) {
    advice = fmt::format("This round failed; round {} is the best verified kernel so far ({}).", best->round,
                         timed_toward(*best, base) ? speed_cell(*best, base) : result_word(*best));
  }
  if (!advice.empty()) {
    // Its text when it fits; else the model finds it in its own reply of that round.
    std::string block = kernel_block(*best);
    std::string kernel = fmt::format(" Start from round {}'s kernel, not this one:\n{}", best->round, block);
    if (block.empty() || out.size() + advice.size() + kernel.size() > max_chars)
      kernel = fmt::format(" Start from round {}'s kernel (your reply in round {}), not this one.\n", best->round, best->round);
    out += advice + kernel;
  }
  return out;
}

}  // namespace ptxforge::agent
