// Host-side logic of the harness's buffers, kept apart from the GPU so it is tested in CI:
// inputs drawn from a task's distribution by a keyed PRF of the seed, the poison pattern written into outputs
// before a launch, and the canary guard regions around every buffer that reveal an
// out-of-bounds write and its offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "task/distribution.h"
#include "task/dtype.h"
#include "task/prf.h"
#include "task/task_spec.h"

namespace ptxforge::task {

// Host copies of inputs: a vector whose resize leaves the bytes uninitialised. fill_input
// writes every byte from many threads, so the pages of a 256 MB input are first touched in
// parallel instead of being zeroed by one thread first (which cost more than drawing them).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialised: left as it is
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using HostBytes = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

// The PRF of one input buffer: K(seed).derive(SeedStream::input, stream) (task/seeds.h).
// Element i takes its 64 random bits from word i % 8 of block i / 8 of its stream 0.
Prf input_prf(uint64_t seed, uint64_t stream);
// Deterministic in (seed, stream): the same task, size and seed give the same bytes anywhere,
// on any number of threads. Values outside the dtype's range are clamped to it (a planted
// extreme at the limit). The values are a keyed PRF of the seed: they do not invert to it.
void fill_input(void* data, DType t, size_t count, const Distribution& d, uint64_t seed, uint64_t stream);

// A NaN in f32/f64 and an unlikely value in every integer type; written byte-wise.
constexpr uint32_t kPoisonWord = 0xFFBADBADu;
void fill_poison(void* data, size_t bytes);
// Elements whose bytes still equal the poison pattern: outputs the kernel never wrote.
size_t count_poisoned(const void* data, size_t elem_size, size_t count, size_t* first = nullptr);
// Whether element i of a buffer still holds the poison pattern.
bool is_poisoned(const void* data, size_t elem_size, size_t i);

// A device allocation: [guard][data padded to 256 B][guard]. The data starts 256-aligned.
struct GuardedLayout {
  size_t bytes = 0;   // the buffer the kernel sees
  static constexpr size_t kGuard = 4096;
  size_t data_offset() const { return kGuard; }
  size_t tail_offset() const { return kGuard + bytes; }  // the tail guard starts right at the end
  size_t total() const { return kGuard + bytes + kGuard; }
};
constexpr uint8_t kCanaryByte = 0xA5;

// Where a guard region was changed: a negative offset is before the buffer, an offset >=
// bytes is past its end (offset counted from the buffer's first byte).
struct GuardViolation {
  int64_t first_offset = 0;
  size_t bytes_changed = 0;
  std::string describe(const std::string& buffer, size_t elem_size) const;
};
// `head` and `tail` are copies of the guard regions (kGuard bytes each).
std::optional<GuardViolation> check_guards(const uint8_t* head, const uint8_t* tail, size_t bytes);
// The same for canary regions of any length: `head_len` bytes that end right before the
// buffer and `tail_len` bytes that start right after it (guard pages leave such regions in
// the slack of their mapping: gpu/guard_layout.h).
std::optional<GuardViolation> check_canaries(const uint8_t* head, size_t head_len, const uint8_t* tail, size_t tail_len,
                                             size_t bytes);

}  // namespace ptxforge::task
