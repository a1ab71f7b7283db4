// The modifier and immediate rules' wording (rules_modifiers_test.cpp proves their verdicts
// against ptxas), and the valid PTX that earlier versions of the checks rejected or warned on.
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

// Errors only: these kernels read registers they never wrote, which the warnings would add.
std::vector<std::string> ids(const std::string& text) { return testing::ids(text, false); }
CheckResult check(const std::string& text) { return check_source(text, ValidateOptions{false}); }

TEST(ModifierRules, FloatToIntNeedsIntegerRounding) {
  auto r = check(kernel("cvt.s32.f32 %r1, %f1;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "missing-modifier");
  EXPECT_EQ(d.loc.line, 13u);
  EXPECT_THAT(d.hint, HasSubstr("cvt.rzi.s32.f32"));
  EXPECT_THAT(ids(kernel("cvt.rn.s32.f32 %r1, %f1;")), ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids(kernel("cvt.rzi.s32.f32 %r1, %f1;")), IsEmpty());
}

TEST(ModifierRules, ConversionsToFp8AndNarrowerNeedSatfinite) {
  EXPECT_THAT(ids(kernel("cvt.rn.e4m3x2.f32 %h1, %f1, %f2;", "sm_90", "7.8")), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids(kernel("cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;", "sm_90", "7.8")), IsEmpty());
  EXPECT_THAT(ids(kernel("cvt.rn.relu.satfinite.e5m2x2.f32 %h1, %f1, %f2;", "sm_90", "7.8")), IsEmpty());
  EXPECT_THAT(ids(kernel("cvt.rn.e5m2x2.f16x2 %h1, %r1;", "sm_90", "7.8")), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids(kernel("cvt.rn.f16x2.e4m3x2 %r1, %h1;", "sm_90", "7.8")), IsEmpty()) << "from fp8: nothing to saturate";
  EXPECT_THAT(ids(kernel("cvt.rz.ue8m0x2.f32 %h1, %f1, %f2;", "sm_100a", "8.6")), IsEmpty()) << ".satfinite is optional there";
  auto r = check(kernel("cvt.rn.e4m3x2.f32 %h1, %f1, %f2;", "sm_90", "7.8"));
  ASSERT_FALSE(r.diags.list().empty());
  EXPECT_EQ(r.diags.list()[0].hint, "write cvt.rn.satfinite.e4m3x2.f32");
}

TEST(ModifierRules, ClusterBarrierArriveReleasesAndWaitAcquires) {
  for (const char* ok : {"barrier.cluster.arrive;", "barrier.cluster.arrive.release;", "barrier.cluster.arrive.relaxed.aligned;",
                         "barrier.cluster.wait;", "barrier.cluster.wait.acquire;", "barrier.cluster.wait.acquire.aligned;"})
    EXPECT_THAT(ids(kernel(ok, "sm_90", "8.0")), IsEmpty()) << ok;
  for (const char* bad : {"barrier.cluster.arrive.acquire;", "barrier.cluster.wait.release;", "barrier.cluster.wait.relaxed;"})
    EXPECT_THAT(ids(kernel(bad, "sm_90", "8.0")), ElementsAre("illegal-modifier")) << bad;
}

TEST(ModifierRules, PackedConversionResultsNeedARegisterOfTheirWidth) {
  // %h: .b16, %r: .b32, %rd: .b64 (each verdict as ptxas 13.0 gives it).
  EXPECT_THAT(ids(kernel("cvt.rn.f16x2.f32 %h1, %f1, %f2;", "sm_90", "8.0")), ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel("cvt.rn.bf16x2.f32 %h1, %f1, %f2;", "sm_90", "8.0")), ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel("cvt.rn.f16x2.f32 %r1, %f1, %f2;", "sm_90", "8.0")), IsEmpty());
  EXPECT_THAT(ids(kernel("cvt.rn.f16x2.f32 %rd1, %f1, %f2;", "sm_90", "8.0")), IsEmpty()) << "wider is allowed";
  EXPECT_THAT(ids(kernel("cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;", "sm_90", "8.0")), IsEmpty());
  EXPECT_THAT(ids(kernel("cvt.rn.satfinite.e4m3x2.f32 %r1, %f1, %f2;", "sm_90", "8.0")), ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel("cvt.rn.satfinite.e5m2x2.f32 %rd1, %f1, %f2;", "sm_90", "8.0")), ElementsAre("operand-type"));
}

