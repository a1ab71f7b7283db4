// One test per check id: a source that must trigger it and, where it guards against false
// alarms, one that ptxas accepts and must not.
#include "ptx/validator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/ptx_kernel.h"

namespace ptxforge::ptx {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::check;
using testing::ids;
using testing::kernel;

TEST(Validator, CleanKernelHasNoFindings) {
  EXPECT_THAT(ids(kernel("ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n"
                         "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\n"
                         "add.f32 %f2, %f1, 0f3F800000;\nst.global.f32 [%rd4], %f2;")),
              IsEmpty());
}

// An opcode spelling checked once is reused only when it was clean: a bad spelling is reported
// at every use, and a clean one still has its operands checked each time.
TEST(Validator, RepeatedSpellingsAreCheckedAtEveryUse) {
  auto bad = check(kernel("mov.f32 %f2, 0f00000000;\nadd.f32.rnn %f1, %f2, %f2;\nadd.f32.rnn %f3, %f2, %f2;"));
  std::vector<uint32_t> lines;
  for (auto& d : bad.diags.list())
    if (d.check_id == "unknown-modifier") lines.push_back(d.loc.line);
  EXPECT_EQ(lines.size(), 2u) << "one finding per instruction";
  EXPECT_NE(lines.front(), lines.back());
  auto operands = check(kernel("mov.u32 %r1, 0;\nmov.u32 %r2, %r1;\nmov.u32 %r3, %r99;"));
  ASSERT_EQ(operands.diags.list().size(), 1u);
  EXPECT_EQ(operands.diags.list()[0].check_id, "undeclared-reg");
}

TEST(Validator, UndeclaredRegisterPointsAtIt) {
  auto r = check(kernel("mov.u32 %r1, 0;\nadd.s32 %r2, %r1, %r42;"));
  ASSERT_EQ(r.diags.list().size(), 1u);
  auto& d = r.diags.list()[0];
  EXPECT_EQ(d.check_id, "undeclared-reg");
  EXPECT_EQ(d.loc.line, 14u);
  EXPECT_EQ(d.loc.col, 19u);
  EXPECT_NE(d.hint.find("%r<43>"), std::string::npos);
}

TEST(Validator, RegisterNamedLikeASpecialRegisterHidesIt) {
  // ptxas accepts the declaration but rejects %ntid.x as a video selector on the register.
  EXPECT_THAT(ids(kernel(".reg .b32 %ntid;\nmov.u32 %r1, %ntid.x;")), ElementsAre("shadowed-special-reg"));
  EXPECT_THAT(ids(kernel(".reg .b32 %ntid;\nmov.u32 %ntid, 4;\nmov.u32 %r1, %tid.x;")), IsEmpty());
}

TEST(Validator, AddressesHoldOneNameAtMost) {
  EXPECT_THAT(ids(kernel("mov.u64 %rd1, 0;\nmov.u64 %rd2, 8;\nld.global.f32 %f1, [%rd1+%rd2];")), ElementsAre("address-form"));
  EXPECT_THAT(ids(kernel("ld.param.u64 %rd1, [p+8];\ncvta.to.global.u64 %rd1, %rd1;\nld.global.f32 %f1, [%rd1+-4];\n"
                         "ld.global.f32 %f1, [%rd1];")),
              IsEmpty());
}

TEST(Validator, RangeBoundIsExclusive) {
  EXPECT_THAT(ids(kernel("mov.u32 %r10, 1;")), ElementsAre("undeclared-reg"));
  EXPECT_THAT(ids(kernel("mov.u32 %r9, 1;")), IsEmpty());
}

TEST(Validator, X86RegisterGetsItsOwnMessage) {
  auto r = check(kernel("mov.u64 %rax, 1;"));
  ASSERT_EQ(r.diags.list().size(), 1u);
  EXPECT_EQ(r.diags.list()[0].check_id, "x86-register");
  EXPECT_NE(r.diags.list()[0].hint.find(".reg"), std::string::npos);
}

TEST(Validator, DuplicatesInOneScopeButNotInSiblingBlocks) {
  EXPECT_THAT(ids(kernel(".reg .b32 %x;\n.reg .b32 %x;\nmov.b32 %x, 1;")), Contains("duplicate-decl"));
  EXPECT_THAT(ids(kernel("{ .reg .b32 t; mov.b32 t, 1; }\n{ .reg .b32 t; mov.b32 t, 2; }")), IsEmpty());
  EXPECT_THAT(ids(kernel("L1:\nL1:\nbra L1;")), Contains("duplicate-label"));
}

TEST(Validator, UnknownOpcodeSuggestsTheClosest) {
  auto r = check(kernel("mvo.u32 %r1, 1;"));
  ASSERT_EQ(r.diags.list().size(), 1u);
  EXPECT_EQ(r.diags.list()[0].check_id, "unknown-opcode");
  EXPECT_EQ(r.diags.list()[0].hint, "did you mean 'mov'?");
  auto r2 = check(kernel("movl %r1, 1;"));
  EXPECT_NE(r2.diags.list()[0].hint.find("mov.u32"), std::string::npos);
}

TEST(Validator, UnknownModifierSuggestsTheClosest) {
  auto r = check(kernel("ld.globl.u32 %r1, [%rd1];"));
  ASSERT_FALSE(r.diags.list().empty());
  EXPECT_EQ(r.diags.list()[0].check_id, "unknown-modifier");
  EXPECT_EQ(r.diags.list()[0].hint, "did you mean '.global'?");
}

TEST(Validator, OperandCount) {
  EXPECT_THAT(ids(kernel("add.s32 %r1, %r2;"), false), ElementsAre("operand-count"));
  EXPECT_THAT(ids(kernel("mad.lo.s32 %r1, %r2, %r3, %r4;"), false), IsEmpty());
}

TEST(Validator, RelaxedTypeRulesMatchPtxas) {
  // Accepted by ptxas: bit-typed registers anywhere of their size; wider registers for ld/st/cvt.
  EXPECT_THAT(ids(kernel("mov.u32 %r1, 1;\nadd.f32 %f1, %r1, %r1;")), IsEmpty());
  EXPECT_THAT(ids(kernel("ld.global.u32 %rd1, [%rd2];")), Contains("uninitialized-reg"));
  EXPECT_THAT(ids(kernel("ld.global.u32 %rd1, [%rd2];"), false), IsEmpty());
  EXPECT_THAT(ids(kernel("mov.u32 %u1, 1;\nadd.s32 %u2, %u1, %u1;")), IsEmpty());
  // Rejected by ptxas ("Arguments mismatch").
  EXPECT_THAT(ids(kernel("mov.u32 %u1, 1;\nadd.f32 %f1, %u1, %u1;"), false), ElementsAre("operand-type", "operand-type"));
  EXPECT_THAT(ids(kernel("add.u32 %r1, %rd1, %r2;"), false), ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel("ld.global.u32 %h1, [%rd1];"), false), ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel("setp.eq.f32 %p1, %u1, %f2;"), false), ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel("shl.b32 %r1, %r2, %rd1;"), false), ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel("mul.wide.u32 %r3, %r1, %r2;"), false), ElementsAre("operand-type"));
  // mad.wide: the addend is as wide as the destination.
  EXPECT_THAT(ids(kernel("mad.wide.s32 %rd1, %r1, 4, %rd2;"), false), IsEmpty());
  EXPECT_THAT(ids(kernel("mad.wide.s32 %rd1, %r1, 4, %r2;"), false), ElementsAre("operand-type"));
}

