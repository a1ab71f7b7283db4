#include "toolchain/ncu_metrics.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "toolchain/ncu.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {

namespace {

// Metrics no section above collects; each is looked up by name, so a missing one is skipped.
const char* kExtraMetrics =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,"
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,"
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum";

constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";

// "1,234.5" -> 1234.5; text that is not a number -> nullopt.
std::optional<double> number(std::string_view s) {
  std::string digits;
  for (char c : trim(s))
    if (c != ',') digits += c;
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return v;
}

std::string stall_meaning(std::string_view reason) {
  static const std::map<std::string_view, std::string_view> m = {
      {"long_scoreboard", "waiting for global or local memory"},
      {"short_scoreboard", "waiting for shared memory or a special-function result"},
      {"barrier", "waiting at a barrier"},
      {"mio_throttle", "the shared-memory / special-instruction queue is full"},
      {"lg_throttle", "too many global/local memory instructions in flight"},
      {"math_pipe_throttle", "a math pipe is saturated"},
      {"wait", "fixed-latency dependencies"},
      {"gmma", "waiting for wgmma"},
      {"membar", "memory barriers"},
      {"drain", "draining stores at exit"},
      {"not_selected", "another warp issued (parallelism is not the problem)"},
      {"branch_resolving", "branch targets"},
      {"no_instruction", "instruction cache misses"},
      {"dispatch_stall", "the dispatcher"},
      {"sleeping", "nanosleep or yield"},
      {"tex_throttle", "the texture pipe"},
      {"imc_miss", "constant cache misses"},
      {"misc", "other reasons"},
  };
  auto it = m.find(reason);
  return it == m.end() ? std::string(reason) : fmt::format("{} ({})", reason, it->second);
}

}  // namespace

std::optional<double> KernelMetrics::get(std::string_view metric) const {
  auto it = values.find(metric);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ncu_metrics_argv(const std::string& ncu, const std::string& report, const std::vector<std::string>& kernels,
                                          int launches, const std::vector<std::string>& worker_argv) {
  std::vector<std::string> names;
  for (auto& k : kernels) names.push_back(regex_escape(k));
  std::vector<std::string> argv = {ncu, "--clock-control", "none",  // the clocks the timings ran at
                                   "--section", "SpeedOfLight", "--section", "Occupancy", "--section", "LaunchStats",
                                   "--section", "WarpStateStats", "--metrics", kExtraMetrics,
                                   "--target-processes", "all", "--kernel-name-base", "mangled",
                                   "--kernel-name", fmt::format("regex:^({})$", fmt::join(names, "|")),
                                   "--launch-count", std::to_string(std::max(1, launches)),
                                   "--log-file", report + ".log",  // the worker's stdout carries its replies
                                   "-f", "-o", report};
  argv.insert(argv.end(), worker_argv.begin(), worker_argv.end());
  return argv;
}

Result<std::vector<KernelMetrics>> parse_raw_metrics_csv(std::string_view csv) {
  std::vector<std::vector<std::string>> rows;
  for (std::string_view line : split(csv, '\n'))
    if (!trim(line).empty() && trim(line).front() == '"') rows.push_back(csv_fields(line));  // skips ==PROF== lines
  if (rows.size() < 2) return Error{"ncu's raw page has no rows"};
  const auto& header = rows[0];
  auto kernel_col = std::find(header.begin(), header.end(), "Kernel Name");
  if (kernel_col == header.end()) return Error{"ncu's raw page has no 'Kernel Name' column"};
  size_t kc = static_cast<size_t>(kernel_col - header.begin());
  std::vector<KernelMetrics> out;
  for (size_t r = 2; r < rows.size(); ++r) {  // rows[1] holds the units
    const auto& row = rows[r];
    if (row.size() != header.size()) continue;
    KernelMetrics k;
    k.kernel = row[kc];
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c].find("__") != std::string::npos)
        if (auto v = number(row[c])) k.values[header[c]] = *v;
    out.push_back(std::move(k));
  }
  if (out.empty()) return Error{"ncu's raw page lists no launch"};
  return out;
}

