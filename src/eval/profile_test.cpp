#include "eval/profile.h"

#include <gtest/gtest.h>

namespace ptxforge::eval {
namespace {

TEST(Profile, TheFeedbackSaysWhatLimitsTheKernelBesideTheReference) {
  ProfileReport p;
  p.note = "Nsight Compute, clocks as timed, size set 'large', 1 seed: 1 candidate launch(es) and the reference kernel";
  toolchain::ProfileSummary c;
  c.kernel = "sgemm";
  c.duration_us = 812.25;
  c.achieved_occupancy = 24.4;
  c.theoretical_occupancy = 25;
  c.occupancy_limiter = "registers (168 per thread): 2 blocks per SM";
  c.registers = 168;
  c.block_size = 256;
  c.dram_pct = 12;
  c.sm_pct = 45;
  c.top_stalls = {{"barrier (waiting at a barrier)", 0.5}};
  c.shared_wavefronts_per_request = 4.0;
  c.local_bytes = 2.5e6;
  toolchain::ProfileSummary ref = c;
  ref.kernel = "sgemm_ref";
  ref.occupancy_limiter.clear();
  ref.achieved_occupancy = 60;
  p.candidate = {c};
  p.reference = {ref};
  std::string text = render_profile(p);
  EXPECT_NE(text.find("## Profile (Nsight Compute"), std::string::npos) << text;
  EXPECT_NE(text.find("limited by registers (168 per thread): 2 blocks per SM"), std::string::npos) << text;
  EXPECT_NE(text.find("barrier (waiting at a barrier) 50%"), std::string::npos) << text;
  EXPECT_NE(text.find("4.0 wavefronts per request (1 without bank conflicts)"), std::string::npos) << text;
  EXPECT_NE(text.find("local memory: 2.5 MB"), std::string::npos) << text;
  EXPECT_NE(text.find("nvcc's reference kernel: `sgemm_ref` 812.2 us: occupancy 60%"), std::string::npos) << text;
  // Without bank conflicts or local traffic those lines are left out.
  p.candidate[0].shared_wavefronts_per_request = 1.0;
  p.candidate[0].local_bytes = 0;
  text = render_profile(p);
  EXPECT_EQ(text.find("bank conflicts"), std::string::npos);
  EXPECT_EQ(text.find("local memory"), std::string::npos);
  EXPECT_EQ(render_profile(ProfileReport{}), "");  // nothing profiled: nothing said
}

}  // namespace
}  // namespace ptxforge::eval