TEST(Validator, ImmediateSorts) {
  EXPECT_THAT(ids(kernel("mov.f32 %f1, 0;")), ElementsAre("immediate-type"));
  EXPECT_THAT(ids(kernel("add.f32 %f1, %f2, 1;"), false), ElementsAre("immediate-type"));
  EXPECT_THAT(ids(kernel("add.s32 %r1, %r1, 1.5;"), false), ElementsAre("immediate-type"));
  EXPECT_THAT(ids(kernel("mov.b32 %r1, 1.0;")), ElementsAre("immediate-type"));
  EXPECT_THAT(ids(kernel("mov.b32 %r1, 0f3F800000;\nmov.f32 %f1, 1.5;")), IsEmpty());
  EXPECT_THAT(ids(kernel("mov.b16 %h2, 0;\nadd.u16 %h1, %h2, 70000;")), ElementsAre("immediate-range"));
}

TEST(Validator, VectorWidth) {
  EXPECT_THAT(ids(kernel("ld.global.v4.f32 {%f1, %f2}, [%rd1];"), false), ElementsAre("vector-width"));
  EXPECT_THAT(ids(kernel("ld.global.f32 {%f1, %f2}, [%rd1];"), false), ElementsAre("vector-width"));
  EXPECT_THAT(ids(kernel("ld.global.v2.f32 {%f1, %f2}, [%rd1];"), false), IsEmpty());
}

