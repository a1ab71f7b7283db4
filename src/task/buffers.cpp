#include "task/buffers.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>
#include <fmt/format.h>

#include "task/seeds.h"

namespace ptxforge::task {

namespace {
// Counter-based: element i's value depends only on (seed, stream, i), so the buffer can be
// filled by many threads and still come out the same everywhere. Its 64 random bits are
// word i % 8 of block i / 8 of the buffer's PRF (input_prf), so one ChaCha block serves 8
// elements.
constexpr uint64_t kElementStream = 0;  // the buffer PRF's stream of element values
constexpr uint64_t kPlaceStream = 1;    // its stream of per-buffer draws (where to plant)
double unit(uint64_t bits) { return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0); }

// The unstructured draw of a base form.
double draw(const Distribution& d, DType t, uint64_t r, size_t i) {
  switch (d.kind) {
    case Distribution::uniform: return d.a + (d.b - d.a) * unit(r);
    case Distribution::normal: return base_quantile(d, t, unit(r));  // a rational function for most draws: no log or cos
    case Distribution::integers: {
      uint64_t span = static_cast<uint64_t>(d.b - d.a) + 1;
      return d.a + static_cast<double>(r % span);
    }
    case Distribution::zeros: return 0;
    case Distribution::ones: return 1;
    case Distribution::iota: return static_cast<double>(i);
    case Distribution::huge:
    case Distribution::tiny: return base_quantile(d, t, unit(r));
  }
  return 0;
}

// `huge` over [lo, hi] with random signs, its limits worked out once per buffer.
struct HugeBand {
  double lo = 0, hi = 0;
  bool has_sign = true;
  double at(double u) const {
    if (!has_sign) return lo + (hi - lo) * u;
    return u < 0.5 ? -(lo + (hi - lo) * (1 - 2 * u)) : lo + (hi - lo) * (2 * u - 1);
  }
};

// Everything about one buffer's generation that does not depend on the element.
struct Plan {
  const Distribution& d;
  DType t;
  size_t count;
  size_t plant_at = SIZE_MAX;
  double planted = 0;
  HugeBand huge;

  Plan(const Distribution& dist, DType type, size_t n, const Prf& prf) : d(dist), t(type), count(n) {
    if (d.kind == Distribution::huge) {
      // The same band base_quantile gives, without its per-element type lookups.
      huge.has_sign = is_signed(t);
      huge.lo = is_float(t) ? dtype_max(t) / 4 : std::floor(dtype_max(t) / 4);
      huge.hi = is_float(t) ? dtype_max(t) / 2 : std::floor(dtype_max(t) / 2);
    }
    if (d.plant == Distribution::Plant::none || n == 0) return;
    switch (d.where) {
      case Distribution::Where::start: plant_at = 0; break;
      case Distribution::Where::middle: plant_at = n / 2; break;
      case Distribution::Where::end: plant_at = n - 1; break;
      case Distribution::Where::random: plant_at = prf.block(kPlaceStream, 0)[0] % n; break;
    }
    bool iota = d.kind == Distribution::iota;
    double sup = iota ? static_cast<double>(n - 1) : base_sup(d, t);
    double inf = iota ? 0.0 : base_inf(d, t);
    double span = std::max(sup - inf, 1.0);
    // Beyond every other value wherever the dtype leaves room; at its limit otherwise.
    planted = d.plant == Distribution::Plant::max ? std::min(sup + span, dtype_max(t)) : std::max(inf - span, dtype_lowest(t));
  }

  // Where element i falls in [0, 1) for a sorted or reversed run: one jittered sample per
  // stratum, so the values never decrease (or never increase) and still vary with the seed.
  double stratum(size_t i, uint64_t r) const {
    size_t at = d.order == Distribution::Order::reversed ? count - 1 - i : i;
    return (static_cast<double>(at) + unit(r)) / static_cast<double>(count);
  }

  double quantile(double u) const { return d.kind == Distribution::huge ? huge.at(u) : base_quantile(d, t, u); }

  // Element i's value from its 64 random bits r.
  double value(size_t i, uint64_t r) const {
    if (i == plant_at) return planted;
    if (d.kind == Distribution::iota)
      return static_cast<double>(d.order == Distribution::Order::reversed ? count - 1 - i : i);
    if (d.ties) {
      uint64_t j = d.order == Distribution::Order::none
                       ? r % d.ties
                       : std::min<uint64_t>(static_cast<uint64_t>(stratum(i, r) * static_cast<double>(d.ties)), d.ties - 1);
      // K evenly spaced quantiles of the base: K distinct values for any base with room for them.
      return quantile((static_cast<double>(j) + 0.5) / static_cast<double>(d.ties));
    }
    if (d.order != Distribution::Order::none) return quantile(stratum(i, r));
    if (d.kind == Distribution::huge) return huge.at(unit(r));
    return draw(d, t, r, i);
  }
};
}  // namespace

Prf input_prf(uint64_t seed, uint64_t stream) {
  return Prf::from_seed(seed).derive(static_cast<uint64_t>(SeedStream::input), stream);
}

void fill_input(void* data, DType t, size_t count, const Distribution& d, uint64_t seed, uint64_t stream) {
  const Prf prf = input_prf(seed, stream);
  const Plan plan(d, t, count, prf);
  // Elements [begin, end): whole groups of Prf::kLanes blocks at a time, each element from
  // its own block and word however the range starts or ends.
  // zeros, ones and iota are the same whatever the draw: no blocks for them.
  const bool drawn = d.kind != Distribution::zeros && d.kind != Distribution::ones && d.kind != Distribution::iota;
  auto fill = [&](size_t begin, size_t end) {
    constexpr size_t kGroup = 8 * Prf::kLanes;  // elements per group of blocks
    uint64_t r[kGroup] = {};
    for (size_t g = begin / kGroup * kGroup; g < end; g += kGroup) {
      const size_t lo = std::max(begin, g), hi = std::min(end, g + kGroup);
      if (drawn) prf.blocks(kElementStream, g / 8, (hi - g + 7) / 8, r);
      if (t == DType::f32) {  // the common case, stored without the per-element type switch
        float* out = static_cast<float*>(data);
        for (size_t i = lo; i < hi; ++i) out[i] = static_cast<float>(plan.value(i, r[i - g]));
      } else {
        for (size_t i = lo; i < hi; ++i) store_element(data, t, i, plan.value(i, r[i - g]));
      }
    }
  };
  size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 16);
  if (count < (size_t{1} << 20) || threads == 1) {
    fill(0, count);
    return;
  }
  std::vector<std::thread> pool;
  // Chunks on group boundaries, so that no group of blocks is drawn twice.
  const size_t group = 8 * Prf::kLanes;
  size_t chunk = ((count + threads - 1) / threads + group - 1) / group * group;
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
