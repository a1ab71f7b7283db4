#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <vector>

#include "task/buffers.h"
#include "task/distribution.h"

namespace ptxforge::task {
namespace {

Distribution parsed(const char* text) {
  auto d = Distribution::parse(text);
  EXPECT_TRUE(d) << text << ": " << (d ? "" : d.error().message);
  return d ? *d : Distribution{};
}

std::vector<float> fill_f32(const char* text, size_t n, uint64_t seed = 1) {
  std::vector<float> v(n);
  fill_input(v.data(), DType::f32, n, parsed(text), seed, 0);
  return v;
}

TEST(InitGrammar, NestsStructureAroundABase) {
  Distribution d = parsed("plant_max(sorted(ties(16, uniform(0, 1))), end)");
  EXPECT_EQ(d.kind, Distribution::uniform);
  EXPECT_EQ(d.ties, 16u);
  EXPECT_EQ(d.order, Distribution::Order::sorted);
  EXPECT_EQ(d.plant, Distribution::Plant::max);
  EXPECT_EQ(d.where, Distribution::Where::end);
  EXPECT_EQ(d.text(), "plant_max(sorted(ties(16, uniform(0, 1))), end)");
  EXPECT_EQ(parsed("randint(-5, 5)").kind, Distribution::integers);
  EXPECT_EQ(parsed("ties(4)").text(), "ties(4)");
  EXPECT_EQ(parsed("reversed(normal(0, 2))").text(), "reversed(normal(0, 2))");
  EXPECT_EQ(parsed("plant_min(huge, random)").text(), "plant_min(huge, random)");
  for (const char* text : {"uniform(0, 1", "uniform(0)", "sorted(sorted(uniform(0, 1)))", "ties(0)", "ties(2.5)",
                           "ties(4, sorted(uniform(0, 1)))", "sorted(plant_max(uniform(0, 1), end))",
                           "plant_max(uniform(0, 1), last)", "int(0.5, 3)", "normal(0, -1)", "zeros(1)", "ties(3, iota)",
                           "uniform(0, 1) x", "uniform(a, 1)"}) {
    auto d = Distribution::parse(text);
    EXPECT_FALSE(d) << text;
  }
  EXPECT_NE(Distribution::parse("ties(4, sorted(uniform(0, 1)))").error().message.find("cannot sit here"), std::string::npos);
}

TEST(InitGrammar, UnfitDtypesAreNamed) {
  EXPECT_NE(parsed("tiny").unfit_for(DType::i32), "");
  EXPECT_EQ(parsed("tiny").unfit_for(DType::f16), "");
  EXPECT_NE(parsed("uniform(-1, 1)").unfit_for(DType::u8), "");
  EXPECT_EQ(parsed("int(0, 255)").unfit_for(DType::u8), "");
}

TEST(InputStructure, SortedAndReversedRunsAreMonotoneAndSeeded) {
  auto up = fill_f32("sorted(uniform(-1, 1))", 100000);
  EXPECT_TRUE(std::is_sorted(up.begin(), up.end()));
  EXPECT_GE(up.front(), -1.0f);
  EXPECT_LE(up.back(), 1.0f);
  EXPECT_NE(up, fill_f32("sorted(uniform(-1, 1))", 100000, 2)) << "another seed, other values";
  auto down = fill_f32("reversed(normal(0, 1))", 100000);
  EXPECT_TRUE(std::is_sorted(down.rbegin(), down.rend()));
  EXPECT_GT(down.front(), 3.0f) << "the normal's upper tail comes first";
  auto iota = fill_f32("reversed(iota)", 10);
  EXPECT_EQ(iota[0], 9.0f);
  EXPECT_EQ(iota[9], 0.0f);
}

TEST(InputStructure, TiesDrawFromExactlyKValues) {
  auto v = fill_f32("ties(7, uniform(0, 1))", 100000);
  std::set<float> distinct(v.begin(), v.end());
  EXPECT_EQ(distinct.size(), 7u);
  auto plain = fill_f32("ties(3)", 1000);
  EXPECT_EQ(std::set<float>(plain.begin(), plain.end()), (std::set<float>{0, 1, 2}));
  auto sorted = fill_f32("sorted(ties(5, normal(0, 1)))", 50000);
  EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end()));
  EXPECT_EQ(std::set<float>(sorted.begin(), sorted.end()).size(), 5u);
  std::vector<int32_t> ints(100000);
  fill_input(ints.data(), DType::i32, ints.size(), parsed("ties(1000, int(-50000, 50000))"), 1, 0);
  EXPECT_EQ(std::set<int32_t>(ints.begin(), ints.end()).size(), 1000u);
}

TEST(InputStructure, APlantedExtremeIsTheUniqueOneWhereAsked) {
  auto v = fill_f32("plant_max(uniform(-1, 1), end)", 100000);
  auto top = std::max_element(v.begin(), v.end());
  EXPECT_EQ(top - v.begin(), 99999) << "a scan of a prefix misses it";
  EXPECT_EQ(std::count(v.begin(), v.end(), *top), 1);
  EXPECT_GT(*top, 1.0f);
  auto low = fill_f32("plant_min(sorted(uniform(0, 1)), start)", 1000);
  EXPECT_EQ(std::min_element(low.begin(), low.end()) - low.begin(), 0);
  // random: the place follows the seed, and is the same for the same seed.
  auto pos = [](uint64_t seed) {
    auto r = fill_f32("plant_max(normal(0, 1), random)", 100000, seed);
    return std::max_element(r.begin(), r.end()) - r.begin();
  };
  EXPECT_EQ(pos(1), pos(1));
  EXPECT_TRUE(pos(1) != pos(2) || pos(1) != pos(3));
  // At the dtype's limit when there is no room above: u8 int(0, 255) plants 255.
  std::vector<uint8_t> bytes(1000);
  fill_input(bytes.data(), DType::u8, bytes.size(), parsed("plant_max(int(0, 100), middle)"), 1, 0);
  EXPECT_EQ(bytes[500], 200);
  EXPECT_EQ(*std::max_element(bytes.begin(), bytes.end()), 200);
  fill_input(bytes.data(), DType::u8, bytes.size(), parsed("plant_max(int(0, 255), middle)"), 1, 0);
  EXPECT_EQ(bytes[500], 255);
}

