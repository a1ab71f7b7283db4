// Hints that are right: for each mistake models make, the hint must name the fix, and the fix
// applied by hand must pass our check and assemble with ptxas (while the mistake does not).
// A hint that points the model the wrong way costs a round; these tests keep them honest.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "testing/rule_agreement.h"
#include "util/paths.h"

namespace ptxforge::ptx {
namespace {

struct HintCase {
  std::string name;
  std::string broken;         // kernel body with one mistake
  std::string check_id;       // what we report
  std::string hint_contains;  // the fix, as the hint spells it
  std::string fixed;          // the body with the hint applied
  std::string globals = "";   // module-level declarations, if any
};

const std::vector<HintCase>& cases() {
  static const std::vector<HintCase> k = {
      {"predicate-as-data", "setp.lt.s32 %p1, %r1, %r2;\nadd.s32 %r3, %r1, %p1;", "operand-type", "selp.u32",
       "setp.lt.s32 %p1, %r1, %r2;\nselp.u32 %r4, 1, 0, %p1;\nadd.s32 %r3, %r1, %r4;"},
      {"swapped-store", "st.global.f32 %f3, [%rd1];", "operand-kind", "st.global.f32 [%rd1], %f3;",
       "st.global.f32 [%rd1], %f3;"},
      {"swapped-load", "ld.global.f32 [%rd1], %f3;", "operand-kind", "ld.global.f32 %f3, [%rd1];",
       "ld.global.f32 %f3, [%rd1];"},
      {"cuda-thread-index", "mov.u32 %r1, %threadIdx.x;", "undeclared-reg", "%tid.x", "mov.u32 %r1, %tid.x;"},
      {"cuda-lane-id", "mov.u32 %r1, %lane_id;", "undeclared-reg", "%laneid", "mov.u32 %r1, %laneid;"},
      {"hex-float", "add.f32 %f1, %f2, 0x3F800000;", "immediate-type", "0f3F800000", "add.f32 %f1, %f2, 0f3F800000;"},
      {"float-suffix", "add.f32 %f1, %f2, 1.0f;", "bad-literal", "0f3F800000", "add.f32 %f1, %f2, 0f3F800000;"},
      {"vector-of-three", "ld.global.v3.f32 {%f1, %f2, %f3}, [%rd1];", "unknown-modifier", ".v2",
       "ld.global.v2.f32 {%f1, %f2}, [%rd1];\nld.global.f32 %f3, [%rd1+8];"},
      {"exp", "exp.approx.f32 %f1, %f2;", "unknown-opcode", "0f3FB8AA3B",
       "mul.f32 %f3, %f2, 0f3FB8AA3B;\nex2.approx.f32 %f1, %f3;"},
      {"log", "log.approx.f32 %f1, %f2;", "unknown-opcode", "0f3F317218",
       "lg2.approx.f32 %f3, %f2;\nmul.f32 %f1, %f3, 0f3F317218;"},
      {"float-to-int", "cvt.s32.f32 %r1, %f1;", "missing-modifier", "cvt.rzi.s32.f32", "cvt.rzi.s32.f32 %r1, %f1;"},
      {"int-to-float", "cvt.f32.s32 %f1, %r1;", "missing-modifier", "cvt.rn.f32.s32", "cvt.rn.f32.s32 %f1, %r1;"},
      {"widening-with-rounding", "cvt.rn.f64.f32 %fd1, %f1;", "illegal-modifier", "cvt.f64.f32",
       "cvt.f64.f32 %fd1, %f1;"},
      {"division", "div.f32 %f1, %f2, %f3;", "missing-modifier", "div.rn.f32", "div.rn.f32 %f1, %f2, %f3;"},
      {"fused-multiply-add", "fma.f32 %f1, %f2, %f3, %f4;", "missing-modifier", "fma.rn.f32",
       "fma.rn.f32 %f1, %f2, %f3, %f4;"},
      {"rsqrt", "rsqrt.f32 %f1, %f2;", "missing-modifier", "rsqrt.approx.f32", "rsqrt.approx.f32 %f1, %f2;"},
      {"integer-multiply", "mul.s32 %r1, %r2, %r3;", "missing-modifier", "mul.lo.s32", "mul.lo.s32 %r1, %r2, %r3;"},
      {"integer-rounding", "mad.lo.rn.s32 %r1, %r2, %r3, %r4;", "illegal-modifier", "drop '.rn'",
       "mad.lo.s32 %r1, %r2, %r3, %r4;"},
      {"float-lo", "mul.lo.f32 %f1, %f2, %f3;", "illegal-modifier", "drop '.lo'", "mul.f32 %f1, %f2, %f3;"},
      {"atomic-signed-add", "atom.global.add.s64 %rd1, [%rd2], %rd3;", "illegal-modifier", ".u64",
       "atom.global.add.u64 %rd1, [%rd2], %rd3;"},
      {"atomic-half-noftz", "atom.global.add.f16 %h1, [%rd2], %h2;", "missing-modifier", "atom.add.noftz.f16",
       "atom.global.add.noftz.f16 %h1, [%rd2], %h2;"},
      {"bit-compare", "setp.lt.b32 %p1, %r1, %r2;", "illegal-modifier", ".u32", "setp.lt.u32 %p1, %r1, %r2;"},
      {"shuffle-without-sync", "shfl.down.b32 %r1, %r2, 1, 31;", "missing-modifier", "membermask -1",
       "shfl.sync.down.b32 %r1, %r2, 1, 31, -1;"},
      {"barrier-count", "bar.sync 1, 33;", "immediate-value", "64", "bar.sync 1, 64;"},
      {"setmaxnreg-count", "setmaxnreg.inc.sync.aligned.u32 100;", "immediate-value", "104",
       "setmaxnreg.inc.sync.aligned.u32 104;"},
      {"cp-async-size", "cp.async.cg.shared.global [smem], [%rd1], 8;", "immediate-value", "cp.async.ca",
       "cp.async.ca.shared.global [smem], [%rd1], 8;"},
      {"register-array", ".reg .b32 %q[6];\nmov.u32 %q1, 1;", "reg-array", ".reg .b32 %q<6>;",
       ".reg .b32 %q<6>;\nmov.u32 %q1, 1;"},
      {"undeclared-register", "mov.u32 %v42, 1;", "undeclared-reg", "%v<43>", ".reg .b32 %v<43>;\nmov.u32 %v42, 1;"},
  };
  return k;
}

std::string module_with(const HintCase& c, const std::string& body) {
  testing::RuleHeader h;
  h.globals = c.globals;
  return testing::rule_module_head(h) + body + "\nret;\n}\n";
}

bool ptxas_accepts(const std::string& text) {
  toolchain::AssembleOptions o;
  o.arch = "sm_90a";
  auto a = toolchain::assemble_with_ptxas(text, o);
  return a && a->ok;
}

TEST(Hints, EachHintNamesTheFixAndOnlyOneErrorIsReported) {
  for (auto& c : cases()) {
    SCOPED_TRACE(c.name);
    auto r = check_source(module_with(c, c.broken), ValidateOptions{false});
    ASSERT_EQ(r.diags.error_count(), 1u) << r.diags.list()[0].message << " / "
                                          << (r.diags.list().size() > 1 ? r.diags.list()[1].message : "");
    const Diagnostic* d = nullptr;
    for (auto& x : r.diags.list())
      if (x.severity == Severity::error) d = &x;
    EXPECT_EQ(d->check_id, c.check_id);
    EXPECT_NE(d->hint.find(c.hint_contains), std::string::npos) << "hint: " << d->hint;
    auto fixed = check_source(module_with(c, c.fixed), ValidateOptions{false});
    EXPECT_FALSE(fixed.diags.has_errors()) << fixed.diags.list()[0].message;
  }
}

TEST(Hints, PtxasRejectsTheMistakeAndAcceptsTheFix) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  for (auto& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(ptxas_accepts(module_with(c, c.broken)));
    EXPECT_TRUE(ptxas_accepts(module_with(c, c.fixed)));
  }
}

// A fix-it is applied by tools without a reader: applied to the source, it must give a module
// that checks clean.
TEST(Hints, FixItsApplyCleanly) {
  int applied = 0;
  for (auto& c : cases()) {
    std::string text = module_with(c, c.broken);
    auto r = check_source(text, ValidateOptions{false});
    for (auto& d : r.diags.list()) {
      if (!d.fixit) continue;
      size_t line_start = 0;
      for (uint32_t l = 1; l < d.fixit->loc.line; ++l) line_start = text.find('\n', line_start) + 1;
      std::string fixed = text;
      fixed.replace(line_start + d.fixit->loc.col - 1, d.fixit->length, d.fixit->replacement);
      auto again = check_source(fixed, ValidateOptions{false});
      EXPECT_FALSE(again.diags.has_errors()) << c.name << ": " << fixed;
      ++applied;
    }
  }
  EXPECT_GE(applied, 8);
}

}  // namespace
}  // namespace ptxforge::ptx
