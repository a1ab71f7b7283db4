// The tcgen05 rules' wording: each finding names the rule, sits at the right line and carries a
// hint that states the correct form (rules_tcgen05_test.cpp proves the verdicts against ptxas).
// The defects here are those a model writes: a column count that is not a power of two, a
// .num that does not exist, a vector one register short, a block-scaled kind without
// .block_scale, a disable-output-lane vector sized for the other cta_group.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/ptx_kernel.h"

namespace ptxforge::ptx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::kernel;
using testing::only;

std::string k100(const std::string& body, const std::string& target = "sm_100a") {
  return kernel(".reg .b32 %v<130>;\n" + body, target, "9.0");
}
std::vector<std::string> ids(const std::string& body, const std::string& target = "sm_100a") {
  return testing::ids(k100(body, target), false);
}
CheckResult check(const std::string& body) { return check_source(k100(body), ValidateOptions{false}); }

TEST(Tcgen05Rules, AllocColumnsArePowersOfTwoFrom32To512) {
  auto r = check("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%rd1], 48;");
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "immediate-value");
  EXPECT_EQ(d.loc.line, 14u);
  EXPECT_THAT(d.message, HasSubstr("power of two from 32 to 512"));
  EXPECT_EQ(d.hint, "allocate 64 columns");
  ASSERT_TRUE(d.fixit);
  EXPECT_EQ(d.fixit->replacement, "64");
  EXPECT_THAT(ids("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%rd1], 16;"), ElementsAre("immediate-value"));
  EXPECT_THAT(ids("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%rd1], 512;"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%rd1], %r1;"), IsEmpty())
      << "a register count is not judged";
  // dealloc: ptxas only asks for a multiple of 32.
  EXPECT_THAT(ids("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 96;"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 48;"), ElementsAre("immediate-value"));
}

TEST(Tcgen05Rules, AllocNeedsItsModifiers) {
  auto r = check("tcgen05.alloc.cta_group::1.sync.shared::cta.b32 [%rd1], 32;");
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "missing-modifier");
  EXPECT_EQ(d.hint, "add '.aligned'");
  ASSERT_TRUE(d.fixit);
  EXPECT_THAT(ids("tcgen05.alloc.sync.aligned.shared::cta.b32 [%rd1], 32;"), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids("tcgen05.alloc.cta_group::1.sync.aligned.shared::cluster.b32 [%rd1], 32;"),
              ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids("tcgen05.alloc.cta_group::3.sync.aligned.shared::cta.b32 [%rd1], 32;"),
              ElementsAre("unknown-modifier"));
}

TEST(Tcgen05Rules, LoadNumAndVectorSize) {
  auto r = check("tcgen05.ld.sync.aligned.32x32b.x3.b32 {%v1, %v2, %v3}, [%r1];");
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "unknown-modifier");
  EXPECT_THAT(d.hint, HasSubstr("did you mean"));
  auto r2 = check("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%v1, %v2, %v3, %v4, %v5, %v6, %v7}, [%r1];");
  auto& d2 = only(r2);
  EXPECT_EQ(d2.check_id, "vector-width");
  EXPECT_THAT(d2.message, HasSubstr("has 7 registers"));
  EXPECT_EQ(d2.hint, "list exactly 8 .b32 registers");
  EXPECT_THAT(ids("tcgen05.ld.sync.aligned.16x256b.x2.b32 {%v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7}, [%r1];"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.ld.sync.aligned.16x256b.x64.b32 {%v0}, [%r1];"), ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids("tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%v0}, [%r1];"), ElementsAre("operand-count"));
  EXPECT_THAT(ids("tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%v0}, [%r1], 16;"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.ld.sync.32x32b.x1.b32 {%v0}, [%r1];"), IsEmpty()) << ".aligned is optional on ld";
  EXPECT_THAT(ids("tcgen05.ld.sync.aligned.32x32b.x1.unpack::16b.b32 {%v0}, [%r1];"), ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids("tcgen05.st.sync.aligned.32x32b.x1.b32 [%rd1], {%v0};"), ElementsAre("operand-type"));
}

TEST(Tcgen05Rules, BlockScaledKinds) {
  auto r = check("tcgen05.mma.cta_group::1.kind::mxf8f6f4 [%r1], %rd1, %rd2, %r2, [%r3], [%r4], %p1;");
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "missing-modifier");
  EXPECT_THAT(d.message, HasSubstr("needs .block_scale"));
  EXPECT_THAT(d.hint, HasSubstr("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale"));
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r1], %rd1, %rd2, %r2, [%r3], [%r4], %p1;"),
              IsEmpty());
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::2X [%r1], %rd1, %rd2, %r2, [%r3], "
                  "[%r4], %p1;"),
              ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale [%r1], %rd1, %rd2, %r2, [%r3], [%r4], %p1;"),
              ElementsAre("missing-modifier"));
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::f16.block_scale [%r1], %rd1, %rd2, %r2, [%r3], [%r4], %p1;"),
              ElementsAre("illegal-modifier"));
  // Family targets write the block size, not the scale vector.
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%r1], %rd1, %rd2, %r2, [%r3], "
                  "[%r4], %p1;", "sm_100f"),
              ElementsAre("needs-target"));
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%r1], %rd1, %rd2, %r2, [%r3], [%r4], "
                  "%p1;", "sm_100f"),
              IsEmpty());
}