TEST(InputStructure, HugeAndTinyFollowTheDtype) {
  auto h = fill_f32("huge", 10000);
  bool neg = false, pos = false;
  for (float x : h) {
    EXPECT_GE(std::fabs(x), 3.4028234e38f / 4 * 0.999f);
    EXPECT_LE(std::fabs(x), 3.4028234e38f / 2 * 1.001f);
    neg = neg || x < 0;
    pos = pos || x > 0;
  }
  EXPECT_TRUE(neg && pos);
  float sum = 0;
  for (int i = 0; i < 8; ++i) sum += std::fabs(h[i]);
  EXPECT_TRUE(std::isinf(sum)) << "a few of them added overflow f32";
  std::vector<uint16_t> half(10000);
  fill_input(half.data(), DType::f16, half.size(), parsed("tiny"), 1, 0);
  int subnormal = 0;
  for (auto b : half) subnormal += (b & 0x7C00) == 0 && (b & 0x3FF) != 0;
  EXPECT_GT(subnormal, 1000) << "tiny reaches below the smallest normal";
  std::vector<int16_t> s(1000);
  fill_input(s.data(), DType::i16, s.size(), parsed("huge"), 1, 0);
  for (auto x : s) EXPECT_GE(std::abs(x), 8191);
}

TEST(InputStructure, NormalQuantileIsAccurate) {
  for (double u : {0.001, 0.02, 0.3, 0.5, 0.8, 0.975, 0.9999}) {
    double x = base_quantile(Distribution{Distribution::normal, 0, 1}, DType::f64, u);
    EXPECT_NEAR(0.5 * std::erfc(-x / std::sqrt(2.0)), u, 1e-8) << u;
  }
}

TEST(InputStructure, SixteenMillionStructuredElementsAreQuick) {
  // The worker fills every input of every size set; a structured 16M-element input must cost
  // no more than an unstructured one does. Reported, and bounded loosely (sanitizer builds).
  std::vector<float> v(size_t{16} << 20);
  for (const char* text : {"uniform(-1, 1)", "plant_max(sorted(normal(0, 1)), end)", "ties(100, uniform(0, 1))"}) {
    auto t0 = std::chrono::steady_clock::now();
    fill_input(v.data(), DType::f32, v.size(), parsed(text), 3, 1);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  %-40s %.1f ms\n", text, ms);
    EXPECT_LT(ms, 5000) << text;
  }
}

TEST(DType, Fp8FormatsFollowTheirSpecifications) {
  // e4m3 (e4m3fn): bias 7, max 448, no infinity, NaN 0x7F; conversion saturates.
  EXPECT_EQ(float_to_e4m3(1.0f), 0x38);
  EXPECT_EQ(float_to_e4m3(448.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(1e6f), 0x7E);
  EXPECT_EQ(float_to_e4m3(-1e6f), 0xFE);
  EXPECT_EQ(float_to_e4m3(INFINITY), 0x7E);
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -9)), 0x01) << "the smallest subnormal";
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38) << "a tie rounds to even";
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3A);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7F)));
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  // e5m2: bias 15, max 57344, infinities and NaN.
  EXPECT_EQ(float_to_e5m2(1.0f), 0x3C);
  EXPECT_EQ(float_to_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(float_to_e5m2(1e9f), 0x7B) << "satfinite, as cvt.rn.satfinite";
  EXPECT_TRUE(std::isinf(e5m2_to_float(0x7C)));
  EXPECT_TRUE(std::isnan(e5m2_to_float(0x7D)));
  EXPECT_EQ(e5m2_to_float(0x01), std::ldexp(1.0f, -16));
  // Every finite code decodes and encodes back to itself.
  for (int b = 0; b < 256; ++b) {
    float f = e4m3_to_float(static_cast<uint8_t>(b));
    if (!std::isnan(f) && b != 0x80) {
      EXPECT_EQ(float_to_e4m3(f), b) << b;
    }
    float g = e5m2_to_float(static_cast<uint8_t>(b));
    if (std::isfinite(g) && b != 0x80) {
      EXPECT_EQ(float_to_e5m2(g), b) << b;
    }
  }
  EXPECT_EQ(parse_dtype("e4m3"), DType::e4m3);
  EXPECT_EQ(dtype_size(DType::e5m2), 1u);
  std::vector<uint8_t> buf(4);
  store_element(buf.data(), DType::e4m3, 1, 3.5);
  EXPECT_EQ(load_element(buf.data(), DType::e4m3, 1), 3.5);
}

TEST(DType, SixtyFourBitIntegersAndClampedStores) {
  EXPECT_EQ(parse_dtype("s64"), DType::i64);
  std::vector<int64_t> v(2);
  store_element(v.data(), DType::i64, 0, 1e30);
  EXPECT_EQ(v[0], INT64_MAX) << "clamped, not undefined";
  std::vector<uint8_t> b(1);
  store_element(b.data(), DType::u8, 0, 300);
  EXPECT_EQ(b[0], 255);
  store_element(b.data(), DType::u8, 0, -5);
  EXPECT_EQ(b[0], 0);
}

}  // namespace
}  // namespace ptxforge::task
