#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "task/buffers.h"
#include "task/compare.h"
#include "task/dtype.h"

namespace ptxforge::task {
namespace {

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 1.0f + static_cast<float>(i % 97) * 0.25f;
  return v;
}

Comparison cmp(const std::vector<float>& e, const std::vector<float>& a, Tolerance t = {1e-5, 1e-6, 1.0},
               std::vector<int64_t> shape = {}) {
  return compare_output("y", e.data(), a.data(), DType::f32, e.size(), t, shape);
}

TEST(Compare, MixedToleranceAndMatchedFraction) {
  auto e = ramp(1000);
  auto a = e;
  EXPECT_TRUE(cmp(e, a).pass);
  a[10] *= 1.0f + 1e-6f;  // inside rtol
  EXPECT_TRUE(cmp(e, a).pass);
  a[20] += 1.0f;
  auto c = cmp(e, a);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.mismatches, 1u);
  ASSERT_EQ(c.first.size(), 1u);
  EXPECT_EQ(c.first[0].index, 20u);
  EXPECT_NEAR(c.max_abs_error, 1.0, 1e-6);
  EXPECT_TRUE(cmp(e, a, {1e-5, 1e-6, 0.99}).pass) << "99% must match, 99.9% do";
}

TEST(Compare, HintsForTheCommonFailures) {
  auto e = ramp(4096);
  std::vector<float> zeros(e.size(), 0.0f);
  EXPECT_EQ(cmp(e, zeros).hint, "the output is all zeros");

  std::vector<float> poison(e.size());
  fill_poison(poison.data(), poison.size() * 4);
  EXPECT_NE(cmp(e, poison).hint.find("never written"), std::string::npos);
  EXPECT_EQ(cmp(e, poison).never_written, e.size());

  auto prefix = e;
  for (size_t i = 256; i < prefix.size(); ++i) prefix[i] = -5.0f;
  EXPECT_NE(cmp(e, prefix).hint.find("only the first 256 of 4096"), std::string::npos);

  auto shifted = e;
  for (auto& v : shifted) v += 3.0f;
  EXPECT_NE(cmp(e, shifted).hint.find("off by the same constant (3)"), std::string::npos);

  auto scaled = e;
  for (auto& v : scaled) v *= 2.0f;
  EXPECT_NE(cmp(e, scaled).hint.find("same factor (2)"), std::string::npos);

  // 64 x 64 expected; the candidate wrote the transpose.
  std::vector<float> m(64 * 64), t(64 * 64);
  for (size_t r = 0; r < 64; ++r)
    for (size_t c = 0; c < 64; ++c) m[r * 64 + c] = static_cast<float>(r * 1000 + c);
  for (size_t r = 0; r < 64; ++r)
    for (size_t c = 0; c < 64; ++c) t[c * 64 + r] = m[r * 64 + c];
  EXPECT_NE(cmp(m, t, {}, {64, 64}).hint.find("transpose"), std::string::npos);

  auto nan = e;
  nan[5] = NAN;
  nan[7] = NAN;
  auto c = cmp(e, nan);
  EXPECT_EQ(c.nan_count, 2u);
  EXPECT_NE(c.hint.find("2 NaN"), std::string::npos);
}

TEST(Buffers, GuardsReportTheFirstOutOfBoundsOffset) {
  const size_t g = GuardedLayout::kGuard;
  std::vector<uint8_t> head(g, kCanaryByte), tail(g, kCanaryByte);
  EXPECT_FALSE(check_guards(head.data(), tail.data(), 400).has_value());
  tail[8] = 0;
  tail[9] = 0;
  auto v = check_guards(head.data(), tail.data(), 400);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->first_offset, 408);
  EXPECT_EQ(v->bytes_changed, 2u);
  EXPECT_NE(v->describe("c", 4).find("past the end of 'c'"), std::string::npos);
  EXPECT_NE(v->describe("c", 4).find("element 102"), std::string::npos);
  tail[8] = tail[9] = kCanaryByte;
  head[g - 4] = 1;
  v = check_guards(head.data(), tail.data(), 400);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->first_offset, -4);
  EXPECT_NE(v->describe("c", 4).find("before the start"), std::string::npos);
  GuardedLayout l{1000};
  EXPECT_EQ(l.data_offset() % 256, 0u);
  EXPECT_EQ(l.tail_offset(), g + 1000);
}

TEST(Buffers, CanariesOfAnyLengthCountFromTheBuffer) {
  // Guard pages leave a head canary of megabytes and a tail of under 256 bytes (or none).
  std::vector<uint8_t> head(3 << 20, kCanaryByte), tail(244, kCanaryByte);
  EXPECT_FALSE(check_canaries(head.data(), head.size(), tail.data(), tail.size(), 4000012).has_value());
  EXPECT_FALSE(check_canaries(head.data(), head.size(), nullptr, 0, 4096).has_value()) << "no tail at all";
  tail[243] = 7;
  auto v = check_canaries(head.data(), head.size(), tail.data(), tail.size(), 4000012);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->first_offset, 4000012 + 243);
  EXPECT_EQ(v->bytes_changed, 1u);
  head[(1 << 20)] = 0;  // 2 MiB before the buffer's start
  v = check_canaries(head.data(), head.size(), tail.data(), tail.size(), 4000012);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->first_offset, -(int64_t{2} << 20)) << "the head is reported first, counted back from the start";
  EXPECT_EQ(v->bytes_changed, 2u);
}

