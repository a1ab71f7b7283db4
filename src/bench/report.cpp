#include "bench/report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ptxforge::bench {

using nlohmann::json;

std::optional<ReportFormat> parse_report_format(std::string_view s) {
  if (s == "md" || s == "markdown") return ReportFormat::markdown;
  if (s == "json") return ReportFormat::json;
  if (s == "html") return ReportFormat::html;
  return std::nullopt;
}

namespace {

std::string pct(const Rate& r) {
  if (r.of == 0) return "-";
  return fmt::format("{:.0f}% ({}/{})", 100 * r.value(), r.hits, r.of);
}
std::string speedup(double x) { return x > 0 ? fmt::format("{:.2f}x", x) : "-"; }
// GPU verdicts; trajectories only the CPU engine verified are named beside them, never counted in.
std::string verified_text(const ArmMetrics& a, const Rate& r) { return a.gpu_ran ? pct(r) : "not run (no GPU)"; }
// Where the engine verified some round (0% included: it ran and verified none), its rate.
std::string cpu_verified_note(const ArmMetrics& a) {
  return a.engine_ran || a.verified_cpu.hits ? fmt::format("; on the CPU engine {}", pct(a.verified_cpu)) : "";
}
std::string task_verified(const TaskResult& r) {
  std::string s = fmt::format("{}/{}", r.verified, r.trajectories);
  if (r.verified_cpu) s += fmt::format(" (+{} on the CPU engine)", r.verified_cpu);
  return s;
}

std::string per_verified(const ArmMetrics& a) {
  if (a.verified.hits == 0) return "-";
  if (a.prompt_tokens + a.completion_tokens == 0) return "- (no token counts reported)";
  std::string s = fmt::format("{:.0f} tokens", static_cast<double>(a.prompt_tokens + a.completion_tokens) / a.verified.hits);
  if (a.priced) s += fmt::format(", ${:.4f}", a.cost_usd / a.verified.hits);
  return s;
}

std::string round_bucket(size_t i, size_t n) { return i + 1 == n ? "never" : fmt::format("round {}", i + 1); }

std::string md_cell(std::string_view s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

}  // namespace

std::string render_markdown(const BenchMetrics& m) {
  std::string o = fmt::format("# Bench: {}\n\n{} of {} cells in the store, {} finished.\n\n", m.name.empty() ? "(unnamed)" : m.name,
                              m.cells, m.cells_in_grid ? m.cells_in_grid : m.cells, m.finished);
  o += "## Stages (per trajectory: first round / by the last)\n\n";
  o += "| arm | cells | trajectories | extracted | checked | assembled | verified (on a GPU) |\n|---|---|---|---|---|---|---|\n";
  for (auto& a : m.arms)
    o += fmt::format("| {} | {} | {} | {} / {} | {} / {} | {} / {} | {} / {}{} |\n", md_cell(a.label), a.cells, a.trajectories,
                     pct(a.extracted_first), pct(a.extracted), pct(a.checked_first), pct(a.checked), pct(a.assembled_first),
                     pct(a.assembled), verified_text(a, a.verified_first), verified_text(a, a.verified), cpu_verified_note(a));
  o += "\n## pass@k (unbiased estimator, mean over cells)\n\n| arm |";
  for (int k : m.ks) o += fmt::format(" verified@{} | assembled@{} |", k, k);
  o += "\n|---|";
  for (size_t i = 0; i < m.ks.size(); ++i) o += "---|---|";
  o += "\n";
  for (auto& a : m.arms) {
    o += fmt::format("| {} |", md_cell(a.label));
    for (size_t i = 0; i < m.ks.size(); ++i)
      o += fmt::format(" {} | {:.3f} |", a.gpu_ran ? fmt::format("{:.3f}", a.pass_at[i].second) : "not run",
                       a.assembled_at[i].second);
    o += "\n";
  }
  for (int base = 0; base < 2; ++base) {
    o += fmt::format("\n## fast_p vs {} (verified and more than p times as fast)\n\n| arm |", base ? "the library" : "nvcc");
    for (double p : kFastP) o += fmt::format(" p={} |", p);
    o += "\n|---|";
    for (size_t i = 0; i < kFastP.size(); ++i) o += "---|";
    o += "\n";
    for (auto& a : m.arms) {
      o += fmt::format("| {} |", md_cell(a.label));
      // Above p = 0 a rate needs times: where kernels were verified but none was timed
      // (time = false) it is "not timed", not 0%.
      bool untimed = a.verified.hits > 0 && (base ? a.timed_library : a.timed_nvcc) == 0;
      for (auto& f : base ? a.fast_library : a.fast_nvcc)
        o += fmt::format(" {} |", !a.gpu_ran ? "not run" : f.p > 0 && untimed ? "not timed" : pct(f.rate));
      o += "\n";
    }
  }
  o += "\n## Speed, proof and cost\n\n";
  o += "| arm | geomean vs nvcc | geomean vs library | proven in SASS | proven executed | per verified kernel |\n"
       "|---|---|---|---|---|---|\n";
  for (auto& a : m.arms)
    o += fmt::format("| {} | {} ({} timed) | {} ({} timed) | {} | {} | {} |\n", md_cell(a.label), speedup(a.geomean_nvcc), a.timed_nvcc,
                     speedup(a.geomean_library), a.timed_library, pct(a.proven_sass), pct(a.proven_executed), per_verified(a));
  o += "\n## Rounds to the first verified kernel (trajectories)\n\n| arm |";
  size_t buckets = m.arms.empty() ? 0 : m.arms[0].first_verified.size();
  for (size_t i = 0; i < buckets; ++i) o += " " + round_bucket(i, buckets) + " |";
  o += "\n|---|";
  for (size_t i = 0; i < buckets; ++i) o += "---|";
  o += "\n";
  for (auto& a : m.arms) {
    o += fmt::format("| {} |", md_cell(a.label));
    for (int n : a.first_verified) o += fmt::format(" {} |", n);
    o += "\n";
  }
  o += "\n## Per task (best verified speedup)\n\n| task | arm | verified | vs nvcc | vs library | status |\n|---|---|---|---|---|---|\n";
  for (auto& r : m.results)
    o += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r.task, md_cell(r.arm), task_verified(r), speedup(r.best_nvcc),
                     r.has_library ? speedup(r.best_library) : "no baseline", md_cell(r.status));
  if (!m.translate.empty()) {
    o += "\n## Translate: the model vs nvcc on the same CUDA source\n\n| task | arm | verified | model / nvcc |\n|---|---|---|---|\n";
    for (auto& r : m.translate)
      o += fmt::format("| {} | {} | {}/{} | {} |\n", r.task, md_cell(r.arm), r.verified, r.trajectories, speedup(r.best_nvcc));
  }
  o += "\n## Failure taxonomy (rounds)\n\n| axis | class |";
  for (auto& a : m.arms) o += " " + md_cell(a.label) + " |";
  o += " total |\n|---|---|";
  for (size_t i = 0; i <= m.arms.size(); ++i) o += "---|";
  o += "\n";
  for (auto& f : m.failures) {
    o += fmt::format("| {} | {} |", f.axis, md_cell(f.name));
    for (int n : f.counts) o += fmt::format(" {} |", n);
    o += fmt::format(" {} |\n", f.total);
  }
  if (m.failures.empty()) o += "| - | no failed round | \n";
  o += "\n## GPUs\n\n";
  for (auto& [gpu, n] : m.rounds_per_gpu) o += fmt::format("- GPU {}: {} rounds verified\n", gpu, n);
  if (m.rounds_per_gpu.empty()) o += "- no round was verified on a GPU\n";
  o += "\nDefinitions: docs/bench.md.\n";
  return o;
}

