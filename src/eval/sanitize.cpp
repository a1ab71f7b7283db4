#include "eval/sanitize.h"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/text.h"

namespace ptxforge::eval {

namespace {

constexpr std::pair<SanitizerTool, std::string_view> kToolNames[] = {{SanitizerTool::memcheck, "memcheck"},
                                                                     {SanitizerTool::racecheck, "racecheck"},
                                                                     {SanitizerTool::synccheck, "synccheck"},
                                                                     {SanitizerTool::initcheck, "initcheck"}};

constexpr size_t kMaxFastBytes = size_t{256} << 20;  // memcheck and synccheck: size sets up to this much buffer memory

// The number right after `key` in `line`, or nullopt.
std::optional<size_t> number_after(std::string_view line, std::string_view key) {
  auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string rest(line.substr(at + key.size()));
  char* end = nullptr;
  unsigned long long v = std::strtoull(rest.c_str(), &end, 10);
  if (end == rest.c_str()) return std::nullopt;
  return static_cast<size_t>(v);
}

bool noise(std::string_view line) {
  for (std::string_view p : {"Saved host backtrace", "Host Frame", "Device Frame", "in /", "COMPUTE-SANITIZER"})
    if (starts_with(line, p)) return true;
  return false;
}

// Lines that can give a held-back size away: where, by which thread, at which address.
bool reveals_size(std::string_view line) {
  for (std::string_view p : {"by thread", "in block", "Address", "address", "allocation", "bytes after", "bytes before", "out of bounds"})
    if (line.find(p) != std::string_view::npos) return true;
  return false;
}

}  // namespace

int64_t case_bytes(const task::Task& t, const task::SizeSet& set) {
  int64_t total = 0;
  for (auto& p : t.params) {
    if (p.kind != task::Param::buffer) continue;
    auto n = p.count.evaluate_int(set.values);
    if (n) total += *n * static_cast<int64_t>(task::dtype_size(p.dtype));
  }
  return total;
}

const task::SizeSet* shown_size_set_by_bytes(const task::Task& t, bool largest) {
  const task::SizeSet* pick = nullptr;
  for (auto* s : t.size_sets(false))
    if (!pick || (largest ? case_bytes(t, *s) > case_bytes(t, *pick) : case_bytes(t, *s) < case_bytes(t, *pick))) pick = s;
  return pick;
}

std::string_view to_string(SanitizerTool t) {
  for (auto& [tool, name] : kToolNames)
    if (tool == t) return name;
  return "?";
}

SanitizerLog parse_sanitizer_log(std::string_view log) {
  SanitizerLog out;
  bool in_report = false, report_done = false;
  for (auto raw : split(log, '\n')) {
    std::string_view line = raw;
    while (starts_with(line, "=")) line.remove_prefix(1);
    line = trim(line);
    if (auto n = number_after(line, "ERROR SUMMARY: ")) {
      out.summary = true;
      out.errors += *n;
      continue;
    }
    if (line.find("RACECHECK SUMMARY: ") != std::string_view::npos) {
      out.summary = true;
      auto e = number_after(line, "(");
      auto w = number_after(line, "errors, ");
      if (!w) w = number_after(line, "error, ");
      if (e || w) out.errors += e.value_or(0) + w.value_or(0);
      else out.errors += number_after(line, "RACECHECK SUMMARY: ").value_or(0);
      continue;
    }
    if (line.empty()) {
      if (in_report) report_done = true;
      continue;
    }
    if (noise(line) || report_done) continue;
    in_report = true;
    if (out.first_report.size() < 5) out.first_report.emplace_back(line);
  }
  return out;
}

std::vector<std::string> sanitizer_argv(const std::string& sanitizer, SanitizerTool tool, const std::string& log_file,
                                        bool shared_initcheck, const std::vector<std::string>& worker_argv) {
  std::vector<std::string> argv = {sanitizer,       "--tool",        std::string(to_string(tool)), "--log-file", log_file,
                                   "--print-limit", "20",            "--error-exitcode",           std::to_string(kSanitizerErrorExit)};
  if (tool == SanitizerTool::racecheck) argv.insert(argv.end(), {"--racecheck-report", "all"});
  if (tool == SanitizerTool::initcheck && shared_initcheck) argv.insert(argv.end(), {"--initcheck-address-space", "all"});
  argv.insert(argv.end(), worker_argv.begin(), worker_argv.end());
  return argv;
}

std::vector<std::string> sanitizer_size_sets(const task::Task& t, SanitizerTool tool) {
  if (!t.sanitize_sizes.empty()) return t.sanitize_sizes;
  std::vector<const task::SizeSet*> sets = t.size_sets(true);
  std::stable_sort(sets.begin(), sets.end(), [&](auto* a, auto* b) { return case_bytes(t, *a) < case_bytes(t, *b); });
  std::vector<std::string> out;
  if (sets.empty()) return out;
  if (tool == SanitizerTool::memcheck || tool == SanitizerTool::synccheck) {
    for (auto* s : sets)
      if (out.empty() || case_bytes(t, *s) <= static_cast<int64_t>(kMaxFastBytes)) out.push_back(s->name);
    return out;
  }
  for (bool shown : {true, false})
    for (auto* s : sets)
      if (s->shown == shown) {
        out.push_back(s->name);
        break;
      }
  return out;
}

gpu::Placement sanitizer_placement(SanitizerTool tool) {
  switch (tool) {
    case SanitizerTool::memcheck: return gpu::Placement::exact;
    case SanitizerTool::initcheck: return gpu::Placement::exact_unwritten;
    case SanitizerTool::racecheck:
    case SanitizerTool::synccheck: break;
  }
  return gpu::Placement::guarded;  // verify's own: nothing in the layout tells the tool apart
}

gpu::Job sanitizer_job(const gpu::Job& verify_job, const task::Task& t, SanitizerTool tool) {
  gpu::Job job = verify_job;
  job.kind = gpu::JobKind::verify;
  job.held_back = true;
  job.seeds = 1;
  job.size_sets = sanitizer_size_sets(t, tool);
  job.placement = sanitizer_placement(tool);
  return job;
}

ToolVerdict judge_sanitizer(SanitizerTool tool, const SanitizerLog& log, int exit_code, const std::optional<gpu::Outcome>& outcome,
                            const std::string& exchange_error) {
  ToolVerdict v;
  std::string name(to_string(tool));
  if (log.errors > 0 || exit_code == kSanitizerErrorExit) {
    std::vector<std::string> model;
    for (auto& l : log.first_report)
      if (!reveals_size(l)) model.push_back(l);
    std::string count = log.errors > 0 ? fmt::format("{} error{}", log.errors, log.errors == 1 ? "" : "s")
                                       : fmt::format("errors (exit code {})", exit_code);
    v.summary = fmt::format("{}: {}{}{}", name, count, log.first_report.empty() ? "" : ": ", fmt::join(log.first_report, "; "));
    v.model_summary = fmt::format("{}: {}{}{}", name, count, model.empty() ? "" : ": ", fmt::join(model, "; "));
    return v;
  }
  if (!outcome) {
    v.summary = v.model_summary = fmt::format("{} run failed: {}", name, exchange_error);
    return v;
  }
  if (outcome->failure) {
    v.summary = v.model_summary =
        fmt::format("{} run failed: {}: {}", name, gpu::to_string(outcome->failure->kind), outcome->failure->message);
    return v;
  }
  if (!log.summary) {
    v.summary = v.model_summary = fmt::format("{} printed no summary (exit code {}): its run did not finish", name, exit_code);
    return v;
  }
  if (exit_code != 0) {
    v.summary = v.model_summary = fmt::format("{} exited with code {}", name, exit_code);
    return v;
  }
  v.passed = true;
  v.summary = v.model_summary = fmt::format("{}: 0 errors", name);
  return v;
}

}  // namespace ptxforge::eval