TEST(ModifierRules, ElectWritesAPair) {
  EXPECT_THAT(ids(kernel("elect.sync %r1|%p1, 0xffffffff;", "sm_90", "8.0")), IsEmpty());
  EXPECT_THAT(ids(kernel("elect.sync _|%p1, 0xffffffff;", "sm_90", "8.0")), IsEmpty());
  EXPECT_THAT(ids(kernel("elect.sync %r1, 0xffffffff;", "sm_90", "8.0")), ElementsAre("operand-kind"));
  EXPECT_THAT(ids(kernel("elect.sync %p1, 0xffffffff;", "sm_90", "8.0")), ElementsAre("operand-kind"));
}

TEST(ModifierRules, NarrowingAndWideningFloatConversions) {
  EXPECT_THAT(ids(kernel("cvt.f32.f64 %f1, %fd1;")), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids(kernel("cvt.rn.f64.f32 %fd1, %f1;")), ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids(kernel("cvt.rn.f32.f64 %f1, %fd1;\ncvt.f64.f32 %fd1, %f1;\ncvt.rn.f32.s32 %f1, %r1;")), IsEmpty());
}

TEST(ModifierRules, DivisionAndFusedOpsNeedRounding) {
  auto r = check(kernel("div.f32 %f1, %f2, %f3;"));
  EXPECT_EQ(only(r).check_id, "missing-modifier");
  EXPECT_THAT(only(r).hint, HasSubstr("div.rn.f32"));
  EXPECT_THAT(only(r).hint, HasSubstr("div.approx.f32"));
  EXPECT_THAT(ids(kernel("fma.f32 %f1, %f2, %f3, %f4;")), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids(kernel("div.full.f32 %f1, %f2, %f3;\nsqrt.approx.ftz.f32 %f1, %f2;\nfma.rn.f32 %f1, %f2, %f3, %f4;\n"
                         "rcp.approx.ftz.f64 %fd1, %fd2;")),
              IsEmpty());
}

TEST(ModifierRules, ExpIsAnApproximationOfTwoToTheX) {
  auto r = check(kernel("ex2.f32 %f1, %f2;"));
  EXPECT_EQ(only(r).check_id, "missing-modifier");
  // The hint must not suggest ex2 computes e^x.
  EXPECT_THAT(only(r).hint, HasSubstr("log2(e)"));
}

TEST(ModifierRules, IntegerArithmetic) {
  EXPECT_THAT(ids(kernel("mad.rn.s32 %r1, %r2, %r3, %r4;")), ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids(kernel("mul.lo.f32 %f1, %f2, %f3;")), ElementsAre("illegal-modifier"));
  auto r = check(kernel("mul.s32 %r1, %r2, %r3;"));
  EXPECT_EQ(only(r).check_id, "missing-modifier");
  EXPECT_THAT(only(r).hint, HasSubstr("mul.lo.s32"));
}

TEST(ModifierRules, ShuffleVoteCompareAndWarpMatrixForms) {
  EXPECT_THAT(ids(kernel("shfl.sync.b32 %r1, %r2, 1, 31, -1;")), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids(kernel("setp.s32 %p1, %r1, %r2;")), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids(kernel("setp.lt.b32 %p1, %r1, %r2;")), ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids(kernel("shfl.down.b32 %r1, %r2, 1, 31;")), ElementsAre("missing-modifier"));
  EXPECT_THAT(ids(kernel("mma.sync.m16n8k8.row.col.f16.f16.f16.f16 {%r1,%r2}, {%r3,%r4}, {%r5}, {%r6,%r7};")),
              ElementsAre("missing-modifier"));
  // Before PTX 6.4 the non-.sync forms were the only ones.
  EXPECT_THAT(ids(kernel("shfl.down.b32 %r1, %r2, 1, 31;", "sm_75", "6.3")), IsEmpty());
}

TEST(ModifierRules, AtomicOperationAndType) {
  auto r = check(kernel("atom.global.add.s64 %rd1, [%rd2], %rd3;"));
  EXPECT_EQ(only(r).check_id, "illegal-modifier");
  EXPECT_THAT(only(r).hint, HasSubstr(".u64"));
  EXPECT_THAT(ids(kernel("atom.global.and.u32 %r1, [%rd2], %r3;")), ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids(kernel("atom.global.add.f16 %h1, [%rd2], %h2;")), ElementsAre("missing-modifier"));
}

TEST(ImmediateValues, BarriersCopySizesRegisterCounts) {
  auto r = check(kernel("bar.sync 16;"));
  EXPECT_EQ(only(r).check_id, "immediate-value");
  EXPECT_EQ(only(r).loc.col, 10u);
  EXPECT_THAT(ids(kernel("bar.sync 0, 33;")), ElementsAre("immediate-value"));
  EXPECT_THAT(ids(kernel("cp.async.cg.shared.global [%rd1], [%rd2], 32;")), ElementsAre("immediate-value"));
  EXPECT_THAT(ids(kernel("setmaxnreg.inc.sync.aligned.u32 100;")), ElementsAre("immediate-value"));
  EXPECT_THAT(ids(kernel("wgmma.wait_group.sync.aligned -1;")), ElementsAre("immediate-value"));
  EXPECT_THAT(ids(kernel("bar.sync 15, 64;\ncp.async.ca.shared.global [%rd1], [%rd2], 8;\n"
                         "setmaxnreg.dec.sync.aligned.u32 40;\ncp.async.wait_group 0;")),
              IsEmpty());
}

