// The keyed PRF behind every input: ChaCha as RFC 8439 and the reference implementation
// define it (20, 12 and 8 rounds), the vectorised blocks equal to the scalar ones, and keys,
// streams and counters that separate what they should.
#include "task/prf.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace ptxforge::task {
namespace {

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

// The serialized block: each word little-endian, in order (RFC 8439 section 2.3).
std::vector<uint8_t> serialize(const std::array<uint32_t, 16>& x) {
  std::vector<uint8_t> out;
  for (uint32_t w : x)
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(w >> (8 * b)));
  return out;
}
std::vector<uint8_t> serialize(const uint64_t* words, size_t n) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i < n; ++i)
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<uint8_t>(words[i] >> (8 * b)));
  return out;
}

ChaChaKey rfc_key() {  // 00:01:02:...:1f, the key of the RFC's examples
  ChaChaKey k;
  for (uint32_t w = 0; w < 8; ++w) k[w] = (4 * w) | (4 * w + 1) << 8 | (4 * w + 2) << 16 | (4 * w + 3) << 24;
  return k;
}

// The RFC's 96-bit nonce n0:n1:n2 (three little-endian words) after its 32-bit counter is, in
// this layout, the counter's high word n0 and the 64-bit stream n1 | n2 << 32.
constexpr uint64_t kRfcStream = 0x4a000000ull;  // nonce words 1, 2 of both examples

TEST(Prf, Rfc8439BlockFunctionTestVector) {
  // Section 2.3.2: nonce 00:00:00:09:00:00:00:4a:00:00:00:00, block count 1.
  const uint64_t counter = 1 | (uint64_t{0x09000000} << 32);
  auto x = chacha_block(rfc_key(), counter, kRfcStream, 20);
  EXPECT_EQ(hex(serialize(x)),
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
            "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e");
  EXPECT_EQ(x[0], 0xe4e7f110u) << "the RFC's first state word after the block function";
  EXPECT_EQ(x[15], 0x4e3c50a2u);
  PrfBlock b = Prf(rfc_key(), 20).block(kRfcStream, counter);
  EXPECT_EQ(serialize(b.data(), 8), serialize(x)) << "Prf::block is the same block as 64-bit words";
}

TEST(Prf, Rfc8439EncryptionTestVector) {
  // Section 2.4.2: the keystream from block 1 on, nonce 00:00:00:00:00:00:00:4a:00:00:00:00,
  // XORed with the 114-byte "sunscreen" text.
  const std::string text =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be "
      "it.";
  ASSERT_EQ(text.size(), 114u);
  uint64_t words[16];
  Prf(rfc_key(), 20).blocks(kRfcStream, 1, 2, words);
  std::vector<uint8_t> stream = serialize(words, 16), cipher(text.size());
  for (size_t i = 0; i < text.size(); ++i) cipher[i] = static_cast<uint8_t>(text[i]) ^ stream[i];
  EXPECT_EQ(hex(cipher),
            "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
            "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
            "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
            "5af90bbf74a35be6b40b8eedf2785e42874d");
}

TEST(Prf, ReferenceVectorsForTwelveAndEightRounds) {
  // The all-zero key, stream and counter of Bernstein's reference ChaCha (as in
  // draft-strombergson-chacha-test-vectors): a rounds parameter ignored or miscounted fails here.
  const ChaChaKey zero{};
  EXPECT_EQ(hex(serialize(chacha_block(zero, 0, 0, 12))),
            "9bf49a6a0755f953811fce125f2683d50429c3bb49e074147e0089a52eae155f"
            "0564f879d27ae3c02ce82834acfa8c793a629f2ca0de6919610be82f411326be");
  EXPECT_EQ(hex(serialize(chacha_block(zero, 0, 0, 8))),
            "3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e"
            "984ce172b9216f419f445367456d5619314a42a3da86b001387bfdb80e0cfe42");
  EXPECT_EQ(hex(serialize(chacha_block(zero, 1, 0, 8))).substr(0, 32), "d2aefa0deaa5c151bf0adb6c01f2a5ad")
      << "the second block of the same keystream";
}

