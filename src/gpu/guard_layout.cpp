#include "gpu/guard_layout.h"

#include <fmt/format.h>

namespace ptxforge::gpu {

namespace {
size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }
}  // namespace

Result<GuardPlan> plan_guards(const std::vector<size_t>& bytes, size_t granularity, std::optional<size_t> open) {
  if (granularity < kGuardDataAlign || (granularity & (granularity - 1)) != 0)
    return Error{fmt::format("allocation granularity {} is not a power of two of at least {} bytes", granularity, kGuardDataAlign)};
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
