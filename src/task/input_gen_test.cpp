// Input generation drawn block-wise: every distribution keeps its shape, and element i's value
// depends only on (seed, stream, i), however the buffer is split between threads or blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "task/buffers.h"

namespace ptxforge::task {
namespace {

TEST(InputGen, NormalHasItsMeanAndSpread) {
  std::vector<float> v(1 << 20);
  fill_input(v.data(), DType::f32, v.size(), {Distribution::normal, 1.5, 2.0}, 3, 0);
  double sum = 0, sq = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sq += static_cast<double>(x) * x;
  }
  double mean = sum / static_cast<double>(v.size());
  double sd = std::sqrt(sq / static_cast<double>(v.size()) - mean * mean);
  EXPECT_NEAR(mean, 1.5, 0.01);
  EXPECT_NEAR(sd, 2.0, 0.01);
  size_t beyond_3sd = 0;
  for (float x : v) beyond_3sd += std::abs(x - 1.5) > 6.0 ? 1 : 0;
  EXPECT_GT(beyond_3sd, 1000u) << "tails are there (about 0.27%)";
  EXPECT_LT(beyond_3sd, 4000u);
}

TEST(InputGen, IntegersCoverTheirRangeEndsIncluded) {
  std::vector<uint8_t> bytes(1 << 20);
  fill_input(bytes.data(), DType::u8, bytes.size(), {Distribution::integers, 0, 255}, 5, 2);
  std::vector<size_t> hist(256, 0);
  for (uint8_t b : bytes) ++hist[b];
  for (size_t k = 0; k < 256; ++k) {
    EXPECT_GT(hist[k], 3500u) << k;  // 4096 expected each
    EXPECT_LT(hist[k], 4700u) << k;
  }
  std::vector<int32_t> small(10000);
  fill_input(small.data(), DType::i32, small.size(), {Distribution::integers, -3, 3}, 5, 2);
  std::set<int32_t> seen(small.begin(), small.end());
  EXPECT_EQ(seen, (std::set<int32_t>{-3, -2, -1, 0, 1, 2, 3}));
}

TEST(InputGen, AnElementDependsOnItsIndexAloneNotOnHowTheBufferIsSplit) {
  // 3M elements are filled by threads in chunks; 777 by one thread in blocks of 256. The first
  // 777 must agree, for every distribution (normals come in pairs: 777 ends inside one).
  for (Distribution d : {Distribution{Distribution::uniform, -1, 1}, Distribution{Distribution::normal, 0, 1},
                         Distribution{Distribution::integers, 0, 9}, Distribution{Distribution::iota, 0, 0}}) {
    std::vector<float> big(3 << 20), small(777);
    fill_input(big.data(), DType::f32, big.size(), d, 11, 4);
    fill_input(small.data(), DType::f32, small.size(), d, 11, 4);
    for (size_t i = 0; i < small.size(); ++i) ASSERT_EQ(small[i], big[i]) << d.text() << ", element " << i;
  }
}

TEST(InputGen, HostBytesHoldWhatAnyVectorWouldHold) {
  HostBytes a(4000);
  std::vector<uint8_t> b(4000);
  fill_input(a.data(), DType::f32, 1000, {Distribution::uniform, 0, 1}, 9, 1);
  fill_input(b.data(), DType::f32, 1000, {Distribution::uniform, 0, 1}, 9, 1);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  HostBytes copy = a;
  EXPECT_EQ(copy, a);
}

}  // namespace
}  // namespace ptxforge::task
