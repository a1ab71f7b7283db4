// Where every input of a run comes from: one 64-bit base seed per `ptxforge run` and per
// compile round, drawn fresh (std::random_device) unless `--seed N` pins it, and every other
// seed derived from it. Fresh seeds keep a kernel from learning the inputs it will be
// checked and timed on (a table of answers for fixed seeds, a kernel that only computes on
// the timing seed); the derivation keeps a run reproducible from its recorded base seed.
//
// The base seed is the run's secret. Every step from it is a keyed pseudo-random function
// (ChaCha12, task/prf.h), so nothing drawn from it inverts to it: not an input value (the
// input of a seed is the PRF under that seed's key), and not a derived seed, which is itself
// a PRF output under the base seed's key. The derivation (docs/design.md, "Seeds"):
//   K(s)                    = Prf::from_seed(s)                  (s in key words 0, 1)
//   derive(base, use, a, b) = word 0 of K(base).derive(SeedStream::derive, use).block(a, b)
// with `a` usually the size set's name hash (fnv1a) and `b` an index (verify seed 1..N,
// timing input set 0..S-1, round, ...). Inputs use SeedStream::input (task/buffers.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace ptxforge::task {

// What a derived seed is for; each use has its own PRF key, so no two uses share inputs.
enum class SeedUse : uint64_t {
  verify = 1,  // a = size set, b = seed index 1..N
  trivial,     // a = size set (the trivial-output check's inputs)
  reverify,    // a = size set (the launch with fresh buffers after timing)
  timing,      // a = size set, b = input set index in the timing rotation
  rotation,    // a = size set: the order in which the timed trials visit the input sets
  trial_pick,  // a = size set: which timed trials are checked
  round,       // a = sample, b = round: a compile round's base seed under --seed
  timing_plan, // a = size set, b = 0: how many input sets; b = 1: the trial cap's jitter
};

// The streams of a seed's key K(s), one per purpose, so that a derived seed and an input of
// the same seed never come from the same PRF key.
enum class SeedStream : uint64_t {
  derive = 1,  // K(s).derive(derive, use): the key of derive_seed's `use`
  input = 2,   // K(s).derive(input, stream): the key of fill_input's buffer `stream`
};

// The splitmix64 finalizer: a bijection of 64-bit values that mixes every bit into every other.
// Invertible, so never on a path from a secret to something a kernel sees; it orders things
// that stay on the host (the timing rotation's shuffle).
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t splitmix64(uint64_t x);
// A seed for `use` from the base seed: a PRF output, so it does not invert to `base` or to
// the seed of another use, size set or index.
uint64_t derive_seed(uint64_t base, SeedUse use, uint64_t a = 0, uint64_t b = 0);
// The `a` of a derivation for a size set: its name's FNV-1a hash.
uint64_t size_set_key(std::string_view size_set);

// A fresh base seed: 64 bits from std::random_device.
uint64_t fresh_seed();

// `--seed N`: decimal or 0x-prefixed hex, 0 .. 2^64-1; anything else is an error that says so.
Result<uint64_t> parse_seed(std::string_view text);
// JSON carries seeds as decimal strings: many JSON readers keep only 53 bits of a number.
std::string seed_text(uint64_t seed);

}  // namespace ptxforge::task