std::string render_json(const BenchMetrics& m) {
  auto rate = [](const Rate& r) { return json{{"hits", r.hits}, {"of", r.of}, {"value", r.value()}}; };
  json j;
  j["name"] = m.name;
  j["cells_in_grid"] = m.cells_in_grid;
  j["cells"] = m.cells;
  j["finished"] = m.finished;
  j["arms"] = json::array();
  for (auto& a : m.arms) {
    json aj = {{"label", a.label}, {"model", a.model}, {"mode", a.mode}, {"knowledge", a.knowledge}, {"cells", a.cells},
               {"trajectories", a.trajectories}, {"gpu_ran", a.gpu_ran}};
    aj["first_round"] = {{"extracted", rate(a.extracted_first)}, {"checked", rate(a.checked_first)},
                         {"assembled", rate(a.assembled_first)}, {"verified", rate(a.verified_first)}};
    aj["by_end"] = {{"extracted", rate(a.extracted)}, {"checked", rate(a.checked)}, {"assembled", rate(a.assembled)},
                    {"verified", rate(a.verified)}, {"verified_cpu", rate(a.verified_cpu)}};
    aj["engine_ran"] = a.engine_ran;
    for (auto& [k, v] : a.pass_at) aj["pass_at_k"][std::to_string(k)] = v;
    for (auto& [k, v] : a.assembled_at) aj["assembled_at_k"][std::to_string(k)] = v;
    for (auto& f : a.fast_nvcc) aj["fast_p_nvcc"].push_back({{"p", f.p}, {"rate", rate(f.rate)}});
    for (auto& f : a.fast_library) aj["fast_p_library"].push_back({{"p", f.p}, {"rate", rate(f.rate)}});
    aj["geomean_speedup_nvcc"] = a.geomean_nvcc;
    aj["geomean_speedup_library"] = a.geomean_library;
    aj["timed_nvcc"] = a.timed_nvcc;
    aj["timed_library"] = a.timed_library;
    aj["proven_in_sass"] = rate(a.proven_sass);
    aj["proven_executed"] = rate(a.proven_executed);
    aj["rounds_to_first_verified"] = a.first_verified;  // [r-1]: first verified at round r; last: never
    aj["prompt_tokens"] = a.prompt_tokens;
    aj["completion_tokens"] = a.completion_tokens;
    if (a.priced) aj["cost_usd"] = a.cost_usd;
    j["arms"].push_back(aj);
  }
  auto result = [](const TaskResult& r) {
    return json{{"task", r.task}, {"arm", r.arm}, {"has_library", r.has_library}, {"verified", r.verified},
                {"trajectories", r.trajectories}, {"verified_cpu", r.verified_cpu}, {"best_speedup_nvcc", r.best_nvcc},
                {"best_speedup_library", r.best_library},
                {"status", r.status}};
  };
  j["tasks"] = json::array();
  for (auto& r : m.results) j["tasks"].push_back(result(r));
  j["translate"] = json::array();
  for (auto& r : m.translate) j["translate"].push_back(result(r));
  j["failures"] = json::array();
  for (auto& f : m.failures) j["failures"].push_back({{"axis", f.axis}, {"class", f.name}, {"counts", f.counts}, {"total", f.total}});
  j["rounds_verified_per_gpu"] = json::object();
  for (auto& [gpu, n] : m.rounds_per_gpu) j["rounds_verified_per_gpu"][std::to_string(gpu)] = n;
  return j.dump(2) + "\n";
}

std::string render(const BenchMetrics& m, ReportFormat f) {
  switch (f) {
    case ReportFormat::markdown: return render_markdown(m);
    case ReportFormat::json: return render_json(m);
    case ReportFormat::html: return render_html(m);
  }
  return "";
}

}  // namespace ptxforge::bench
