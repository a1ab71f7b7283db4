// The asynchronous-instruction rules' wording and positions (rules_async_test.cpp proves their
// verdicts against ptxas): each defect the field writes gets one error at its line, with a
// hint that states the correct form, and the valid forms stay clean.
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

std::vector<std::string> ids(const std::string& text) { return testing::ids(text, false); }
CheckResult check(const std::string& text) { return check_source(text, ValidateOptions{false}); }

const std::string kAcc = ".reg .f32 %a<5>;\n";

TEST(AsyncOps, WgmmaDefects) {
  const std::string w = "wgmma.mma_async.sync.aligned.";
  EXPECT_THAT(ids(kernel(kAcc + w + "m64n8k16.f32.bf16.bf16 {%a1, %a2, %a3, %a4}, %rd1, %rd2, 1, 1, 1, 0, 0;")), IsEmpty());
  auto r = check(kernel(kAcc + w + "m64n8k32.f32.bf16.bf16 {%a1, %a2, %a3, %a4}, %rd1, %rd2, 1, 1, 1, 0, 0;"));
  EXPECT_EQ(only(r).check_id, "illegal-modifier");
  EXPECT_THAT(only(r).hint, HasSubstr("k16"));
  EXPECT_THAT(ids(kernel(kAcc + w + "m64n8k16.f32.bf16.f16 {%a1, %a2, %a3, %a4}, %rd1, %rd2, 1, 1, 1, 0, 0;")),
              ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids(kernel(kAcc + w + "m64n8k16.f32.f16.f16 {%a1, %a2, %a3, %a4}, %rd1, %rd2, 1, 2, 1, 0, 0;")),
              ElementsAre("immediate-value"));
  EXPECT_THAT(ids(kernel(kAcc + w + "m64n8k16.f32.f16.f16 {%a1, %a2, %a3, %a4}, %r1, %rd2, 1, 1, 1, 0, 0;")),
              ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel(kAcc + "wgmma.mma_async.m64n8k16.f32.f16.f16 {%a1, %a2, %a3, %a4}, %rd1, %rd2, 1, 1, 1, 0, 0;")),
              ElementsAre("missing-modifier"));
  // ptxas takes .sync without .aligned.
  EXPECT_THAT(ids(kernel(kAcc + "wgmma.mma_async.sync.m64n8k16.f32.f16.f16 {%a1, %a2, %a3, %a4}, %rd1, %rd2, 1, 1, 1, 0, 0;")),
              IsEmpty());
  EXPECT_THAT(ids(kernel(kAcc + w + "m64n8k32.f32.e4m3.e5m2 {%a1, %a2, %a3, %a4}, %rd1, %rd2, %p1, -1, 1;")), IsEmpty());
}

TEST(AsyncOps, TensorCopyDefects) {
  const std::string load = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
  EXPECT_THAT(ids(kernel(load + " [%rd1], [%rd2, {%r1, %r2}], [%rd3];")), IsEmpty());
  auto r = check(kernel(load + " [%rd1], [%rd2, {%r1, %r2, %r3}], [%rd3];"));
  EXPECT_EQ(only(r).check_id, "vector-width");
  EXPECT_EQ(only(r).loc.line, 13u);
  EXPECT_THAT(ids(kernel("cp.async.bulk.tensor.2d.shared::cluster.global.tile [%rd1], [%rd2, {%r1, %r2}], [%rd3];")),
              ElementsAre("missing-modifier"));
  EXPECT_THAT(ids(kernel(load + ".multicast::cluster [%rd1], [%rd2, {%r1, %r2}], [%rd3];")), ElementsAre("operand-count"));
  EXPECT_THAT(ids(kernel(load + ".multicast::cluster [%rd1], [%rd2, {%r1, %r2}], [%rd3], %h1;")), IsEmpty());
  auto s = check(kernel("cp.async.bulk.tensor.2d.global.shared::cluster.tile.bulk_group [%rd1, {%r1, %r2}], [%rd2];"));
  EXPECT_EQ(only(s).check_id, "state-space");
  EXPECT_THAT(only(s).hint, HasSubstr(".shared::cta"));
}

TEST(AsyncOps, ControlDefects) {
  EXPECT_THAT(ids(kernel("setmaxnreg.inc.u32 64;")), ElementsAre("missing-modifier", "missing-modifier"));
  EXPECT_THAT(ids(kernel("setmaxnreg.dec.sync.aligned.s32 40;")), IsEmpty());
  auto e = check(kernel("elect.sync %p1|%r1, -1;"));
  EXPECT_EQ(only(e).check_id, "operand-kind");
  ASSERT_TRUE(only(e).fixit.has_value());
  EXPECT_EQ(only(e).fixit->replacement, "%r1|%p1");
  EXPECT_THAT(ids(kernel("elect.sync _|%p1, -1;")), IsEmpty());
  EXPECT_THAT(ids(kernel("mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%rd2];")), ElementsAre("operand-count"));
  EXPECT_THAT(ids(kernel("mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%rd2], 16;")), IsEmpty());
  EXPECT_THAT(ids(kernel("griddepcontrol;")), ElementsAre("missing-modifier"));
}

TEST(AsyncOps, NarrowFloatRounding) {
  auto r = check(kernel("cvt.rz.satfinite.e4m3x2.f32 %h1, %f1, %f2;"));
  EXPECT_EQ(only(r).check_id, "illegal-modifier");
  EXPECT_THAT(only(r).hint, HasSubstr("cvt.rn.satfinite.e4m3x2.f32"));
  EXPECT_THAT(ids(kernel("cvt.rn.satfinite.relu.e5m2x2.f32 %h1, %f1, %f2;")), IsEmpty());
  EXPECT_THAT(ids(kernel("cvt.rn.relu.f16x2.e4m3x2 %r1, %h1;")), IsEmpty());
  EXPECT_THAT(ids(kernel("cvt.f16x2.e4m3x2 %r1, %h1;")), ElementsAre("missing-modifier"));
}

// ptxas 13 takes the four sources of an x4 conversion as one vector without .v4 (any 32-bit
// registers), and refuses three elements or a vector for an x2 conversion.
TEST(AsyncOps, FourPackedNarrowFloatsTakeAVectorOfFour) {
  EXPECT_THAT(ids(kernel("cvt.rs.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f4}, %r2;", "sm_100a", "8.7")), IsEmpty());
  EXPECT_THAT(ids(kernel("cvt.rs.satfinite.e2m3x4.f32 %r1, {%f1, %f2, %f3, %f4}, %r2;", "sm_100a", "8.7")), IsEmpty());
  EXPECT_THAT(ids(kernel("cvt.rs.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3}, %r2;", "sm_100a", "8.7")), ElementsAre("vector-width"));
  EXPECT_THAT(ids(kernel("cvt.rn.satfinite.e4m3x2.f32 %h1, {%f1, %f2};", "sm_100a", "8.7")), ElementsAre("vector-width"));
}

}  // namespace
}  // namespace ptxforge::ptx
