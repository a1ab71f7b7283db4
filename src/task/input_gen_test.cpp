// Input generation drawn block-wise from a keyed PRF: every distribution keeps its shape,
// element i's value depends only on (seed, stream, i), however the buffer is split between
// threads or blocks, and the values do not lead back to the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "task/buffers.h"
#include "task/seeds.h"
#include "testing/mix_inverse.h"

namespace ptxforge::task {
namespace {

using testing::odd_inverse;
using testing::undo_mix64;

// The generator this PRF replaced, as the adversary knew it: element i's 64 random bits were
// mix64(key + golden * (i + 1)), key = mix64(seed * fnv_prime + stream * c + 1).
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull, kFnvPrime = 0x100000001B3ull, kStreamMul = 0xA24BAED4963EE407ull;
// What a kernel given int(0, 2^53 - 1) inputs could do to the old generator: each element
// shows 53 of its 64 bits, so guess the other 11 of element 0, undo the mix to the key, check
// the guess against element 1, and undo the key to the seed.
std::optional<uint64_t> recover_seed(const std::vector<int64_t>& v, uint64_t stream) {
  const uint64_t low = (uint64_t{1} << 53) - 1;
  for (uint64_t high = 0; high < 2048; ++high) {
    uint64_t key = undo_mix64((high << 53) | static_cast<uint64_t>(v[0])) - kGolden;
    if ((mix64(key + 2 * kGolden) & low) != static_cast<uint64_t>(v[1])) continue;
    return (undo_mix64(key) - 1 - stream * kStreamMul) * odd_inverse(kFnvPrime);
  }
  return std::nullopt;
}

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
  // 3M elements are filled by threads in chunks; 777 by one thread (ending inside a block of 8
  // elements); 1M + 13 by threads whose chunks end elsewhere. Where they overlap they agree,
  // for every distribution.
  for (Distribution d : {Distribution{Distribution::uniform, -1, 1}, Distribution{Distribution::normal, 0, 1},
                         Distribution{Distribution::integers, 0, 9}, Distribution{Distribution::iota, 0, 0}}) {
    std::vector<float> big(3 << 20), small(777), odd((1 << 20) + 13);
    fill_input(big.data(), DType::f32, big.size(), d, 11, 4);
    fill_input(small.data(), DType::f32, small.size(), d, 11, 4);
    fill_input(odd.data(), DType::f32, odd.size(), d, 11, 4);
    for (size_t i = 0; i < small.size(); ++i) ASSERT_EQ(small[i], big[i]) << d.text() << ", element " << i;
    for (size_t i = 0; i < odd.size(); ++i) ASSERT_EQ(odd[i], big[i]) << d.text() << ", element " << i;
  }
}

TEST(InputGen, ElementsAreTheBufferPrfsWordsTheSameOnEveryMachine) {
  // uniform(0, 1) in f64 shows an element's top 53 random bits exactly: element i is word
  // i % 8 of block i / 8 of the buffer's PRF, and the values match an independent ChaCha12.
  std::vector<double> v(20);
  fill_input(v.data(), DType::f64, v.size(), {Distribution::uniform, 0, 1}, 11, 4);
  const Prf prf = input_prf(11, 4);
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(v[i], static_cast<double>(prf.block(0, i / 8)[i % 8] >> 11) * 0x1p-53) << "element " << i;
  EXPECT_EQ(v[0], 0x1.4fb083775a87ap-2);
  EXPECT_EQ(v[9], 0x1.fd186c8c6a5f3p-1);
  EXPECT_EQ(v[19], 0x1.eba41f8648140p-3);
  // Another stream of the same seed, or another seed, is another key.
  std::vector<double> w(20);
  fill_input(w.data(), DType::f64, w.size(), {Distribution::uniform, 0, 1}, 11, 5);
  EXPECT_NE(v, w);
  fill_input(w.data(), DType::f64, w.size(), {Distribution::uniform, 0, 1}, 12, 4);
  EXPECT_NE(v, w);
}

TEST(InputGen, InputsDoNotLeadBackToTheSeed) {
  // The attack recovers the seed from two elements of the old generator's output...
  const uint64_t seed = 0x5EC12E7BA5E5EEDull, stream = 3;
  const double top = static_cast<double>((uint64_t{1} << 53) - 1);
  std::vector<int64_t> old(2);
  const uint64_t key = mix64(seed * kFnvPrime + stream * kStreamMul + 1);
  for (uint64_t i = 0; i < 2; ++i) old[i] = static_cast<int64_t>(mix64(key + kGolden * (i + 1)) % (uint64_t{1} << 53));
  ASSERT_EQ(recover_seed(old, stream), seed) << "the attack works on the generator it was written for";
  // ...and gets nothing from fill_input's.
  std::vector<int64_t> v(64);
  fill_input(v.data(), DType::i64, v.size(), {Distribution::integers, 0, top}, seed, stream);
  ASSERT_LE(*std::max_element(v.begin(), v.end()), static_cast<int64_t>(top));
  EXPECT_GT(*std::max_element(v.begin(), v.end()), int64_t{1} << 50) << "the buffer does show 53 bits an element";
  auto found = recover_seed(v, stream);
  EXPECT_FALSE(found.has_value() && *found == seed) << "fill_input's values inverted to the seed";
  EXPECT_FALSE(found.has_value()) << "not even a consistent wrong guess: element 1 does not follow from element 0";
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