// Valid PTX (ptxas accepts each) that the front end once rejected or warned on.
TEST(NoFalseAlarms, SixteenBitCompareAndSwap) {
  EXPECT_THAT(ids(kernel("atom.global.cas.b16 %h1, [%rd1], %h2, %h3;")), IsEmpty());
}

TEST(NoFalseAlarms, LabelsAreScopedToTheirBlock) {
  std::string wait = "{\n$L_wait:\nld.global.acquire.gpu.u32 %r1, [%rd1];\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra $L_wait;\n}\n";
  EXPECT_THAT(testing::ids(kernel("ld.param.u64 %rd1, [p];\n" + wait + wait)), IsEmpty());
  // An inner block may shadow an outer label.
  EXPECT_THAT(testing::ids(kernel("L1:\n@%p1 bra L1;\n{\nL1:\n@%p1 bra L1;\n}")), IsEmpty());
  // Still refused: the same label twice in one block, and a branch into a block from outside.
  EXPECT_THAT(testing::ids(kernel("L1:\nL1:\nret;")), ElementsAre("duplicate-label"));
  auto r = testing::check(kernel("@%p1 bra L2;\n{\nL2:\nadd.u32 %r1, %r1, 1;\n}"));
  EXPECT_EQ(only(r).check_id, "undeclared-label");
  EXPECT_THAT(only(r).message, HasSubstr("does not enclose"));
}

TEST(NoFalseAlarms, VideoOperandSelectors) {
  auto r = testing::check(kernel("mov.u32 %r2, 1;\nmov.u32 %r3, 2;\nmov.u32 %r1, 3;\nvmad.u32.u32.u32 %r8, %r2.h0, %r3.h1, %r1;\n"
                        "vadd4.u32.u32.u32.add %r4, %r2.b3210, %r3.b7654, %r1;"));
  EXPECT_TRUE(r.diags.list().empty()) << r.diags.list()[0].message;
}

TEST(NoFalseAlarms, HeaderStyleGlobalAccessesThroughGenericPointers) {
  // __ldcs, __stwt, acquire loads and cache-hinted loads in CUDA's headers use the generic
  // pointer with .global directly.
  EXPECT_THAT(testing::ids(kernel("ld.param.u64 %rd1, [p];\nld.global.cs.u32 %r1, [%rd1];\nst.global.wt.u32 [%rd1], %r1;\n"
                         "ld.global.acquire.gpu.u32 %r2, [%rd1];\nld.global.L1::no_allocate.u32 %r3, [%rd1];\n"
                         "st.global.release.gpu.u32 [%rd1], %r3;\nst.global.L1::no_allocate.u32 [%rd1], %r2;")),
              IsEmpty());
  // The plain form still warns.
  EXPECT_THAT(testing::ids(kernel("ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [%rd1];\nst.global.u32 [%rd1], %r1;")),
              ElementsAre("missing-cvta"));
}

TEST(NoFalseAlarms, VectorMoveOfAVectorSpecialRegister) {
  EXPECT_THAT(testing::ids(kernel("mov.v4.u32 {%r1, %r2, %r3, %r4}, %tid;\nadd.u32 %r5, %r1, %r2;\n"
                                  "add.u32 %r6, %r3, %r4;\nadd.u32 %r7, %r5, %r6;"), false),
              IsEmpty());
}

TEST(NoFalseAlarms, MovmatrixWritesItsDestination) {
  EXPECT_THAT(testing::ids(kernel("mov.u32 %r2, 0;\nmovmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;\nmov.u32 %r3, %r1;")),
              IsEmpty());
}

TEST(NoFalseAlarms, SetmaxnregWithMaxntidAndMinnctapersm) {
  std::string body = "setmaxnreg.inc.sync.aligned.u32 232;";
  auto text = kernel(body);
  EXPECT_THAT(testing::ids(text), ElementsAre("setmaxnreg-no-cap"));
  // ptxas honours setmaxnreg when .maxntid and .minnctapersm fix the register count.
  size_t brace = text.find("\n{");
  text.insert(brace, "\n.maxntid 384, 1, 1\n.minnctapersm 1");
  EXPECT_THAT(testing::ids(text), IsEmpty());
}

}  // namespace
}  // namespace ptxforge::ptx
