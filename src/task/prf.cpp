// ChaCha, twice: chacha_block is the RFC's description word for word (the one to audit), and
// Prf::blocks computes eight blocks side by side in GCC vector registers for fill_input's
// bulk draws. prf_test.cpp holds the two to the RFC's and the reference's test vectors and
// to each other.
#include "task/prf.h"

#include <algorithm>

namespace ptxforge::task {

namespace {

// "expand 32-byte k", the RFC's constant words 0 .. 3.
constexpr uint32_t kSigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};

// The label in key words 2 .. 7 of a seed's key ("ptxforge input prf v1" and padding, as
// little-endian words): a seed's key can never equal a key someone chose for another purpose.
constexpr uint32_t kSeedLabel[6] = {0x66787470u, 0x6567726fu, 0x706e6920u, 0x70207475u, 0x76206672u, 0x00000031u};

constexpr uint32_t rotl(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

void quarter_round(std::array<uint32_t, 16>& x, int a, int b, int c, int d) {
  x[a] += x[b];
  x[d] = rotl(x[d] ^ x[a], 16);
  x[c] += x[d];
  x[b] = rotl(x[b] ^ x[c], 12);
  x[a] += x[b];
  x[d] = rotl(x[d] ^ x[a], 8);
  x[c] += x[d];
  x[b] = rotl(x[b] ^ x[c], 7);
}

std::array<uint32_t, 16> initial_state(const ChaChaKey& key, uint64_t counter, uint64_t stream) {
  std::array<uint32_t, 16> s{};
  std::copy(std::begin(kSigma), std::end(kSigma), s.begin());
  std::copy(key.begin(), key.end(), s.begin() + 4);
  s[12] = static_cast<uint32_t>(counter);
  s[13] = static_cast<uint32_t>(counter >> 32);
  s[14] = static_cast<uint32_t>(stream);
  s[15] = static_cast<uint32_t>(stream >> 32);
  return s;
}

// Eight 32-bit lanes: one state word of eight blocks. GCC lowers it to whatever vector width
// the target has (two SSE2 registers on the baseline x86-64); the arithmetic is the same
// wrapping 32-bit arithmetic everywhere, so the result is too.
typedef uint32_t Lanes __attribute__((vector_size(32)));
static_assert(sizeof(Lanes) / sizeof(uint32_t) == Prf::kLanes);

// In place: a 32-byte vector passed or returned by value would change the ABI without AVX.
inline void xor_rotl(Lanes& v, const Lanes& w, int n) {
  v ^= w;
  v = (v << n) | (v >> (32 - n));
}

inline void quarter_round(Lanes& a, Lanes& b, Lanes& c, Lanes& d) {
  a += b;
  xor_rotl(d, a, 16);
  c += d;
  xor_rotl(b, c, 12);
  a += b;
  xor_rotl(d, a, 8);
  c += d;
  xor_rotl(b, c, 7);
}

// Blocks counter .. counter+7 of `stream`; block k's word w in out[w][k]. On x86-64 a second
// copy for AVX2, chosen at load time, keeps each state word in one register (1.7x faster
// than two SSE2 halves); both compute the same integers.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PTXFORGE_PRF_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PTXFORGE_PRF_CLONES
#endif
PTXFORGE_PRF_CLONES void eight_blocks(const ChaChaKey& key, uint64_t counter, uint64_t stream, int rounds, Lanes (&out)[16]) {
  Lanes in[16];
  for (int w = 0; w < 4; ++w) in[w] = Lanes{} + kSigma[w];
  for (int w = 0; w < 8; ++w) in[4 + w] = Lanes{} + key[w];
  for (size_t k = 0; k < Prf::kLanes; ++k) {
    uint64_t c = counter + k;  // wraps past 2^64 - 1, as the scalar one does
    in[12][k] = static_cast<uint32_t>(c);
    in[13][k] = static_cast<uint32_t>(c >> 32);
  }
  in[14] = Lanes{} + static_cast<uint32_t>(stream);
  in[15] = Lanes{} + static_cast<uint32_t>(stream >> 32);
  Lanes x[16];
  std::copy(std::begin(in), std::end(in), std::begin(x));
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {  // a column round
      quarter_round(x[0], x[4], x[8], x[12]);
      quarter_round(x[1], x[5], x[9], x[13]);
      quarter_round(x[2], x[6], x[10], x[14]);
      quarter_round(x[3], x[7], x[11], x[15]);
    } else {  // a diagonal round
      quarter_round(x[0], x[5], x[10], x[15]);
      quarter_round(x[1], x[6], x[11], x[12]);
      quarter_round(x[2], x[7], x[8], x[13]);
      quarter_round(x[3], x[4], x[9], x[14]);
    }
  }
  for (int w = 0; w < 16; ++w) out[w] = x[w] + in[w];
}

}  // namespace

std::array<uint32_t, 16> chacha_block(const ChaChaKey& key, uint64_t counter, uint64_t stream, int rounds) {
  const std::array<uint32_t, 16> in = initial_state(key, counter, stream);
  std::array<uint32_t, 16> x = in;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {  // column round: the RFC's first four quarter rounds of an "inner_block"
      quarter_round(x, 0, 4, 8, 12);
      quarter_round(x, 1, 5, 9, 13);
      quarter_round(x, 2, 6, 10, 14);
      quarter_round(x, 3, 7, 11, 15);
    } else {  // diagonal round: its last four
      quarter_round(x, 0, 5, 10, 15);
      quarter_round(x, 1, 6, 11, 12);
      quarter_round(x, 2, 7, 8, 13);
      quarter_round(x, 3, 4, 9, 14);
    }
  }
  for (int w = 0; w < 16; ++w) x[w] += in[w];
  return x;
}

Prf Prf::from_seed(uint64_t seed, int rounds) {
  ChaChaKey key{};
  key[0] = static_cast<uint32_t>(seed);
  key[1] = static_cast<uint32_t>(seed >> 32);
  std::copy(std::begin(kSeedLabel), std::end(kSeedLabel), key.begin() + 2);
  return Prf(key, rounds);
}

PrfBlock Prf::block(uint64_t stream, uint64_t counter) const {
  auto x = chacha_block(key_, counter, stream, rounds_);
  PrfBlock b;
  for (int w = 0; w < 8; ++w) b[w] = x[2 * w] | (static_cast<uint64_t>(x[2 * w + 1]) << 32);
  return b;
}

void Prf::blocks(uint64_t stream, uint64_t counter, size_t n, uint64_t* out) const {
  Lanes x[16];
  for (size_t done = 0; done < n; done += kLanes) {
    eight_blocks(key_, counter + done, stream, rounds_, x);
    size_t m = std::min(kLanes, n - done);
    for (size_t k = 0; k < m; ++k)
      for (int w = 0; w < 8; ++w)
        out[8 * (done + k) + w] = x[2 * w][k] | (static_cast<uint64_t>(x[2 * w + 1][k]) << 32);
  }
}

Prf Prf::derive(uint64_t stream, uint64_t counter) const {
  auto x = chacha_block(key_, counter, stream, rounds_);
  ChaChaKey key;
  std::copy(x.begin(), x.begin() + 8, key.begin());
  return Prf(key, rounds_);
}

}  // namespace ptxforge::task
