#include "gpu/guard_layout.h"

#include <fmt/format.h>

namespace ptxforge::gpu {

namespace {
size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

Status check_granularity(size_t granularity) {
  if (granularity < kGuardDataAlign || (granularity & (granularity - 1)) != 0)
    return Error{fmt::format("allocation granularity {} is not a power of two of at least {} bytes", granularity, kGuardDataAlign)};
  return ok_status();
}

// splitmix64's finaliser: every input bit moves every output bit, so neighbouring indices and
// seeds give unrelated slack.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

Result<SlackSlot> plan_slack(size_t bytes, size_t granularity, uint64_t seed, size_t index) {
  if (auto s = check_granularity(granularity); !s) return s.error();
  if (bytes > kGuardMaxBytes)
    return Error{fmt::format("a buffer of {} bytes is larger than the sanitizer's placement allows ({} bytes)", bytes, kGuardMaxBytes)};
  SlackSlot s;
  s.bytes = bytes;
  const uint64_t draw = mix(mix(seed ^ 0x5A4C41434Bull) + index * 0x100000001B3ull + bytes);
  s.min_head = kGuardHeadCanary + static_cast<size_t>(draw % (granularity / kGuardDataAlign)) * kGuardDataAlign;
  // One granularity more than the data and the head need: wherever the allocation starts,
  // a boundary falls in its last granule with room before it.
  s.alloc_bytes = round_up(round_up(bytes, kGuardDataAlign) + s.min_head, granularity) + granularity;
  return s;
}

size_t slack_data_offset(uint64_t base, const SlackSlot& slot, size_t granularity) {
  const uint64_t end = (base + slot.alloc_bytes) / granularity * granularity;  // the last boundary inside
  return static_cast<size_t>(end - round_up(slot.bytes, kGuardDataAlign) - base);
}

Result<GuardPlan> plan_guards(const std::vector<size_t>& bytes, size_t granularity, std::optional<size_t> open) {
  if (auto s = check_granularity(granularity); !s) return s.error();
  if (open && *open >= bytes.size()) return Error{fmt::format("no buffer {} to open (there are {})", *open, bytes.size())};
  GuardPlan plan;
  plan.granularity = granularity;
  const size_t window = round_up(kGuardWindow, granularity);
  size_t at = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] > kGuardMaxBytes)
      return Error{fmt::format("a buffer of {} bytes is larger than guard pages allow ({} bytes)", bytes[i], kGuardMaxBytes)};
    GuardSlot s;
    s.bytes = bytes[i];
    size_t padded = round_up(bytes[i], kGuardDataAlign);
    size_t mapped = round_up(padded + kGuardHeadCanary, granularity);
    s.slot_offset = at;
    s.slot_bytes = window + mapped + window;
    s.data_offset = at + window + mapped - padded;
    s.open = open == i;
    s.map_offset = s.open ? at : at + window;
    s.map_bytes = s.open ? s.slot_bytes : mapped;
    at += s.slot_bytes;
    plan.slots.push_back(s);
  }
  plan.reserve_bytes = at;
  return plan;
}

}  // namespace ptxforge::gpu
