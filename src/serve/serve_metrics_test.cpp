// The core's metrics as Prometheus reads them: every family present from the start (a
// dashboard needs no first run to draw), cumulative buckets, and labels that are names only.
#include "serve/serve_metrics.h"

#include <gtest/gtest.h>

namespace ptxforge::serve {
namespace {

bool has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(ServeMetrics, EveryFamilyIsThereBeforeTheFirstRun) {
  ServeMetrics m({"gpu0", "cpu0"});
  std::string t = m.render(0);
  for (const char* family : {"ptxforge_queue_depth gauge", "ptxforge_runs_accepted_total counter", "ptxforge_runs_total counter",
                             "ptxforge_failures_total counter", "ptxforge_worker_busy_seconds_total counter",
                             "ptxforge_run_seconds histogram"})
    EXPECT_TRUE(has(t, std::string("# TYPE ") + family)) << family;
  EXPECT_TRUE(has(t, "ptxforge_worker_busy_seconds_total{worker=\"gpu0\"} 0.000000")) << t;
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_bucket{le=\"+Inf\"} 0")) << t;
  EXPECT_EQ(m.mean_run_seconds(), 0);
}

TEST(ServeMetrics, CountsVerdictsFailuresBusyTimeAndLatency) {
  ServeMetrics m({"cpu0", "cpu1"});
  m.accepted(3);
  Verified failed;
  failed.outcome = Outcome::failed;
  failed.failed_stage = eval::StageId::verify;
  failed.failure = gpu::FailureKind::race;
  Verified passed;
  passed.outcome = Outcome::passed;
  m.finished(failed, "cpu0", 0.3);
  m.finished(passed, "cpu1", 7.0);
  Verified unrun;  // not verified, no slot
  m.finished_without_slot(unrun);
  std::string t = m.render(5);
  EXPECT_TRUE(has(t, "ptxforge_queue_depth 5")) << t;
  EXPECT_TRUE(has(t, "ptxforge_runs_accepted_total 3")) << t;
  EXPECT_TRUE(has(t, "ptxforge_runs_total{stage=\"verify\",verdict=\"failed\"} 1")) << t;
  EXPECT_TRUE(has(t, "ptxforge_runs_total{stage=\"none\",verdict=\"passed\"} 1")) << t;
  EXPECT_TRUE(has(t, "ptxforge_runs_total{stage=\"none\",verdict=\"not_verified\"} 1")) << t;
  EXPECT_TRUE(has(t, "ptxforge_failures_total{kind=\"race\"} 1")) << t;
  EXPECT_TRUE(has(t, "ptxforge_worker_busy_seconds_total{worker=\"cpu0\"} 0.300000")) << t;
  EXPECT_TRUE(has(t, "ptxforge_worker_busy_seconds_total{worker=\"cpu1\"} 7.000000")) << t;
  // Cumulative: 0.3 s falls under 0.5, 7 s under 10.
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_bucket{le=\"0.25\"} 0")) << t;
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_bucket{le=\"0.5\"} 1")) << t;
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_bucket{le=\"5\"} 1")) << t;
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_bucket{le=\"10\"} 2")) << t;
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_bucket{le=\"300\"} 2")) << t;
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_bucket{le=\"+Inf\"} 2")) << t;
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_sum 7.300000")) << t;
  EXPECT_TRUE(has(t, "ptxforge_run_seconds_count 2")) << t;
  EXPECT_DOUBLE_EQ(m.mean_run_seconds(), 3.65);
}

}  // namespace
}  // namespace ptxforge::serve