TEST(Buffers, InputsAreDeterministicAndFollowTheDistribution) {
  std::vector<float> a(3 << 20), b(3 << 20), c(1000);
  Distribution u{Distribution::uniform, -2, 3};
  fill_input(a.data(), DType::f32, a.size(), u, 7, 1);  // large enough to be filled by threads
  fill_input(b.data(), DType::f32, b.size(), u, 7, 1);
  EXPECT_EQ(a, b);
  fill_input(b.data(), DType::f32, b.size(), u, 8, 1);
  EXPECT_NE(a, b) << "another seed gives other inputs";
  double lo = 1e9, hi = -1e9, sum = 0;
  for (float v : a) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    sum += v;
  }
  EXPECT_GE(lo, -2.0);
  EXPECT_LE(hi, 3.0);
  EXPECT_NEAR(sum / static_cast<double>(a.size()), 0.5, 0.01);
  std::vector<uint8_t> bytes(1000);
  fill_input(bytes.data(), DType::u8, bytes.size(), {Distribution::integers, 0, 255}, 1, 0);
  bool saw_high = false;
  for (auto v : bytes) saw_high = saw_high || v > 200;
  EXPECT_TRUE(saw_high);
  fill_input(c.data(), DType::f32, c.size(), {Distribution::iota, 0, 0}, 1, 0);
  EXPECT_EQ(c[999], 999.0f);
}

TEST(Compare, SixtyFourBitIntegersAreComparedExactly) {
  // 2^60 and 2^60 + 1 are the same double: a comparison through doubles would pass this.
  std::vector<int64_t> e = {int64_t{1} << 60, -7}, a = {(int64_t{1} << 60) + 1, -7};
  Comparison c = compare_output("sum", e.data(), a.data(), DType::i64, 2, Tolerance{});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 1);
  std::vector<uint64_t> ue = {~uint64_t{0}}, ua = {~uint64_t{0} - 1};
  EXPECT_FALSE(compare_output("u", ue.data(), ua.data(), DType::u64, 1, Tolerance{}).pass);
  EXPECT_TRUE(compare_output("u", ue.data(), ue.data(), DType::u64, 1, Tolerance{}).pass);
}

TEST(Compare, IntegerOutputsIgnoreFloatTolerances) {
  // With rtol 1e-5, a count of 1,000,000 off by 5 used to pass.
  std::vector<uint32_t> e = {1000000}, a = {1000005};
  EXPECT_FALSE(compare_output("bins", e.data(), a.data(), DType::u32, 1, Tolerance{1e-5, 1e-6, 1.0}).pass);
  // min_match still applies: one wrong bin in four is allowed at 0.75.
  std::vector<uint32_t> e4 = {1, 2, 3, 4}, a4 = {1, 2, 3, 5};
  EXPECT_TRUE(compare_output("bins", e4.data(), a4.data(), DType::u32, 4, Tolerance{0, 0, 0.75}).pass);
}

TEST(Compare, AScalarOutputIsOneElement) {
  float e = 523.25f, right = 523.2505f, zero = 0;
  EXPECT_TRUE(compare_output("sum", &e, &right, DType::f32, 1, Tolerance{1e-5, 1e-6, 1.0}).pass);
  Comparison c = compare_output("sum", &e, &zero, DType::f32, 1, Tolerance{1e-5, 1e-6, 1.0});
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.hint, "the output is all zeros");
  uint8_t fp8_e = float_to_e4m3(3.5f), fp8_a = float_to_e4m3(3.75f);
  EXPECT_FALSE(compare_output("q", &fp8_e, &fp8_a, DType::e4m3, 1, Tolerance{0.01, 0, 1.0}).pass);
  EXPECT_TRUE(compare_output("q", &fp8_e, &fp8_a, DType::e4m3, 1, Tolerance{0.1, 0, 1.0}).pass);
}

TEST(DType, HalfConversionsRoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(1e6f))));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.5f)), 1.5f);
  EXPECT_EQ(float_to_bf16(1.00390625f), float_to_bf16(1.0f)) << "ties round to even";
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_FALSE(parse_dtype("f33").has_value());
  std::vector<uint8_t> buf(8);
  store_element(buf.data(), DType::i16, 2, -7);
  EXPECT_EQ(load_element(buf.data(), DType::i16, 2), -7);
}

}  // namespace
}  // namespace ptxforge::task
