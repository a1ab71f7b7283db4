#include "toolchain/ncu_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ptxforge::toolchain {
namespace {

// Columns and rows as `ncu -i rep --page raw --csv --print-units base` printed them for a
// kernel with shared-memory bank conflicts and a local array (ncu 2025.3.1, H200), with a
// second, made-up launch of a register-limited kernel.
const char* kRawPage = R"csv("ID","Kernel Name","gpu__time_duration.sum","sm__warps_active.avg.pct_of_peak_sustained_active","sm__maximum_warps_per_active_cycle_pct","launch__occupancy_limit_registers","launch__occupancy_limit_shared_mem","launch__occupancy_limit_warps","launch__occupancy_limit_blocks","launch__occupancy_limit_barriers","launch__registers_per_thread","launch__block_size","launch__shared_mem_per_block","gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed","lts__throughput.avg.pct_of_peak_sustained_elapsed","sm__throughput.avg.pct_of_peak_sustained_elapsed","sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed","sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio","smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum","l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum","l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"
"","","ns","%","%","block","block","block","block","block","register/thread","","byte/block","%","%","%","%","%","inst","inst","inst","inst","inst","","","","","byte","byte"
"0","k(float *, int)","1,191,680","94.13","100","8","19","8","32","32","32","256","5,248","76.17","78.77","14.52","0","3.50","27.30","60.27","19.07","14.59","1.00","2,143,583","16,309,029","2,500,000","17,000,000","1,073,741,824","4,295,309,568"
"1","sgemm","2,000","24.5","25","2","19","8","32","32","168","256","0","12","30","45","0","41","10","1","0","30","1","0","0","100","100","0","0"
)csv";

TEST(NcuMetrics, ReadsTheRawPageInBaseUnits) {
  auto rows = parse_raw_metrics_csv(kRawPage);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].kernel, "k(float *, int)");
  EXPECT_DOUBLE_EQ(*(*rows)[0].get("gpu__time_duration.sum"), 1191680);  // thousands separators read
  EXPECT_DOUBLE_EQ(*(*rows)[0].get("launch__shared_mem_per_block"), 5248);
  EXPECT_FALSE((*rows)[0].get("no__such_metric"));
}

TEST(NcuMetrics, SummarisesWhatLimitsTheKernel) {
  auto rows = parse_raw_metrics_csv(kRawPage);
  ASSERT_TRUE(rows);
  auto a = summarise_profile((*rows)[0]);
  EXPECT_NEAR(a.duration_us, 1191.68, 1e-9);
  EXPECT_EQ(a.occupancy_limiter, "");  // a full SM has no limiter worth naming
  ASSERT_EQ(a.top_stalls.size(), 3u);  // "selected" is issuing, not a stall
  EXPECT_EQ(a.top_stalls[0].first.substr(0, 12), "mio_throttle");
  EXPECT_NEAR(a.top_stalls[0].second, 60.27 / (27.30 + 60.27 + 19.07 + 14.59), 1e-9);
  EXPECT_EQ(a.top_stalls[1].first.substr(0, 15), "long_scoreboard");
  ASSERT_TRUE(a.shared_wavefronts_per_request);
  EXPECT_NEAR(*a.shared_wavefronts_per_request, 19.5e6 / (19.5e6 - 2143583 - 16309029), 1e-9);
  ASSERT_TRUE(a.local_bytes);
  EXPECT_DOUBLE_EQ(*a.local_bytes, 1073741824.0 + 4295309568.0);
  auto b = summarise_profile((*rows)[1]);
  EXPECT_EQ(b.occupancy_limiter, "registers (168 per thread): 2 blocks per SM");
  EXPECT_DOUBLE_EQ(*b.shared_wavefronts_per_request, 1.0);
  EXPECT_EQ(b.top_stalls[0].first.substr(0, 7), "barrier");
}

TEST(NcuMetrics, APageWithoutLaunchesIsAnError) {
  EXPECT_FALSE(parse_raw_metrics_csv(""));
  EXPECT_FALSE(parse_raw_metrics_csv("==PROF== nothing\n"));
  EXPECT_FALSE(parse_raw_metrics_csv("\"ID\",\"Kernel Name\"\n\"\",\"\"\n"));
  EXPECT_FALSE(parse_raw_metrics_csv("\"ID\",\"x__y\"\n\"\",\"\"\n\"0\",\"1\"\n"));  // no kernel column
}

TEST(NcuMetrics, TheProfileCommandFiltersTheKernelsByExactName) {
  auto argv = ncu_metrics_argv("ncu", "/tmp/r", {"sgemm", "ref.k"}, 2, {"worker", "--device", "1"});
  auto has = [&](const std::string& a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); };
  EXPECT_TRUE(has("regex:^(sgemm|ref\\.k)$"));
  EXPECT_TRUE(has("none"));  // --clock-control none: the clocks the timings ran at
  EXPECT_EQ(argv[argv.size() - 3], "worker");
}

}  // namespace
}  // namespace ptxforge::toolchain