Result<std::vector<KernelMetrics>> read_raw_metrics(const std::string& ncu, const std::string& report_file) {
  auto proc = run_process({ncu, "-i", report_file, "--page", "raw", "--csv", "--print-units", "base", "--print-kernel-base", "mangled"},
                          std::chrono::seconds(300));
  if (!proc) return proc.error();
  if (proc->exit_code != 0)
    return Error{fmt::format("ncu could not read {} (exit {}): {}", report_file, proc->exit_code,
                             trim(proc->err.empty() ? proc->out : proc->err).substr(0, 400))};
  return parse_raw_metrics_csv(proc->out);
}

ProfileSummary summarise_profile(const KernelMetrics& k) {
  ProfileSummary s;
  s.kernel = k.kernel;
  s.duration_us = k.get("gpu__time_duration.sum").value_or(0) / 1000.0;
  s.achieved_occupancy = k.get("sm__warps_active.avg.pct_of_peak_sustained_active");
  s.theoretical_occupancy = k.get("sm__maximum_warps_per_active_cycle_pct");
  s.registers = static_cast<int>(k.get("launch__registers_per_thread").value_or(0));
  s.block_size = static_cast<int>(k.get("launch__block_size").value_or(0));
  // The kernel's own shared memory (static + dynamic), without the 1 KB the driver reserves per block.
  auto smem_static = k.get("launch__shared_mem_per_block_static"), smem_dynamic = k.get("launch__shared_mem_per_block_dynamic");
  s.shared_bytes_per_block = static_cast<long>(smem_static || smem_dynamic ? smem_static.value_or(0) + smem_dynamic.value_or(0)
                                                                            : k.get("launch__shared_mem_per_block").value_or(0));
  // The limit that allows the fewest blocks per SM is the limiter (the first of a tie).
  const std::pair<const char*, std::string> limits[] = {
      {"launch__occupancy_limit_registers", fmt::format("registers ({} per thread)", s.registers)},
      {"launch__occupancy_limit_shared_mem", fmt::format("shared memory ({} bytes per block)", s.shared_bytes_per_block)},
      {"launch__occupancy_limit_warps", fmt::format("the block size ({} threads: the SM's warp slots)", s.block_size)},
      {"launch__occupancy_limit_blocks", fmt::format("the SM's block limit (blocks of {} threads are small)", s.block_size)},
      {"launch__occupancy_limit_barriers", "named barriers"}};
  std::optional<double> fewest;
  bool full = s.theoretical_occupancy && *s.theoretical_occupancy >= 99.5;  // nothing limits a full SM
  for (auto& [metric, text] : limits)
    if (!full)
      if (auto v = k.get(metric); v && (!fewest || *v < *fewest)) {
        fewest = v;
        s.occupancy_limiter = fmt::format("{}: {:.0f} blocks per SM", text, *v);
      }
  s.dram_pct = k.get("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
  s.l2_pct = k.get("lts__throughput.avg.pct_of_peak_sustained_elapsed");
  s.sm_pct = k.get("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  s.tensor_pct = k.get("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed");
  s.fma_pct = k.get("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed");
  double total = 0;
  std::vector<std::pair<std::string, double>> stalls;
  for (auto& [name, v] : k.values)
    if (starts_with(name, kStallPrefix) && name.size() > kStallPrefix.size() + kStallSuffix.size() &&
        name.substr(name.size() - kStallSuffix.size()) == kStallSuffix) {
      std::string reason = name.substr(kStallPrefix.size(), name.size() - kStallPrefix.size() - kStallSuffix.size());
      if (reason == "selected") continue;  // issuing, not stalled
      total += v;
      if (v > 0) stalls.emplace_back(reason, v);
    }
  std::sort(stalls.begin(), stalls.end(), [](auto& a, auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
  for (size_t i = 0; i < stalls.size() && i < 3; ++i) s.top_stalls.emplace_back(stall_meaning(stalls[i].first), stalls[i].second / total);
  auto conflicts_ld = k.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
  auto conflicts_st = k.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
  auto waves_ld = k.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum");
  auto waves_st = k.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum");
  if (conflicts_ld && conflicts_st && waves_ld && waves_st) {
    double waves = *waves_ld + *waves_st, ideal = waves - *conflicts_ld - *conflicts_st;
    if (ideal > 0) s.shared_wavefronts_per_request = waves / ideal;
  }
  auto local_ld = k.get("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum");
  auto local_st = k.get("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum");
  if (local_ld || local_st) s.local_bytes = local_ld.value_or(0) + local_st.value_or(0);
  return s;
}

}  // namespace ptxforge::toolchain