TEST(Validator, StateSpaceOfVariablesAndParameters) {
  std::string g = ".global .align 4 .f32 gvar[16];\n";
  EXPECT_THAT(ids(kernel("ld.shared.f32 %f1, [gvar];", "sm_90a", "8.0", g), false), ElementsAre("state-space"));
  EXPECT_THAT(ids(kernel("ld.global.f32 %f1, [gvar];", "sm_90a", "8.0", g), false), IsEmpty());
  auto r = check(kernel("ld.global.u64 %rd1, [p];"));
  ASSERT_FALSE(r.diags.list().empty());
  EXPECT_EQ(r.diags.list()[0].check_id, "param-space");
  EXPECT_NE(r.diags.list()[0].hint.find("ld.param"), std::string::npos);
}

TEST(Validator, BranchTargets) {
  auto r = check(kernel("bra DONE;\nDNOE:"));
  ASSERT_EQ(r.diags.list().size(), 1u);
  EXPECT_EQ(r.diags.list()[0].check_id, "undeclared-label");
  EXPECT_EQ(r.diags.list()[0].hint, "did you mean 'DNOE'?");
}

TEST(Validator, CallSignatures) {
  std::string fn = ".func (.param .b32 r) f(.param .b32 a)\n{\nret;\n}\n";
  EXPECT_THAT(ids(kernel("{ .param .b32 a; .param .b32 r; call.uni (r), f, (a, a); }", "sm_90a", "8.0", fn)),
              Contains("call-signature"));
  EXPECT_THAT(ids(kernel("{ .param .b32 a; .param .b32 r; st.param.b32 [a], 1; call.uni (r), f, (a); }", "sm_90a",
                         "8.0", fn)),
              IsEmpty());
  EXPECT_THAT(ids(kernel("call.uni g;")), Contains("undeclared-function"));
}

TEST(Validator, IndirectCallsAgainstTheirPrototype) {
  std::string call = "mov.u64 %rd1, 0;\n{\n.param .b32 a;\n.param .b32 r;\nst.param.b32 [a], 1;\n"
                     "proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n";
  EXPECT_THAT(ids(kernel(call + "call (r), %rd1, (a), proto;\n}")), IsEmpty());
  EXPECT_THAT(ids(kernel(call + "call (r), %rd1, (a, a), proto;\n}")), ElementsAre("call-signature"));
  EXPECT_THAT(ids(kernel(call + "call (r), %rd1, (a);\n}")), ElementsAre("call-signature"));
  EXPECT_THAT(ids(kernel(call + "call (r), %rd1, (a), protx;\n}")), ElementsAre("undeclared-label"));
}

