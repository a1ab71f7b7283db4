// `--profile`: one Nsight Compute pass over a verified candidate's launches (and the reference
// kernel's, which the verify job runs first), read back as the few numbers a kernel author
// acts on: occupancy and what limits it, DRAM / L2 / SM throughput as % of peak, tensor and
// FMA pipe use, the top warp-stall reasons, shared-memory bank conflicts and local-memory
// traffic. The metric names are Nsight Compute 2025's on sm_90 (../docs/design.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ptxforge::toolchain {

// One profiled launch: its kernel name (as the cubin spells it) and every raw metric ncu
// reported for it, in base units (bytes, ns, %).
struct KernelMetrics {
  std::string kernel;
  std::map<std::string, double, std::less<>> values;
  std::optional<double> get(std::string_view metric) const;
};

// The argv that runs `worker_argv` under ncu collecting the sections and metrics above for
// the first `launches` launches of the kernels named (exact names), into `report`.ncu-rep.
std::vector<std::string> ncu_metrics_argv(const std::string& ncu, const std::string& report, const std::vector<std::string>& kernels,
                                          int launches, const std::vector<std::string>& worker_argv);

// `ncu -i REPORT --page raw --csv --print-units base`: a header row of metric names, a row of
// units, then one row per launch. Numbers may carry thousands separators ("1,234.5").
Result<std::vector<KernelMetrics>> parse_raw_metrics_csv(std::string_view csv);
Result<std::vector<KernelMetrics>> read_raw_metrics(const std::string& ncu, const std::string& report_file);

// What the numbers say, for a person or a model.
struct ProfileSummary {
  std::string kernel;
  double duration_us = 0;
  std::optional<double> achieved_occupancy, theoretical_occupancy;  // % of the SM's warp slots
  std::string occupancy_limiter;  // "registers (64 per thread)", "shared memory (...)", "block size", "" unknown
  int registers = 0, block_size = 0;
  long shared_bytes_per_block = 0;
  std::optional<double> dram_pct, l2_pct, sm_pct, tensor_pct, fma_pct;
  std::vector<std::pair<std::string, double>> top_stalls;  // reason -> share of stalled cycles (0..1), largest first
  std::optional<double> shared_wavefronts_per_request;      // 1 without bank conflicts; 32 for a 32-way conflict
  std::optional<double> local_bytes;                        // local-memory traffic (spills, stack arrays)
};
ProfileSummary summarise_profile(const KernelMetrics& k);

}  // namespace ptxforge::toolchain