TEST(Tcgen05Rules, DisableOutputLaneVectorFollowsCtaGroup) {
  auto r = check("tcgen05.mma.cta_group::2.kind::f16 [%r1], %rd1, %rd2, %r2, {%v0, %v1, %v2, %v3}, %p1;");
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "vector-width");
  EXPECT_THAT(d.message, HasSubstr(".cta_group::2"));
  EXPECT_EQ(d.hint, "list exactly 8 .b32 registers");
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, {%v0, %v1, %v2, %v3}, %p1, 4;"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1, 16;"), ElementsAre("immediate-value"));
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::f8f6f4 [%r1], %rd1, %rd2, %r2, %p1, 1;"), ElementsAre("operand-count"));
  EXPECT_THAT(ids("tcgen05.mma.cta_group::1.kind::f16 [%r1], %r5, %rd2, %r2, %p1;"), ElementsAre("operand-type"));
  EXPECT_THAT(ids("tcgen05.mma.ws.cta_group::2.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;"), ElementsAre("illegal-modifier"));
}

TEST(Tcgen05Rules, CommitCopyShiftFenceWait) {
  auto r = check("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%rd1];");
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "operand-count");
  EXPECT_THAT(d.hint, HasSubstr("%ctaMask"));
  EXPECT_THAT(ids("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%rd1], %h1;"),
              IsEmpty());
  EXPECT_THAT(ids("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%rd1], %r1;"),
              ElementsAre("operand-type"));
  EXPECT_THAT(ids("tcgen05.cp.cta_group::1.64x128b [%r1], %rd1;"), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids("tcgen05.cp.cta_group::1.64x128b.warpx2::01_23 [%r1], %rd1;"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.cp.cta_group::1.128x256b.warpx4 [%r1], %rd1;"), ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids("tcgen05.cp.cta_group::1.128x256b.b8x16 [%r1], %rd1;"), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids("tcgen05.shift.cta_group::1.down [%r1];"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.fence::before_thread_sync;"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.wait::st.sync.aligned;"), IsEmpty());
  EXPECT_THAT(ids("tcgen05.wait::ld.sync;"), ElementsAre("missing-modifier"));
}

TEST(Tcgen05Rules, LaterVersionsAreNotJudgedOnModifiers) {
  // A modifier set newer than PTX 9.0 may be valid there: only the counting rules apply.
  auto text = kernel(".reg .b32 %v<4>;\ntcgen05.mma.cta_group::1.kind::f16.collector::b0::fill [%r1], %rd1, %rd2, %r2, %p1;",
                     "sm_100a", "9.4");
  auto checked = check_source(text, ValidateOptions{false});
  std::vector<std::string> ids;
  for (auto& d : checked.diags.list()) ids.push_back(d.check_id);
  // The version itself is the one error: the collector rule (right at 9.0) is not applied.
  EXPECT_THAT(ids, ElementsAre("bad-version"));
  // At 9.0 the same line is judged.
  auto at90 = check_source(kernel(".reg .b32 %v<4>;\ntcgen05.mma.cta_group::1.kind::f16.collector::b0::fill [%r1], "
                                  "%rd1, %rd2, %r2, %p1;", "sm_100a", "9.0"),
                           ValidateOptions{false});
  std::vector<std::string> ids90;
  for (auto& d : at90.diags.list()) ids90.push_back(d.check_id);
  EXPECT_THAT(ids90, ElementsAre("illegal-modifier"));
}

}  // namespace
}  // namespace ptxforge::ptx
