#include "task/seeds.h"

#include <fmt/format.h>
#include <charconv>
#include <random>

#include "task/prf.h"
#include "util/text.h"

namespace ptxforge::task {

uint64_t splitmix64(uint64_t x) { return mix64(x + 0x9E3779B97F4A7C15ull); }

uint64_t derive_seed(uint64_t base, SeedUse use, uint64_t a, uint64_t b) {
  // Two PRF calls: the use's key from the base's, then the seed from the use's key. A use
  // learns nothing of another's key, and a seed nothing of its use's key.
  const Prf use_key = Prf::from_seed(base).derive(static_cast<uint64_t>(SeedStream::derive), static_cast<uint64_t>(use));
  return use_key.block(a, b)[0];
}

uint64_t size_set_key(std::string_view size_set) { return fnv1a(size_set); }

uint64_t fresh_seed() {
  std::random_device rd;
  uint64_t hi = rd(), lo = rd();  // random_device gives 32 bits a call
  return (hi << 32) ^ lo;
}

Result<uint64_t> parse_seed(std::string_view text) {
  auto bad = [&] {
    return Error{fmt::format(
        "--seed takes a whole number from 0 to 18446744073709551615 (decimal, or hex with 0x), not '{}'", text)};
  };
  std::string_view digits = text;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = 16;
  }
  if (digits.empty()) return bad();
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return bad();  // out of range, a sign, a fraction, junk
  return v;
}

std::string seed_text(uint64_t seed) { return std::to_string(seed); }

}  // namespace ptxforge::task
