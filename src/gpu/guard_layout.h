// Where the candidate's buffers lie when they are placed with guard pages: a pure function
// from the buffer sizes and the driver's allocation granularity to offsets, kept apart from
// the driver so every size (0 bytes, 1, a granule, a granule and one, terabytes) is tested
// on the CPU.
//
// One address-space reservation holds every buffer of a case, one slot each, in order:
//
//   slot:  [ leading window ][ mapping ...................... ][ trailing window ]
//          unmapped           [ head canary ][ data ][ tail ]    unmapped
//
// - The data ENDS at the end of the mapping, rounded up to 256 bytes: its start stays
//   256-byte aligned, and a size that is not a multiple of 256 leaves a tail canary of
//   1-255 bytes inside the mapping. For a multiple of 256 there is no tail: the first byte
//   past the end is unmapped.
// - The head canary (at least 4 KiB, at most a granule more) fills the mapping before the data.
// - Both windows are unmapped, at least kGuardWindow each: any access there faults.
//
// What is caught: any read or write from the end of the data (or of its tail canary) up to
// kGuardWindow past it, and from kGuardWindow before the mapping up to the mapping's start,
// faults at once (CUDA_ERROR_ILLEGAL_ADDRESS). A write into a canary (the last <256 bytes
// past the end of an odd size, or up to a granule before the start) changes the canary and
// is reported after the launch. A READ of a canary is not caught. Accesses further than
// kGuardWindow away may land anywhere.
//
// An "open" slot (locating a fault: see gpu/locate_fault.h) maps its windows too, so that
// accesses there do not fault; its canaries then span the whole slot.
//
// Plain placement with slack (compute-sanitizer's memcheck and initcheck, which see bounds
// only of plain allocations): one allocation per buffer, its data placed as guard pages place
// it (the end, rounded up to 256 bytes, on a granularity boundary; the start 256-aligned),
// after a seed-drawn slack. A kernel that reads its pointers' alignment therefore sees the
// same under the sanitizer as under verify and the timed trials, and cannot switch a hazard
// off only there. The allocation ends at most 255 bytes past the data when the driver's
// allocation starts on a granularity boundary (as cuMemAlloc gives large blocks); otherwise
// the data moves down to the boundary below, leaving more tail slack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "util/result.h"

namespace ptxforge::gpu {

constexpr size_t kGuardWindow = size_t{32} << 20;  // unmapped before and after every mapping
constexpr size_t kGuardDataAlign = 256;            // the data's start, as cuMemAlloc gives it
constexpr size_t kGuardHeadCanary = 4096;          // at least this much canary before the data
constexpr size_t kGuardMaxBytes = size_t{1} << 46; // larger buffers are refused (64 TiB)

struct GuardSlot {
  size_t bytes = 0;        // the buffer the kernel sees
  size_t slot_offset = 0;  // every offset counts from the reservation's start
  size_t slot_bytes = 0;
  size_t map_offset = 0;   // the mapped part of the slot
  size_t map_bytes = 0;
  size_t data_offset = 0;  // the buffer's first byte
  bool open = false;       // the windows are mapped too

  size_t data_end() const { return data_offset + bytes; }
  size_t map_end() const { return map_offset + map_bytes; }
  size_t head_canary() const { return data_offset - map_offset; }  // mapped bytes before the data
  size_t tail_canary() const { return map_end() - data_end(); }    // mapped bytes after it
};

struct GuardPlan {
  size_t granularity = 0;
  size_t reserve_bytes = 0;  // the whole reservation: the sum of the slots
  std::vector<GuardSlot> slots;
};

// `bytes`: one entry per buffer, in slot order. `open`: the index of a slot whose windows
// are mapped too. Errors: a granularity that is not a power of two of at least 256 bytes,
// a buffer larger than kGuardMaxBytes, an index out of range.
Result<GuardPlan> plan_guards(const std::vector<size_t>& bytes, size_t granularity, std::optional<size_t> open = std::nullopt);

// The granularity slack placement assumes when the worker has no virtual-memory calls to ask
// (then verify itself falls back to canaries around plain allocations): Hopper's and
// Ampere's 2 MiB.
constexpr size_t kSlackDefaultGranularity = size_t{2} << 20;

struct SlackSlot {
  size_t bytes = 0;        // the buffer the kernel sees
  size_t min_head = 0;     // slack before the data: at least kGuardHeadCanary, plus a seed-drawn part
  size_t alloc_bytes = 0;  // the plain allocation: room for the data ending on a boundary after min_head
};

// Buffer `index` of a case under `seed`: the same seed, index and size give the same slot.
// Errors as plan_guards.
Result<SlackSlot> plan_slack(size_t bytes, size_t granularity, uint64_t seed, size_t index);
// The data's offset in an allocation at `base` (at least 256-aligned): the latest offset at
// which the data's 256-rounded end falls on a granularity boundary, at least min_head in;
// alloc_bytes always leaves room for it.
size_t slack_data_offset(uint64_t base, const SlackSlot& slot, size_t granularity);

}  // namespace ptxforge::gpu