TEST(Prf, ProductionRoundsAndTheSeedKeyMatchAnIndependentImplementation) {
  // Values from a separate implementation (Python, itself checked against OpenSSL's ChaCha20):
  // 12 rounds, a seed's key, a stream above 2^32 words and a counter that carries into word 13.
  const Prf p = Prf::from_seed(0x0123456789ABCDEFull);
  ASSERT_EQ(p.rounds(), 12);
  EXPECT_EQ(p.block(7, 0xFFFFFFFFull)[0], 0x0d4fa570b62525f8ull);
  EXPECT_EQ(p.block(7, 0xFFFFFFFFull)[1], 0xa639c0c52b56ab7eull);
  EXPECT_EQ(p.block(7, 0x100000000ull)[0], 0x5325a5ca5b368c24ull) << "the counter's carry reaches word 13";
  EXPECT_EQ(p.block(7, 0x100000000ull)[1], 0x2e22316a87a6f4b8ull);
  // The key: the seed's halves, then "ptxforge input prf v1".
  EXPECT_EQ(p.key()[0], 0x89ABCDEFu);
  EXPECT_EQ(p.key()[1], 0x01234567u);
  char label[24] = {};
  std::memcpy(label, p.key().data() + 2, sizeof label);
  EXPECT_STREQ(label, "ptxforge input prf v1");
}

TEST(Prf, VectorisedBlocksEqualScalarBlocks) {
  // Every group size and offset, counters across the 2^32 carry and the 2^64 wrap, several
  // round counts (odd ones too: the last round is then a column round in both).
  const Prf base = Prf::from_seed(42);
  for (int rounds : {1, 7, 8, 12, 20}) {
    const Prf p(base.derive(rounds, 0).key(), rounds);
    for (uint64_t start : {uint64_t{0}, uint64_t{0xFFFFFFFB}, ~uint64_t{0} - 5})
      for (size_t n : {1, 7, 8, 9, 16, 19}) {
        std::vector<uint64_t> out(8 * n);
        p.blocks(0x1234567890ull, start, n, out.data());
        for (size_t k = 0; k < n; ++k) {
          PrfBlock b = p.block(0x1234567890ull, start + k);
          for (int w = 0; w < 8; ++w)
            ASSERT_EQ(out[8 * k + w], b[w]) << "rounds " << rounds << ", start " << start << ", block " << k << ", word " << w;
        }
      }
  }
}

int bits_differing(const PrfBlock& a, const PrfBlock& b) {
  int n = 0;
  for (int w = 0; w < 8; ++w) n += std::popcount(a[w] ^ b[w]);
  return n;
}

TEST(Prf, DeterministicAndSeparatedByKeyStreamAndCounter) {
  const Prf p = Prf::from_seed(7);
  EXPECT_EQ(p.block(3, 5), Prf::from_seed(7).block(3, 5)) << "the same inputs, the same block";
  // One bit of seed, stream or counter changes about half of the 512 output bits (256 +- 11;
  // the bounds are 5 standard deviations). A weak mix (too few rounds, an input ignored) fails.
  for (int bit = 0; bit < 64; bit += 9) {
    const uint64_t flip = uint64_t{1} << bit;
    int by_seed = bits_differing(p.block(3, 5), Prf::from_seed(7 ^ flip).block(3, 5));
    int by_stream = bits_differing(p.block(3, 5), p.block(3 ^ flip, 5));
    int by_counter = bits_differing(p.block(3, 5), p.block(3, 5 ^ flip));
    for (int d : {by_seed, by_stream, by_counter}) {
      EXPECT_GT(d, 200) << "bit " << bit;
      EXPECT_LT(d, 312) << "bit " << bit;
    }
  }
  // Stream and counter are not interchangeable: (s, c) and (c, s) are different blocks.
  EXPECT_NE(p.block(3, 5), p.block(5, 3));
  std::set<uint64_t> first_words;
  for (uint64_t s = 0; s < 32; ++s)
    for (uint64_t c = 0; c < 32; ++c) first_words.insert(p.block(s, c)[0]);
  EXPECT_EQ(first_words.size(), 32u * 32u);
}

TEST(Prf, DerivedKeysAreIndependentOfEachOtherAndOfTheParent) {
  const Prf p = Prf::from_seed(99);
  const Prf a = p.derive(1, 0), b = p.derive(1, 1), c = p.derive(2, 0);
  EXPECT_NE(a.key(), b.key());
  EXPECT_NE(a.key(), c.key());
  EXPECT_NE(a.key(), p.key());
  // The derived key is the parent's block, and nothing of the seed shows in it.
  auto x = chacha_block(p.key(), 0, 1, p.rounds());
  for (int w = 0; w < 8; ++w) EXPECT_EQ(a.key()[w], x[w]);
  EXPECT_NE(a.key()[0], 99u);
  EXPECT_EQ(a.rounds(), p.rounds());
  EXPECT_GT(bits_differing(a.block(0, 0), b.block(0, 0)), 200);
}

}  // namespace
}  // namespace ptxforge::task
