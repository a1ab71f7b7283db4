// The core's counters for /metrics (Prometheus text format 0.0.4): what an operator watches
// to size a deployment (queue depth, busy time per worker, run latency) and to see what the
// clients' candidates do (verdicts by the stage that failed, runtime failures by kind). Only
// names of our own enums and slots reach a label: no task size, candidate text or token.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "serve/verifier.h"

namespace ptxforge::serve {

class ServeMetrics {
 public:
  // Upper bounds of ptxforge_run_seconds' buckets (+Inf is implied).
  static constexpr std::array<double, 11> kBuckets = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

  explicit ServeMetrics(std::vector<std::string> slot_names);
  void accepted(size_t runs);
  // A run finished on `slot` after `seconds` of its slot's time.
  void finished(const Verified& v, const std::string& slot, double seconds);
  // A run the core finished without a slot (no slot of its kind, started too often).
  void finished_without_slot(const Verified& v);
  // The mean run time so far (0 before the first), for a Retry-After estimate.
  double mean_run_seconds() const;
  std::string render(size_t queue_depth) const;

 private:
  void count_verdict(const Verified& v);
  mutable std::mutex m_;
  uint64_t accepted_ = 0;
  std::map<std::pair<std::string, std::string>, uint64_t> runs_;  // (stage, verdict)
  std::map<std::string, uint64_t> failures_;                      // FailureKind name
  std::vector<std::pair<std::string, double>> busy_;              // per slot, in slot order
  std::array<uint64_t, kBuckets.size()> buckets_{};               // runs at or under each bound (not cumulative)
  uint64_t count_ = 0;
  double sum_ = 0;
};

}  // namespace ptxforge::serve