TEST(Validator, MatrixFragmentsHaveTheirShapesRegisterCount) {
  std::string regs = ".reg .b32 %m<20>;\n.reg .f32 %a<20>;\n.reg .u32 %q<8>;\n";
  std::string ok = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%a1, %a2, %a3, %a4}, {%m1, %m2, %m3, %m4}, "
                   "{%m5, %m6}, {%a5, %a6, %a7, %a8};";
  EXPECT_THAT(ids(kernel(regs + ok), false), IsEmpty());
  auto r = check(kernel(regs + "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%a1, %a2, %a3, %a4}, "
                               "{%m1, %m2, %m3}, {%m5, %m6}, {%a5, %a6, %a7, %a8};"));
  ASSERT_EQ(r.diags.error_count(), 1u);
  EXPECT_EQ(r.diags.list()[0].check_id, "vector-width");
  EXPECT_NE(r.diags.list()[0].message.find("takes 4 registers for A"), std::string::npos);
  // .u32 registers for an .f16 fragment: ptxas says "Arguments mismatch".
  EXPECT_THAT(ids(kernel(regs + "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%a1, %a2, %a3, %a4}, "
                                "{%q1, %q2, %q3, %q4}, {%m5, %m6}, {%a5, %a6, %a7, %a8};"), false),
              ElementsAre("operand-type"));
  EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%a1, %a2, %a3, %a4}, %rd1, "
                                "%rd2, 1, 1, 1, 0, 0;"), false),
              ElementsAre("vector-width"));
  EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%a1, %a2, %a3, %a4, %a5, %a6, "
                                "%a7, %a8}, %rd1, %rd2, 1, 1, 1, 0, 0;"), false),
              IsEmpty());
  // tf32 and fp8 have no transpose operands (ptxas: "Arguments mismatch"); 6 operands pass.
  const std::string d8 = "{%a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8}";
  for (const char* types : {".f32.e4m3.e4m3", ".f32.e5m2.e4m3"}) {
    EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k32" + types + " " + d8 + ", %rd1, %rd2, 1, 1, 1, 0, 0;"),
                    false),
                ElementsAre("operand-count")) << types;
    EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k32" + types + " " + d8 + ", %rd1, %rd2, 1, 1, 1;"), false),
                IsEmpty()) << types;
  }
  EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 " + d8 + ", %rd1, %rd2, 1, 1, 1, 0, 0;"),
                  false),
              ElementsAre("operand-count"));
  EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 " + d8 + ", %rd1, %rd2, 1, 1, 1, 0, 1;"),
                  false),
              IsEmpty());
  // bf16 and tf32 accumulate in f32 only; f16 and fp8 may accumulate in f16.
  const std::string d4 = "{%m11, %m12, %m13, %m14}";
  EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k16.f16.bf16.bf16 " + d4 + ", %rd1, %rd2, 1, 1, 1, 0, 0;"),
                  false),
              ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k8.f16.tf32.tf32 " + d4 + ", %rd1, %rd2, 1, 1, 1;"), false),
              ElementsAre("illegal-modifier"));
  EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k16.f16.f16.f16 " + d4 + ", %rd1, %rd2, 1, 1, 1, 0, 0;"),
                  false),
              IsEmpty());
  EXPECT_THAT(ids(kernel(regs + "wgmma.mma_async.sync.aligned.m64n16k32.f16.e4m3.e4m3 " + d4 + ", %rd1, %rd2, 1, 1, 1;"), false),
              IsEmpty());
}

TEST(Validator, LdmatrixAndStmatrixRegisterCounts) {
  std::string s = ".shared .align 16 .b8 tile[1024];\n";
  auto body = [&](const std::string& b) { return kernel(b, "sm_90a", "8.0", s); };
  EXPECT_THAT(ids(body("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [tile];"), false), IsEmpty());
  EXPECT_THAT(ids(body("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2}, [tile];"), false),
              ElementsAre("vector-width"));
  EXPECT_THAT(ids(body("ldmatrix.sync.aligned.m8n8.x1.shared.b16 %r1, [tile];"), false), ElementsAre("vector-width"));
  EXPECT_THAT(ids(body("stmatrix.sync.aligned.m8n8.x2.shared.b16 [tile], {%rd1, %rd2};"), false),
              ElementsAre("operand-type"));
}

TEST(Validator, NeedsVersionAndTargetSayWhatWouldWork) {
  auto r = check(kernel("wgmma.fence.sync.aligned;", "sm_90", "8.0"));
  ASSERT_EQ(r.diags.list().size(), 1u);
  EXPECT_EQ(r.diags.list()[0].check_id, "needs-target");
  EXPECT_NE(r.diags.list()[0].hint.find("sm_90a"), std::string::npos);
  EXPECT_THAT(ids(kernel("add.u16x2 %r1, %r2, %r3;", "sm_90", "7.8"), false), ElementsAre("needs-version"));
  EXPECT_THAT(ids(kernel("add.bf16 %h1, %h2, %h3;", "sm_80", "8.0"), false), ElementsAre("needs-target"));
}

