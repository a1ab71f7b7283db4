// The wording and placement of the structural checks (check_structure.cpp,
// check_module_rules.cpp, register ranges in check_declarations.cpp); rules_structure_test.cpp
// holds them against ptxas.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/ptx_kernel.h"

namespace ptxforge::ptx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ids;
using testing::kernel;
using testing::only;

// Errors only: the kernels here read registers they never write, which the warnings would note.
CheckResult check(const std::string& text) { return check_source(text, ValidateOptions{false}); }

std::string module(const std::string& rest) { return ".version 8.0\n.target sm_90a\n.address_size 64\n" + rest; }

TEST(StructureChecks, SpecialRegisterIsNeverADestination) {
  auto r = check(kernel("mov.u32 %tid.x, %r1;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "special-reg-dest");
  EXPECT_EQ(d.message, "'%tid.x' is a read-only special register and cannot be a destination");
  EXPECT_EQ(d.loc.line, 13u);
  EXPECT_EQ(d.loc.col, 9u);
  EXPECT_THAT(d.hint, HasSubstr("mov.u32 %r1, %tid.x;"));
}

TEST(StructureChecks, OnlyMovAndIntegerCvtReadSpecialRegisters) {
  auto r = check(kernel("add.u32 %r1, %tid.x, 1;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "special-reg-operand");
  EXPECT_EQ(d.loc.col, 14u);
  EXPECT_THAT(d.message, HasSubstr("cannot be an operand of 'add.u32'"));
  EXPECT_THAT(d.hint, HasSubstr("mov.u32 %r, %tid.x;"));
  EXPECT_THAT(ids(kernel("cvt.rn.f32.u32 %f1, %laneid;"), false), ElementsAre("special-reg-operand"));
  EXPECT_THAT(ids(kernel("mov.u32 %r1, %tid.x;\ncvt.u64.u32 %rd1, %ctaid.x;\nadd.u32 %r2, %r1, WARP_SZ;"), false),
              IsEmpty());
  // Vector elements of st are fine to ptxas.
  EXPECT_THAT(ids(kernel("mov.u64 %rd1, 0;\nst.global.v2.u32 [%rd1], {%tid.x, %tid.y};"), false), IsEmpty());
}

TEST(StructureChecks, BraTakesALabel) {
  auto r = check(kernel("mov.u32 %r1, 0;\nbra %r1;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "branch-target");
  EXPECT_EQ(d.message, "'bra' needs a label, not the register '%r1'");
  EXPECT_THAT(d.hint, HasSubstr("brx.idx"));
  EXPECT_THAT(ids(kernel("L1:\nt: .branchtargets L1;\nbrx.idx %r1, L1;"), false), ElementsAre("branch-target"));
  EXPECT_THAT(ids(kernel("L1:\nt: .branchtargets L1;\nbrx.idx %r1, t;"), false), IsEmpty());
}

TEST(StructureChecks, RegisterRangeDeclaredTwice) {
  auto r = check(kernel(".reg .b32 %r<5>;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "duplicate-decl");
  EXPECT_EQ(d.message, "'%r<5>' is already declared in this scope");
  EXPECT_THAT(d.hint, HasSubstr("once per scope"));
  EXPECT_THAT(ids(kernel(".reg .b32 %q3;\n.reg .b32 %q<4>;"), false), ElementsAre("duplicate-decl"));
  EXPECT_THAT(ids(kernel(".reg .b32 %q<4>;\n.reg .b32 %q03;"), false), ElementsAre("duplicate-decl"));
  // ptxas splits %q12 into %q and 12: it is not a member of %q1<5>.
  EXPECT_THAT(ids(kernel(".reg .b32 %q1<5>;\n.reg .b32 %q12;\n.reg .b32 %q<4>;"), false), IsEmpty());
  EXPECT_THAT(ids(kernel("{\n.reg .b32 %r<5>;\n}"), false), IsEmpty());
}

TEST(StructureChecks, BodyDeclarationClashesWithParameter) {
  auto r = check(kernel(".reg .b64 p;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "duplicate-decl");
  EXPECT_EQ(d.message, "'p' is already declared in this scope");
  EXPECT_THAT(ids(kernel("{\n.reg .b64 p;\n}"), false), IsEmpty());
}

TEST(StructureChecks, PerformanceDirectivesBelongToKernels) {
  auto r = check(module(".func f()\n.maxntid 128\n{\nret;\n}\n"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "function-directive");
  EXPECT_EQ(d.message, "'.maxntid' applies to kernels (.entry) only, not to the .func 'f'");
  EXPECT_EQ(d.loc.line, 5u);
  EXPECT_THAT(ids(module(".visible .entry k()\n.noreturn\n{\nret;\n}\n"), false), ElementsAre("function-directive"));
  EXPECT_THAT(ids(module(".func f()\n.noreturn\n{\nret;\n}\n.visible .entry k()\n.maxntid 64\n{\nret;\n}\n"), false),
              IsEmpty());
}

TEST(StructureChecks, Initializers) {
  auto r = check(module(".global .u32 a[2] = {1, 2, 3};\n"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "initializer-count");
  EXPECT_EQ(d.message, "3 initializers for 2 elements of '.u32 a[2]'");
  EXPECT_EQ(d.loc.line, 4u);
  EXPECT_THAT(ids(module(".shared .u32 a = 1;\n"), false), ElementsAre("initializer-space"));
  EXPECT_THAT(ids(module(".global .f32 a = 1;\n"), false), ElementsAre("initializer-type"));
  EXPECT_THAT(ids(module(".global .u32 a = 1.5;\n"), false), ElementsAre("initializer-type"));
  EXPECT_THAT(ids(module(".global .v2.u32 a = {1};\n"), false), ElementsAre("initializer-count"));
  EXPECT_THAT(ids(module(".global .f32 a[] = {1.0, 0f3F800000};\n.global .b32 b = 1.5;\n"
                         ".global .u32 c[2][2] = {{1}, {2, 3}};\n"), false),
              IsEmpty());
  EXPECT_THAT(ids(module(".local .u32 a;\n"), false), ElementsAre("variable-space"));
}

TEST(StructureChecks, ArraysNeedASizeUnlessExtern) {
  auto r = check(module(".shared .align 16 .b8 smem[];\n"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "incomplete-array");
  EXPECT_EQ(d.message, "'smem' is an array without a size");
  EXPECT_THAT(d.hint, HasSubstr(".extern .shared .align 16 .b8 smem[];"));
  EXPECT_THAT(ids(module(".extern .shared .align 16 .b8 smem[];\n.global .u32 a[] = {1, 2};\n"), false), IsEmpty());
  EXPECT_THAT(ids(kernel(".reg .b32 %q[2];"), false), ElementsAre("reg-array"));
  EXPECT_THAT(ids(kernel(".reg .b32 %q[2][2];"), false), ElementsAre("variable-space"));
  EXPECT_THAT(ids(kernel(".extern .shared .b8 dyn[];"), false), ElementsAre("variable-space"));
}

TEST(StructureChecks, LabelsAreBlockScoped) {
  auto r = check(kernel("{\nL1:\nmov.u32 %r1, 0;\n}\nbra L1;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "undeclared-label");
  EXPECT_EQ(d.message, "label 'L1' is inside a { } block that does not enclose this branch");
  EXPECT_EQ(d.loc.line, 17u);
  EXPECT_THAT(ids(kernel("{\nbra L1;\n}\nL1:\nmov.u32 %r1, 0;"), false), IsEmpty());
}

TEST(StructureChecks, HeaderComesFirstInOrder) {
  auto r = check(".version 8.0\n.address_size 64\n.target sm_90a\n.visible .entry k()\n{\nret;\n}\n");
  ASSERT_FALSE(r.diags.list().empty());
  EXPECT_EQ(r.diags.list()[0].check_id, "header-order");
  EXPECT_EQ(r.diags.list()[0].message, "'.address_size' must come right after .target, once");
  EXPECT_THAT(ids(kernel("mov.u32 %r1, 0;"), false), IsEmpty());
  EXPECT_THAT(ids(module(".visible .entry k(.reg .b32 a)\n{\nret;\n}\n"), false), ElementsAre("variable-space"));
}

TEST(StructureChecks, ConstantSpaceIsReadOnly) {
  auto r = check(kernel("mov.u64 %rd1, 0;\nst.const.u32 [%rd1], %r1;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "read-only-space");
  EXPECT_EQ(d.message, "'st.const.u32' writes to the constant space, which is read-only");
  EXPECT_THAT(ids(kernel("st.param.u64 [p], %rd1;"), false), ElementsAre("read-only-space"));
  EXPECT_THAT(ids(module(".func (.param .b32 r) f()\n{\nst.param.b32 [r], 0;\nret;\n}\n"), false), IsEmpty());
}

TEST(StructureChecks, FunctionUsedBeforeItsDeclaration) {
  auto r = check(module(".visible .entry k()\n{\ncall f;\nret;\n}\n.func f()\n{\nret;\n}\n"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "use-before-declaration");
  EXPECT_EQ(d.message, "function 'f' is used before it is declared");
  EXPECT_EQ(d.loc.line, 6u);
  EXPECT_EQ(d.loc.col, 6u);
  EXPECT_THAT(ids(module(".func f();\n.visible .entry k()\n{\ncall f;\nret;\n}\n.func f()\n{\nret;\n}\n"), false),
              IsEmpty());
  EXPECT_THAT(ids(module(".func f()\n{\ncall f;\nret;\n}\n"), false), IsEmpty());
  auto with_args = check(module(".visible .entry k()\n{\n.param .b32 a;\n.param .b32 r;\ncall (r), f2, (a);\nret;\n}\n"
                                ".func (.param .b32 r) f2(.param .b32 a)\n{\nst.param.b32 [r], 0;\nret;\n}\n"));
  EXPECT_THAT(only(with_args).hint, HasSubstr("'.func (.param .b32 r) f2(.param .b32 a);'"));
}

TEST(StructureChecks, GlobalAddressesAre64Bit) {
  auto r = check(kernel("mov.u32 %r1, 0;\nld.global.u32 %r2, [%r1];"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "address-width");
  EXPECT_EQ(d.message, "'%r1' is a 32-bit register, but .global addresses are 64-bit");
  EXPECT_THAT(d.hint, HasSubstr("mul.wide.u32"));
  EXPECT_THAT(ids(kernel("mov.u32 %r1, 0;\nld.shared.u32 %r2, [%r1];\nst.local.u32 [%r1], %r2;"), false), IsEmpty());
  EXPECT_THAT(ids(".version 8.0\n.target sm_90a\n.address_size 32\n", false), ElementsAre("address-size"));
}

TEST(StructureChecks, MbarrierStateAndParityWidths) {
  auto r = check(kernel("mbarrier.try_wait.shared::cta.b64 %p1, [%rd1], %r1;"));
  auto& d = only(r);
  EXPECT_EQ(d.check_id, "mbarrier-operand");
  EXPECT_THAT(d.message, HasSubstr("state operand"));
  EXPECT_THAT(ids(kernel("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd1], %rd2;"), false),
              ElementsAre("mbarrier-operand"));
  EXPECT_THAT(ids(kernel("mbarrier.arrive.release.cluster.shared::cluster.b64 %rd2, [%r1];"), false),
              ElementsAre("mbarrier-operand"));
  EXPECT_THAT(ids(kernel("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd1], %r1;\n"
                         "mbarrier.arrive.shared::cta.b64 %rd2, [%rd1];"), false),
              IsEmpty());
}

}  // namespace
}  // namespace ptxforge::ptx
