// The missing-cvta warning follows addresses through arithmetic. Real kernels (nvcc output of
// CUTLASS and FlashAttention among them) add to a converted base a stride or offset loaded
// from another parameter; that parameter looks like an unconverted pointer, and the warning
// must not take the sum for one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/ptx_kernel.h"

namespace ptxforge::ptx {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::ids;

// A kernel with a pointer and a 64-bit stride parameter.
std::string two_params(const std::string& body) {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n"
         ".visible .entry k(.param .u64 p, .param .u64 stride)\n{\n"
         ".reg .b32 %r<10>;\n.reg .b64 %rd<20>;\n.reg .f32 %f<10>;\n" + body + "\nret;\n}\n";
}

TEST(MissingCvta, ConvertedBasePlusParameterStrideIsConverted) {
  // base + stride, the stride straight from its parameter.
  EXPECT_THAT(ids(two_params("ld.param.u64 %rd1, [p];\nld.param.u64 %rd2, [stride];\n"
                             "cvta.to.global.u64 %rd3, %rd1;\nadd.s64 %rd4, %rd3, %rd2;\n"
                             "ld.global.f32 %f1, [%rd4];")),
              IsEmpty());
  // stride first, and scaled: mad, shl and mul of a parameter added to the base.
  EXPECT_THAT(ids(two_params("ld.param.u64 %rd1, [p];\nld.param.u64 %rd2, [stride];\n"
                             "cvta.to.global.u64 %rd3, %rd1;\nshl.b64 %rd5, %rd2, 2;\nadd.s64 %rd4, %rd5, %rd3;\n"
                             "mad.lo.s64 %rd6, %rd2, 4, %rd3;\nmul.lo.s64 %rd7, %rd2, 8;\nsub.s64 %rd8, %rd3, %rd7;\n"
                             "ld.global.f32 %f1, [%rd4];\nld.global.f32 %f2, [%rd6];\nst.global.f32 [%rd8], %f1;")),
              IsEmpty());
  // Through a copy and an offset in the address itself.
  EXPECT_THAT(ids(two_params("ld.param.u64 %rd1, [p];\nld.param.u64 %rd2, [stride];\n"
                             "cvta.to.global.u64 %rd3, %rd1;\nmov.b64 %rd9, %rd3;\nadd.s64 %rd4, %rd2, %rd9;\n"
                             "ld.global.f32 %f1, [%rd4+16];")),
              IsEmpty());
}

TEST(MissingCvta, UnconvertedPointerStillWarns) {
  // Neither part converted: the pointer parameter plus the stride.
  EXPECT_THAT(ids(two_params("ld.param.u64 %rd1, [p];\nld.param.u64 %rd2, [stride];\n"
                             "add.s64 %rd4, %rd1, %rd2;\nld.global.f32 %f1, [%rd4];")),
              ElementsAre("missing-cvta"));
  // Converted once, then overwritten by a parameter load: no longer converted.
  EXPECT_THAT(ids(two_params("ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd3, %rd1;\n"
                             "ld.param.u64 %rd3, [p];\nld.global.f32 %f1, [%rd3];")),
              ElementsAre("missing-cvta"));
  // cvta to the generic space is no conversion to a global address.
  EXPECT_THAT(ids(two_params("ld.param.u64 %rd1, [p];\ncvta.global.u64 %rd3, %rd1;\nld.param.u64 %rd2, [stride];\n"
                             "add.s64 %rd4, %rd3, %rd2;\nld.global.f32 %f1, [%rd4];")),
              ElementsAre("missing-cvta"));
}

}  // namespace
}  // namespace ptxforge::ptx
