#include "task/buffers.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>
#include <fmt/format.h>

namespace ptxforge::task {

namespace {
// Counter-based: element i's value depends only on (seed, stream, i), so the buffer can be
// filled by many threads and still come out the same everywhere.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0); }

double draw(const Distribution& d, uint64_t key, size_t i) {
  uint64_t r = mix(key + 0x9E3779B97F4A7C15ull * (i + 1));
  switch (d.kind) {
    case Distribution::uniform: return d.a + (d.b - d.a) * unit(r);
    case Distribution::normal: {
      double u1 = std::max(unit(r), 1e-300), u2 = unit(mix(r ^ 0xD1B54A32D192ED03ull));
      return d.a + d.b * std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
    case Distribution::integers: {
      uint64_t span = static_cast<uint64_t>(d.b - d.a) + 1;
      return d.a + static_cast<double>(r % span);
    }
    case Distribution::zeros: return 0;
    case Distribution::ones: return 1;
    case Distribution::iota: return static_cast<double>(i);
  }
  return 0;
}
}  // namespace

void fill_input(void* data, DType t, size_t count, const Distribution& d, uint64_t seed, uint64_t stream) {
  const uint64_t key = mix(seed * 0x100000001B3ull + stream * 0xA24BAED4963EE407ull + 1);
  auto fill = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) store_element(data, t, i, draw(d, key, i));
  };
  size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 16);
  if (count < (size_t{1} << 20) || threads == 1) {
    fill(0, count);
    return;
  }
  std::vector<std::thread> pool;
  size_t chunk = (count + threads - 1) / threads;
  for (size_t k = 0; k < threads; ++k) pool.emplace_back(fill, std::min(count, k * chunk), std::min(count, (k + 1) * chunk));
  for (auto& th : pool) th.join();
}

void fill_poison(void* data, size_t bytes) {
  auto* p = static_cast<uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(kPoisonWord >> (8 * (i % 4)));
}

bool is_poisoned(const void* data, size_t elem_size, size_t i) {
  auto* p = static_cast<const uint8_t*>(data);
  for (size_t b = 0; b < elem_size; ++b) {
    size_t off = i * elem_size + b;
    if (p[off] != static_cast<uint8_t>(kPoisonWord >> (8 * (off % 4)))) return false;
  }
  return true;
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

std::optional<GuardViolation> check_canaries(const uint8_t* head, size_t head_len, const uint8_t* tail, size_t tail_len,
                                             size_t bytes) {
  std::optional<GuardViolation> v;
  for (size_t i = 0; i < head_len; ++i) {
    if (head[i] == kCanaryByte) continue;
    if (!v) v = GuardViolation{static_cast<int64_t>(i) - static_cast<int64_t>(head_len), 0};
    ++v->bytes_changed;
  }
  for (size_t i = 0; i < tail_len; ++i) {
    if (tail[i] == kCanaryByte) continue;
    if (!v) v = GuardViolation{static_cast<int64_t>(bytes + i), 0};
    ++v->bytes_changed;
  }
  return v;
}

std::optional<GuardViolation> check_guards(const uint8_t* head, const uint8_t* tail, size_t bytes) {
  return check_canaries(head, GuardedLayout::kGuard, tail, GuardedLayout::kGuard, bytes);
}

std::string GuardViolation::describe(const std::string& buffer, size_t elem_size) const {
  if (first_offset < 0)
    return fmt::format("write before the start of '{}': {} guard bytes changed, the first {} bytes before it", buffer,
                       bytes_changed, -first_offset);
  return fmt::format("write past the end of '{}': {} guard bytes changed, the first at byte offset {} (element {})", buffer,
                     bytes_changed, first_offset, static_cast<size_t>(first_offset) / std::max<size_t>(elem_size, 1));
}

}  // namespace ptxforge::task
