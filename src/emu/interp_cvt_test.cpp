// The engine's cvt on the packed fp8 forms (interp_float.cpp, lowered in lower_ops.cpp): two f32
// to e4m3x2/e5m2x2 (a to the upper byte), one f16x2 to e4m3x2, and e4m3x2/e5m2x2 back to f16x2,
// each element as the ALU's cvt. The expected bits are the GPU's (golden vectors, sm_90).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "emu/machine_testing.h"

namespace ptxforge::emu {
namespace {

const char* kFp8Header = ".version 8.1\n.target sm_90\n.address_size 64\n";

// One thread: out[0] = pack(a, b) as `pack`, out[1] = unpack(h) as `unpack`, out[2] = the
// e4m3x2 of the f16x2 `hh`.
std::vector<uint32_t> run_fp8(const std::string& pack, const std::string& unpack, uint32_t a, uint32_t b, uint16_t h,
                              uint32_t hh) {
  const std::string src = std::string(kFp8Header) + R"(
.visible .entry k(.param .u64 out, .param .u32 a, .param .u32 b, .param .u16 h, .param .u32 hh)
{
  .reg .b16 %p, %h, %q;
  .reg .b32 %a, %b, %u, %hh, %pw, %qw;
  .reg .f32 %fa, %fb;
  .reg .b64 %o;
  ld.param.u64 %o, [out];
  ld.param.u32 %a, [a];
  ld.param.u32 %b, [b];
  ld.param.u16 %h, [h];
  ld.param.u32 %hh, [hh];
  mov.b32 %fa, %a;
  mov.b32 %fb, %b;
  )" + pack + R"( %p, %fa, %fb;
  )" + unpack + R"( %u, %h;
  cvt.rn.satfinite.e4m3x2.f16x2 %q, %hh;
  cvt.u32.u16 %pw, %p;
  cvt.u32.u16 %qw, %q;
  st.global.u32 [%o], %pw;
  st.global.u32 [%o+4], %u;
  st.global.u32 [%o+8], %qw;
  ret;
}
)";
  auto built = build(src);
  if (!built.m) {
    ADD_FAILURE() << (built.finding ? built.finding->message : "no machine");
    return {};
  }
  Machine& m = *built.m;
  const uint64_t out = m.alloc("out", 12, Init::unwritten, true);
  ParamBytes hp(2);
  std::memcpy(hp.data(), &h, 2);
  std::vector<ParamBytes> p{u64p(out), u32p(a), u32p(b), hp, u32p(hh)};
  LaunchConfig cfg;
  cfg.grid = {1, 1, 1};
  cfg.block = {1, 1, 1};
  auto r = m.launch("k", cfg, p);
  if (!r.ok()) {
    ADD_FAILURE() << r.finding->message;
    return {};
  }
  return get<uint32_t>(m, out, 3);
}

TEST(EmuCvt, PacksTwoF32ToE4m3x2AndUnpacksToF16x2) {
  // 1.0 (0x38) and 448 (0x7e) from 4.5e5 saturated; a NaN source gives 0x7f.
  auto r = run_fp8("cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.f16x2.e4m3x2", 0x3f800000u, 0x49dcd33bu, 0x52e6, 0x3c00bc00u);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], 0x387eu);
  EXPECT_EQ(r[1], 0x4900d300u);  // 0x52 = 4.5 -> 0x4900; 0xe6 = -56 -> 0xd300
  EXPECT_EQ(r[2], 0x38b8u);      // f16x2 {1.0, -1.0}
  r = run_fp8("cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.f16x2.e4m3x2", 0x7fc00000u, 0x00000000u, 0xffd9, 0);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], 0x7f00u);
  EXPECT_EQ(r[1], 0x7fffcc80u);  // the e4m3 NaN 0xff -> the f16 NaN; 0xd9 = -18
  r = run_fp8("cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.f16x2.e4m3x2", 0xff800000u, 0xc3dd463du, 0x0001, 0);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], 0xfefeu);      // -inf and -442.5 saturate to -448
  EXPECT_EQ(r[1], 0x00001800u);  // the smallest e4m3 subnormal, 2^-9
}

TEST(EmuCvt, E5m2x2AndRelu) {
  auto r = run_fp8("cvt.rn.satfinite.relu.e5m2x2.f32", "cvt.rn.f16x2.e5m2x2", 0x3e9191a8u, 0xe5afa555u, 0x673b, 0);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], 0x3500u);      // 0.284 -> 0x35; a negative value -> +0
  EXPECT_EQ(r[1], 0x67003b00u);  // e5m2 is f16's top byte
  r = run_fp8("cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.f16x2.e5m2x2", 0xffc00000u, 0x7f800000u, 0xffbe, 0);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], 0x7f7bu);      // NaN -> 0x7f, inf saturates to 57344 (0x7b)
  EXPECT_EQ(r[1], 0x7fffbe00u);  // the e5m2 NaN 0xff -> the f16 NaN
  r = run_fp8("cvt.rn.satfinite.relu.e4m3x2.f32", "cvt.rn.f16x2.e4m3x2", 0x7f800001u, 0x807fffffu, 0x9b80, 0);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], 0x7f00u);      // .relu keeps NaN, -0 -> +0
  EXPECT_EQ(r[1], 0xad808000u);
}

}  // namespace
}  // namespace ptxforge::emu
