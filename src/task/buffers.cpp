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
constexpr uint64_t kStep = 0x9E3779B97F4A7C15ull;
constexpr size_t kBlock = 256;

// Values for elements [first, first + n) into v. The distribution's switch is taken once per
// block, not per element: a timing run draws several sets of up to 2^26 elements per size,
// and every compile round draws fresh ones, so this loop is on the path of every check.
void draw_block(const Distribution& d, uint64_t key, size_t first, size_t n, double* v) {
  switch (d.kind) {
    case Distribution::uniform:
      for (size_t k = 0; k < n; ++k) {
        double u = static_cast<double>(mix(key + kStep * (first + k + 1)) >> 11) * 0x1p-53;
        v[k] = d.a + (d.b - d.a) * u;
      }
      return;
    case Distribution::normal:
      // Box-Muller in float: elements 2j and 2j+1 share one draw (the cosine and the sine).
      for (size_t k = 0; k < n;) {
        size_t i = first + k;
        uint64_t r = mix(key + kStep * (i / 2 + 1));
        float u1 = (static_cast<float>(r >> 40) + 0.5f) * 0x1p-24f;  // (0, 1): never log(0)
        float u2 = static_cast<float>(r & 0xFFFFFF) * 0x1p-24f;
        float radius = std::sqrt(-2.0f * std::log(u1));
        float angle = 6.2831853f * u2;
        if (i % 2 == 0) {
          v[k++] = d.a + d.b * static_cast<double>(radius * std::cos(angle));
          if (k < n) v[k++] = d.a + d.b * static_cast<double>(radius * std::sin(angle));
        } else {
          v[k++] = d.a + d.b * static_cast<double>(radius * std::sin(angle));
        }
      }
      return;
    case Distribution::integers: {
      // Lemire's multiply-shift instead of a 64-bit modulo: a + floor(r * span / 2^64).
      auto span = static_cast<unsigned __int128>(static_cast<uint64_t>(d.b - d.a) + 1);
      for (size_t k = 0; k < n; ++k) {
        uint64_t r = mix(key + kStep * (first + k + 1));
        v[k] = d.a + static_cast<double>(static_cast<uint64_t>((r * span) >> 64));
      }
      return;
    }
    case Distribution::zeros: std::fill(v, v + n, 0.0); return;
    case Distribution::ones: std::fill(v, v + n, 1.0); return;
    case Distribution::iota:
      for (size_t k = 0; k < n; ++k) v[k] = static_cast<double>(first + k);
      return;
  }
}

template <typename T, typename Convert>
void store_block(void* data, size_t first, size_t n, const double* v, Convert convert) {
  auto* out = static_cast<uint8_t*>(data) + first * sizeof(T);
  for (size_t k = 0; k < n; ++k) {
    T x = convert(v[k]);
    std::memcpy(out + k * sizeof(T), &x, sizeof(T));
  }
}

void store_block(void* data, DType t, size_t first, size_t n, const double* v) {
  switch (t) {
    case DType::f16:
      return store_block<uint16_t>(data, first, n, v, [](double x) { return float_to_half(static_cast<float>(x)); });
    case DType::bf16:
      return store_block<uint16_t>(data, first, n, v, [](double x) { return float_to_bf16(static_cast<float>(x)); });
    case DType::f32: return store_block<float>(data, first, n, v, [](double x) { return static_cast<float>(x); });
    case DType::f64: return store_block<double>(data, first, n, v, [](double x) { return x; });
    case DType::i8: return store_block<int8_t>(data, first, n, v, [](double x) { return static_cast<int8_t>(x); });
    case DType::u8: return store_block<uint8_t>(data, first, n, v, [](double x) { return static_cast<uint8_t>(x); });
    case DType::i16: return store_block<int16_t>(data, first, n, v, [](double x) { return static_cast<int16_t>(x); });
    case DType::u16: return store_block<uint16_t>(data, first, n, v, [](double x) { return static_cast<uint16_t>(x); });
    case DType::i32: return store_block<int32_t>(data, first, n, v, [](double x) { return static_cast<int32_t>(x); });
    case DType::u32: return store_block<uint32_t>(data, first, n, v, [](double x) { return static_cast<uint32_t>(x); });
    case DType::i64: return store_block<int64_t>(data, first, n, v, [](double x) { return static_cast<int64_t>(x); });
    case DType::u64: return store_block<uint64_t>(data, first, n, v, [](double x) { return static_cast<uint64_t>(x); });
  }
}
}  // namespace

void fill_input(void* data, DType t, size_t count, const Distribution& d, uint64_t seed, uint64_t stream) {
  const uint64_t key = mix(seed * 0x100000001B3ull + stream * 0xA24BAED4963EE407ull + 1);
  auto fill = [&](size_t begin, size_t end) {
    double v[kBlock];
    for (size_t b = begin; b < end; b += kBlock) {
      size_t n = std::min(kBlock, end - b);
      draw_block(d, key, b, n, v);
      store_block(data, t, b, n, v);
    }
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