// fp8 cvt: sm_90 since PTX 7.8, sm_89 only since PTX 8.1 (as ptxas 13.0 has it): the version
// a feature needs can depend on the target.
TEST(Validator, AVersionThatDependsOnTheTarget) {
  const std::string cvt = "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;";
  EXPECT_THAT(ids(kernel(cvt, "sm_90", "7.8"), false), IsEmpty());
  EXPECT_THAT(ids(kernel(cvt, "sm_89", "8.1"), false), IsEmpty()) << "no false alarm on sm_89 with PTX 8.1";
  EXPECT_THAT(ids(kernel(cvt, "sm_89", "8.0"), false), ElementsAre("needs-version"));
  auto r = check(kernel(cvt, "sm_89", "8.0"));
  ASSERT_FALSE(r.diags.list().empty());
  EXPECT_NE(r.diags.list()[0].message.find("requires PTX ISA .version 8.1 or later on .target sm_89 (module has 8.0)"),
            std::string::npos) << r.diags.list()[0].message;
  EXPECT_THAT(ids(kernel(cvt, "sm_86", "8.1"), false), ElementsAre("needs-target"));
}

TEST(Validator, FamilyTargetsAndAlternatives) {
  // Confirmed with ptxas 13.0: e2m1x2 conversion is on the sm_100, sm_110 and sm_120 families, not sm_100.
  std::string cvt = ".reg .b8 %c<2>;\nmov.f32 %f1, 0f00000000;\nmov.f32 %f2, 0f00000000;\n"
                    "cvt.rn.satfinite.e2m1x2.f32 %c1, %f1, %f2;";
  EXPECT_THAT(ids(kernel(cvt, "sm_100f", "8.8")), IsEmpty());
  EXPECT_THAT(ids(kernel(cvt, "sm_103a", "8.8")), IsEmpty());
  EXPECT_THAT(ids(kernel(cvt, "sm_120f", "8.8")), IsEmpty());
  EXPECT_THAT(ids(kernel(cvt, "sm_100", "8.8")), ElementsAre("needs-target"));
  EXPECT_THAT(ids(kernel(cvt, "sm_110f", "9.0")), IsEmpty());
  EXPECT_THAT(ids(kernel(cvt, "sm_90a", "9.0")), ElementsAre("needs-target"));
  auto r = check(kernel(cvt, "sm_100", "8.8"));
  EXPECT_NE(r.diags.list()[0].hint.find("sm_100f or sm_110f or sm_120f"), std::string::npos);
}

TEST(Validator, ThreeInputMinMax) {
  EXPECT_THAT(ids(kernel("max.f32 %f1, %f2, %f3, %f4;", "sm_100", "8.8"), false), IsEmpty());
  EXPECT_THAT(ids(kernel("max.f32 %f1, %f2, %f3, %f4;", "sm_90a", "8.8"), false), ElementsAre("needs-target"));
  EXPECT_THAT(ids(kernel("max.f32 %f1, %f2, %f3, %f4;", "sm_100", "8.6"), false), ElementsAre("needs-version"));
  EXPECT_THAT(ids(kernel("max.s32 %r1, %r2, %r3, %r4;", "sm_100", "8.8"), false), ElementsAre("operand-count"));
}

TEST(Validator, AMissingVersionIsReportedWhereThePtxasPointsNotOnAComment) {
  // ptxas says "Missing .version directive" at the first line that is not a comment: there
  // the directive belongs (and there a model's leftover prose sits).
  auto r = check("// produced by a model\n/* two\n lines */\n\n  .target sm_90a\n.entry k() { ret; }");
  ASSERT_FALSE(r.diags.list().empty());
  EXPECT_EQ(r.diags.list()[0].check_id, "missing-version");
  EXPECT_EQ(r.diags.list()[0].loc.line, 5u);
  EXPECT_EQ(r.diags.list()[0].loc.col, 3u);
  auto prose = check("// kernel\nHere it is: .version 8.0\n.target sm_90a\n.address_size 64\n.entry k() { ret; }");
  bool at_prose_line = false;
  for (auto& d : prose.diags.list()) at_prose_line |= d.check_id == "missing-version" && d.loc.line == 2;
  EXPECT_TRUE(at_prose_line);
}

TEST(Validator, HeaderProblems) {
  EXPECT_THAT(ids(".entry k() { ret; }"), ElementsAre("missing-version", "missing-target"));
  EXPECT_THAT(ids(".version 7.8\n.target sm_90a\n.entry k() { ret; }"), ElementsAre("version-target"));
  EXPECT_THAT(ids(".version 9.9\n.target sm_90\n.entry k() { ret; }"), ElementsAre("bad-version"));
  auto r = check(".version 8.0\n.target sm_9a\n.entry k() { ret; }");
  EXPECT_EQ(r.diags.list()[0].check_id, "bad-target");
}

