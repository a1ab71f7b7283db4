#include "task/buffers.h"

#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace ptxforge::task {

namespace {
// splitmix64: tiny, fast and good enough to draw test inputs.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};
}  // namespace

void fill_input(void* data, DType t, size_t count, const Distribution& d, uint64_t seed, uint64_t stream) {
  Rng rng{seed * 0x100000001B3ull + stream * 0x9E3779B97F4A7C15ull + 1};
  for (size_t i = 0; i < count; ++i) {
    double v = 0;
    switch (d.kind) {
      case Distribution::uniform: v = d.a + (d.b - d.a) * rng.uniform01(); break;
      case Distribution::normal: {
        double u1 = std::max(rng.uniform01(), 1e-300), u2 = rng.uniform01();
        v = d.a + d.b * std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        break;
      }
      case Distribution::integers: {
        uint64_t span = static_cast<uint64_t>(d.b - d.a) + 1;
        v = d.a + static_cast<double>(rng.next() % span);
        break;
      }
      case Distribution::zeros: v = 0; break;
      case Distribution::ones: v = 1; break;
      case Distribution::iota: v = static_cast<double>(i); break;
    }
    store_element(data, t, i, v);
  }
}

void fill_poison(void* data, size_t bytes) {
  auto* p = static_cast<uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(kPoisonWord >> (8 * (i % 4)));
}

size_t count_poisoned(const void* data, size_t elem_size, size_t count, size_t* first) {
  auto* p = static_cast<const uint8_t*>(data);
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    bool poisoned = true;
    for (size_t b = 0; b < elem_size && poisoned; ++b) {
      size_t off = i * elem_size + b;
      poisoned = p[off] == static_cast<uint8_t>(kPoisonWord >> (8 * (off % 4)));
    }
    if (poisoned) {
      if (n == 0 && first) *first = i;
      ++n;
    }
  }
  return n;
}

std::optional<GuardViolation> check_guards(const uint8_t* head, const uint8_t* tail, size_t bytes) {
  (void)bytes;
  std::optional<GuardViolation> v;
  const size_t g = GuardedLayout::kGuard;
  for (size_t i = 0; i < g; ++i) {
    if (head[i] == kCanaryByte) continue;
    if (!v) v = GuardViolation{static_cast<int64_t>(i) - static_cast<int64_t>(g), 0};
    ++v->bytes_changed;
  }
  for (size_t i = 0; i < g; ++i) {
    if (tail[i] == kCanaryByte) continue;
    if (!v) v = GuardViolation{static_cast<int64_t>(bytes + i), 0};
    ++v->bytes_changed;
  }
  return v;
}

std::string GuardViolation::describe(const std::string& buffer, size_t elem_size) const {
  if (first_offset < 0)
    return fmt::format("write before the start of '{}': {} guard bytes changed, the first {} bytes before it", buffer,
                       bytes_changed, -first_offset);
  return fmt::format("write past the end of '{}': {} guard bytes changed, the first at byte offset {} (element {})", buffer,
                     bytes_changed, first_offset, static_cast<size_t>(first_offset) / std::max<size_t>(elem_size, 1));
}

}  // namespace ptxforge::task
