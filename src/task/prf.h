// A keyed pseudo-random function, so that nothing a kernel sees inverts to the run's secret.
// Inputs, and every seed derived from the run's base seed, come from it: a kernel that reads
// its inputs learns values of the function, never its key, and so cannot work out the other
// input sets of the run, the timing rotation or anything else drawn from the same base seed.
//
// The function is the ChaCha block function (RFC 8439, section 2.3), written here from the
// RFC's description, with D. J. Bernstein's original layout of the last four state words: a
// 64-bit block counter (words 12, 13) and a 64-bit stream number (words 14, 15) instead of
// the RFC's 32-bit counter and 96-bit nonce. With the counter below 2^32 and the stream
// number equal to the top 64 bits of a nonce whose first word is zero, both agree; the RFC's
// test vectors follow from the mapping in prf_test.cpp.
//
// The round count is a parameter. Production uses 12 (kRounds): the best published attacks
// reach 7 of ChaCha's rounds, 12 keeps a wide margin, and it costs 60% of 20 (docs/design.md,
// "Seeds", has the measurement).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ptxforge::task {

using ChaChaKey = std::array<uint32_t, 8>;  // 256 bits, as eight little-endian words
// One 64-byte block as eight 64-bit words: word w is bytes 8w .. 8w+7 of the serialized
// block read little-endian, so the words are the RFC's keystream bytes in order.
using PrfBlock = std::array<uint64_t, 8>;

// The ChaCha state after `rounds` rounds (alternately column and diagonal rounds, 20 in the
// RFC) plus the input state: the RFC's block function as sixteen words. Any `rounds` is
// accepted; 0 or fewer gives twice the input state.
std::array<uint32_t, 16> chacha_block(const ChaChaKey& key, uint64_t counter, uint64_t stream, int rounds);

class Prf {
 public:
  static constexpr int kRounds = 12;
  // The most blocks `blocks` computes side by side (lane-parallel, so that the compiler keeps
  // them in vector registers); longer runs are cut into groups of this many.
  static constexpr size_t kLanes = 8;

  explicit Prf(const ChaChaKey& key, int rounds = kRounds) : key_(key), rounds_(rounds) {}
  // The key of a 64-bit seed: its two halves in words 0 and 1, a fixed domain label in words
  // 2 .. 7. The key is as secret as the seed (64 bits of it) and no more.
  static Prf from_seed(uint64_t seed, int rounds = kRounds);

  // Block `counter` of stream `stream`.
  PrfBlock block(uint64_t stream, uint64_t counter) const;
  // Blocks counter .. counter+n-1 of `stream`, written to out[0 .. 8n-1], word w of block k
  // at out[8k + w]. Exactly the words `block` gives, faster.
  void blocks(uint64_t stream, uint64_t counter, size_t n, uint64_t* out) const;
  // A PRF under an independent key: the first 32 bytes of block(stream, counter). Separates
  // uses of one seed (a derived key reveals nothing about this one or another derived key).
  Prf derive(uint64_t stream, uint64_t counter) const;

  const ChaChaKey& key() const { return key_; }
  int rounds() const { return rounds_; }

 private:
  ChaChaKey key_;
  int rounds_;
};

}  // namespace ptxforge::task
