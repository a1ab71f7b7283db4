// Test support: the splitmix64 finalizer undone step by step (its xorshifts and odd
// multipliers are bijections of 64-bit words). The seed and input tests use it as the
// adversary did, to show that the chains it breaks are gone.
#pragma once

#include <cstdint>

namespace ptxforge::task::testing {

inline uint64_t odd_inverse(uint64_t a) {
  uint64_t x = a;  // Newton's iteration doubles the correct low bits each step: 1 -> 64 in 6
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}

inline uint64_t undo_xorshift(uint64_t z, int s) {
  uint64_t x = z;
  for (int k = 0; k < 64; k += s) x = z ^ (x >> s);
  return x;
}

// The inverse of mix64 (task/seeds.h).
inline uint64_t undo_mix64(uint64_t z) {
  z = undo_xorshift(z, 31) * odd_inverse(0x94D049BB133111EBull);
  z = undo_xorshift(z, 27) * odd_inverse(0xBF58476D1CE4E5B9ull);
  return undo_xorshift(z, 30);
}

}  // namespace ptxforge::task::testing
