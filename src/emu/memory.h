// The engine's memory (docs/emu.md section 4): one emulated 64-bit address space in which every
// state space has a window, so generic addresses and cvta are exact arithmetic, and every
// allocation has exact bounds, one init flag per byte and, for outputs, a last writer per
// element. .shared and .local live with their CTA and thread (emu/cta.h); this file holds
// the windows, the global and const allocations, and a thread's stack.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emu/engine.h"
#include "emu/program.h"

namespace ptxforge::emu {

// Windows of the generic address space. A .global address is its generic address; the other
// spaces' own addresses are offsets from 0 that cvta moves into their window.
inline constexpr uint64_t kGlobalBase = uint64_t{1} << 32;        // first buffer
inline constexpr uint64_t kModuleGlobalBase = uint64_t{1} << 40;  // module .global variables
inline constexpr uint64_t kSharedWin = uint64_t{1} << 44;
inline constexpr uint64_t kLocalWin = uint64_t{2} << 44;
inline constexpr uint64_t kConstWin = uint64_t{3} << 44;
inline constexpr uint64_t kParamWin = uint64_t{4} << 44;
inline constexpr uint64_t kWinSize = uint64_t{1} << 44;
// A .param address at or above this is a call frame's parameter: a thread stack offset.
inline constexpr uint64_t kFrameParamBit = uint64_t{1} << 32;
inline constexpr uint64_t kAllocGap = 4096;  // bytes between allocations, so an overrun is oob

// Which window a generic address falls in (nullopt: none: an invalid generic address).
std::optional<Space> window_of(uint64_t generic);
uint64_t window_base(Space s);

struct WriterRec {
  ThreadId who;
  uint32_t line = 0, col = 0;
  bool set = false;
};

struct Alloc {
  std::string name;
  uint64_t base = 0, size = 0;
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> init;  // 1 per written byte
  bool output = false;        // Init::unwritten: a tainted store to it is a finding
  bool read_only = false;     // .const
  bool user = false;          // made by Machine::alloc (free_buffers drops it)
  uint32_t element_bytes = 4;
  std::vector<WriterRec> writers;  // per element when tracked
  // Bytes written during launch `written_launch` (kept only when the program has ld.global.nc).
  uint32_t written_launch = 0;
  std::vector<uint8_t> written;
  // Which CTAs touched each 4-byte granule, during a launch run on several host threads only
  // (emu/cta_pool.h; null otherwise): writer CTA + 1 in the low half, reader CTA + 1 (or
  // kManyReaders) in the high half.
  std::unique_ptr<std::atomic<uint64_t>[]> owners;

  // Records that CTA `cta` reads or writes [offset, offset + bytes) (widened to whole elements
  // when last writers are tracked); false when another CTA wrote a granule of it, or read one
  // this writes: a cross-CTA conflict. Called before the bytes are touched, so two host
  // threads never touch the same granule unless both only read it.
  bool claim(uint64_t offset, uint64_t bytes, bool write, uint32_t cta);
  static constexpr uint32_t kManyReaders = 0xFFFFFFFF;
};

// Allocations of one space, by base address.
class AllocMap {
 public:
  // Places `size` bytes at the next free base (aligned to 256) or at `at` when given.
  Alloc& add(std::string name, uint64_t size, uint64_t at = 0);
  // The allocation holding [addr, addr + size), or nullptr.
  Alloc* find(uint64_t addr, uint64_t size);
  const Alloc* find(uint64_t addr, uint64_t size) const;
  // A finding's message, buffer and offset for an access no allocation holds.
  void describe_miss(uint64_t addr, uint64_t size, bool write, Finding& f) const;
  void drop_user();
  // Every allocation, by base address (the parallel launch's snapshot and granule owners).
  template <typename F>
  void each(F&& f) {
    for (auto& [base, a] : by_base_) f(a);
  }
  uint64_t total_bytes() const { return total_; }
  void set_next(uint64_t next) { next_ = next; }

 private:
  std::map<uint64_t, Alloc> by_base_;
  uint64_t next_ = kGlobalBase;
  uint64_t total_ = 0;
};

// One thread's .local and call-frame .param bytes, grown on first touch up to the limit.
struct ThreadStack {
  std::vector<uint8_t> bytes, init;
  // Makes [0, end) addressable; false past the per-thread limit.
  bool reserve(uint64_t end);
};

// "read of 4 bytes at offset 4096 of 'a' (4096 bytes)"
std::string access_text(bool write, uint64_t size, uint64_t offset, const std::string& name, uint64_t alloc_size);

}  // namespace ptxforge::emu