// ptxas rejects every module without .version and .target ("Missing .version directive"),
// even one of bare directives such as a stray .section, or an empty file.
TEST(Validator, HeaderRequiredWithoutCode) {
  EXPECT_THAT(ids(".section .debug_str\n{\n.b8 1\n}\n"), ElementsAre("missing-version", "missing-target"));
  EXPECT_THAT(ids(""), ElementsAre("empty-input"));  // one clear error, not two header errors
  EXPECT_THAT(ids("// a comment\n.version 8.0\n"), ElementsAre("missing-target"));
}

TEST(Validator, MissingCvtaWarning) {
  std::string body = "ld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\n"
                     "add.s64 %rd3, %rd1, %rd2;\nld.global.f32 %f1, [%rd3];";
  EXPECT_THAT(ids(kernel(body)), ElementsAre("missing-cvta"));
  std::string fixed = "ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd1, %rd1;\nmov.u32 %r1, %tid.x;\n"
                      "mul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nld.global.f32 %f1, [%rd3];";
  EXPECT_THAT(ids(kernel(fixed)), IsEmpty());
  // A generic load through the parameter pointer is correct PTX.
  EXPECT_THAT(ids(kernel("ld.param.u64 %rd1, [p];\nld.f32 %f1, [%rd1];")), IsEmpty());
}

TEST(Validator, UninitializedRegisterWarning) {
  EXPECT_THAT(ids(kernel("add.s32 %r1, %r2, 1;\nmov.u32 %r2, 0;")), ElementsAre("uninitialized-reg"));
  EXPECT_THAT(ids(kernel("add.s32 %r1, %r3, 1;")), ElementsAre("uninitialized-reg"));
  // In a loop a later write may reach an earlier read: only "never written" is reported.
  EXPECT_THAT(ids(kernel("mov.u32 %r1, 0;\nL:\nadd.s32 %r1, %r1, 1;\nsetp.lt.u32 %p1, %r1, 9;\n@%p1 bra L;")),
              IsEmpty());
}

TEST(Validator, SetmaxnregWithoutCapWarning) {
  EXPECT_THAT(ids(kernel("setmaxnreg.inc.sync.aligned.u32 64;")), ElementsAre("setmaxnreg-no-cap"));
  std::string capped = ".version 8.0\n.target sm_90a\n.entry k()\n.maxnreg 128\n{\nsetmaxnreg.inc.sync.aligned.u32 64;\nret;\n}\n";
  EXPECT_THAT(ids(capped), IsEmpty());
}

TEST(Validator, DivergentBarrierWarning) {
  EXPECT_THAT(ids(kernel("mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bar.sync 0;")),
              ElementsAre("divergent-barrier"));
  EXPECT_THAT(ids(kernel("mov.u32 %r1, %ctaid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bar.sync 0;")), IsEmpty());
}

TEST(Validator, WarningsCanBeTurnedOff) {
  EXPECT_THAT(ids(kernel("setmaxnreg.inc.sync.aligned.u32 64;"), false), IsEmpty());
}

TEST(Validator, FenceAndProseOnlyReportTheThemselves) {
  std::string text = "```ptx\n" + kernel("mov.u32 %r1, 0;") + "```\nThis kernel adds one to every element.\n";
  EXPECT_THAT(ids(text), ElementsAre("markdown-fence", "markdown-fence", "prose-in-ptx"));
}

// No modifier of the spelling is a type (the fuzzer's "mov.b3.e3m2x22"): the instruction has
// no type at all, and the checks that ask for its kind must see "none", not read a null name.
TEST(Validator, InstructionWithoutAnyTypeIsReportedNotRead) {
  auto found = ids(kernel("mov.b3.e3m2x22 %r1, %tid.x;\ncvt.b3 %r2, %tid.x;"));
  EXPECT_FALSE(found.empty());
  for (auto& id : found) EXPECT_NE(id, "special-reg-dest");
}

}  // namespace
}  // namespace ptxforge::ptx
