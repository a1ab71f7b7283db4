#include "task/seeds.h"

#include <fmt/format.h>
#include <charconv>
#include <random>

#include "util/text.h"

namespace ptxforge::task {

namespace {
uint64_t mix(uint64_t z) { return mix64(z); }

// One odd constant per use (the digits of pi, 64 bits at a time, made odd), so that the
// streams of two uses never start from the same state for the same base.
uint64_t tag(SeedUse use) {
  constexpr uint64_t kTags[] = {0x243F6A8885A308D3ull, 0x13198A2E03707345ull, 0xA4093822299F31D1ull,
                                0x082EFA98EC4E6C89ull, 0x452821E638D01377ull, 0xBE5466CF34E90C6Dull,
                                0xC0AC29B7C97C50DDull, 0x3F84D5B5B5470917ull};
  return kTags[static_cast<uint64_t>(use) % std::size(kTags)] | 1;
}
}  // namespace

uint64_t splitmix64(uint64_t x) { return mix(x + 0x9E3779B97F4A7C15ull); }

uint64_t derive_seed(uint64_t base, SeedUse use, uint64_t a, uint64_t b) {
  return splitmix64(splitmix64(splitmix64(base ^ tag(use)) ^ a) ^ b);
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
