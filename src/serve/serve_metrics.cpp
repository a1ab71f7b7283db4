// The core's metrics (serve_metrics.h), rendered in Prometheus' text format: a HELP and a TYPE
// line per family, then its samples; a histogram's buckets are cumulative and end at +Inf.
#include "serve/serve_metrics.h"

#include <fmt/format.h>

namespace ptxforge::serve {

ServeMetrics::ServeMetrics(std::vector<std::string> slot_names) {
  for (auto& n : slot_names) busy_.emplace_back(std::move(n), 0.0);
}

void ServeMetrics::accepted(size_t runs) {
  std::lock_guard lock(m_);
  accepted_ += runs;
}

void ServeMetrics::count_verdict(const Verified& v) {
  std::string stage = v.failed_stage ? std::string(eval::to_string(*v.failed_stage)) : "none";
  ++runs_[{stage, std::string(to_string(v.outcome))}];
  if (v.failure) ++failures_[std::string(gpu::to_string(*v.failure))];
}

void ServeMetrics::finished(const Verified& v, const std::string& slot, double seconds) {
  std::lock_guard lock(m_);
  count_verdict(v);
  for (auto& [name, busy] : busy_)
    if (name == slot) busy += seconds;
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) {
      ++buckets_[i];
      break;
    }
  ++count_;
  sum_ += seconds;
}

void ServeMetrics::finished_without_slot(const Verified& v) {
  std::lock_guard lock(m_);
  count_verdict(v);
}

double ServeMetrics::mean_run_seconds() const {
  std::lock_guard lock(m_);
  return count_ ? sum_ / static_cast<double>(count_) : 0;
}

std::string ServeMetrics::render(size_t queue_depth) const {
  std::lock_guard lock(m_);
  std::string out;
  out += "# HELP ptxforge_queue_depth Runs stored and waiting for a worker.\n# TYPE ptxforge_queue_depth gauge\n";
  out += fmt::format("ptxforge_queue_depth {}\n", queue_depth);
  out += "# HELP ptxforge_runs_accepted_total Runs accepted and stored (idempotent replays not counted).\n"
         "# TYPE ptxforge_runs_accepted_total counter\n";
  out += fmt::format("ptxforge_runs_accepted_total {}\n", accepted_);
  out += "# HELP ptxforge_runs_total Finished runs by the stage that failed (none) and verdict.\n"
         "# TYPE ptxforge_runs_total counter\n";
  for (auto& [key, n] : runs_) out += fmt::format("ptxforge_runs_total{{stage=\"{}\",verdict=\"{}\"}} {}\n", key.first, key.second, n);
  out += "# HELP ptxforge_failures_total Runtime failures of candidates by kind.\n# TYPE ptxforge_failures_total counter\n";
  for (auto& [kind, n] : failures_) out += fmt::format("ptxforge_failures_total{{kind=\"{}\"}} {}\n", kind, n);
  out += "# HELP ptxforge_worker_busy_seconds_total Seconds each worker spent running candidates.\n"
         "# TYPE ptxforge_worker_busy_seconds_total counter\n";
  for (auto& [name, s] : busy_) out += fmt::format("ptxforge_worker_busy_seconds_total{{worker=\"{}\"}} {:.6f}\n", name, s);
  out += "# HELP ptxforge_run_seconds Wall time of a run on its worker.\n# TYPE ptxforge_run_seconds histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    cumulative += buckets_[i];
    out += fmt::format("ptxforge_run_seconds_bucket{{le=\"{}\"}} {}\n", kBuckets[i], cumulative);
  }
  out += fmt::format("ptxforge_run_seconds_bucket{{le=\"+Inf\"}} {}\n", count_);
  out += fmt::format("ptxforge_run_seconds_sum {:.6f}\nptxforge_run_seconds_count {}\n", sum_, count_);
  return out;
}

}  // namespace ptxforge::serve
