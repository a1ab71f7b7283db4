// Allocation maps and thread stacks: exact bounds for every access the interpreter makes, and
// the words a bounds finding is made of (which allocation, which offset).
#include "emu/memory.h"

#include <fmt/format.h>

#include "emu/limits.h"

namespace ptxforge::emu {

std::optional<Space> window_of(uint64_t g) {
  if (g >= kGlobalBase && g < kSharedWin) return Space::global;
  if (g >= kSharedWin && g < kLocalWin) return Space::shared;
  if (g >= kLocalWin && g < kConstWin) return Space::local;
  if (g >= kConstWin && g < kParamWin) return Space::const_;
  if (g >= kParamWin && g < kParamWin + kWinSize) return Space::param;
  return std::nullopt;
}

uint64_t window_base(Space s) {
  switch (s) {
    case Space::shared: return kSharedWin;
    case Space::local: return kLocalWin;
    case Space::const_: return kConstWin;
    case Space::param: return kParamWin;
    default: return 0;
  }
}

std::string access_text(bool write, uint64_t size, uint64_t offset, const std::string& name, uint64_t alloc_size) {
  return fmt::format("{} of {} bytes at offset {} of '{}' ({} bytes)", write ? "write" : "read", size, offset, name,
                     alloc_size);
}

Alloc& AllocMap::add(std::string name, uint64_t size, uint64_t at) {
  uint64_t base = at ? at : next_;
  Alloc a;
  a.name = std::move(name);
  a.base = base;
  a.size = size;
  a.bytes.assign(size, 0);
  a.init.assign(size, 1);
  next_ = std::max(next_, (base + size + kAllocGap + 255) & ~uint64_t{255});
  total_ += size;
  return by_base_[base] = std::move(a);
}

Alloc* AllocMap::find(uint64_t addr, uint64_t size) {
  return const_cast<Alloc*>(static_cast<const AllocMap*>(this)->find(addr, size));
}

const Alloc* AllocMap::find(uint64_t addr, uint64_t size) const {
  auto it = by_base_.upper_bound(addr);
  if (it == by_base_.begin()) return nullptr;
  --it;
  const Alloc& a = it->second;
  if (addr - a.base >= a.size || size > a.size - (addr - a.base)) return nullptr;
  return &a;
}

void AllocMap::describe_miss(uint64_t addr, uint64_t size, bool write, Finding& f) const {
  // The nearest allocation: the one the address starts in or follows, or the next one when the
  // address lies closer to its start (a write just before 'c' names 'c', not the buffer whose
  // end lies a gap away).
  const Alloc* near = nullptr;
  auto it = by_base_.upper_bound(addr);
  const Alloc* prev = it != by_base_.begin() ? &std::prev(it)->second : nullptr;
  const Alloc* next = it != by_base_.end() ? &it->second : nullptr;
  near = prev ? prev : next;
  if (prev && next && addr >= prev->base + prev->size && next->base - addr < addr - (prev->base + prev->size))
    near = next;
  if (!near) {
    f.message = fmt::format("{} of {} bytes at address 0x{:x}, which is in no allocation", write ? "write" : "read",
                            size, addr);
    return;
  }
  f.buffer = near->name;
  if (addr >= near->base) {
    f.offset = addr - near->base;
    f.message = access_text(write, size, f.offset, near->name, near->size);
  } else {
    // Worded as the GPU path words a guard-byte hit, so both verdicts read alike.
    f.offset = 0;
    f.message = fmt::format("{} before the start of '{}': {} bytes, {} bytes before it ('{}' has {} bytes)",
                            write ? "write" : "read", near->name, size, near->base - addr, near->name, near->size);
  }
}

void AllocMap::drop_user() {
  for (auto it = by_base_.begin(); it != by_base_.end();) {
    if (it->second.user) {
      total_ -= it->second.size;
      it = by_base_.erase(it);
    } else {
      ++it;
    }
  }
}

bool Alloc::claim(uint64_t offset, uint64_t n, bool write, uint32_t cta) {
  uint64_t lo = offset, hi = offset + n;  // [lo, hi)
  if (!writers.empty()) {  // a last-writer record is per element: the whole element is touched
    lo = lo / element_bytes * element_bytes;
    hi = (hi + element_bytes - 1) / element_bytes * element_bytes;
  }
  uint64_t me = uint64_t{cta} + 1;
  for (uint64_t g = lo / 4; g < (hi + 3) / 4 && g < (bytes.size() + 3) / 4; ++g) {
    std::atomic<uint64_t>& word = owners[g];
    uint64_t cur = word.load(std::memory_order_relaxed);
    for (;;) {
      uint64_t w = cur & 0xFFFFFFFF, r = cur >> 32;
      if (w && w != me) return false;
      uint64_t next;
      if (write) {
        if (r && r != me) return false;
        next = (r << 32) | me;
      } else {
        next = ((r == 0 || r == me ? me : uint64_t{kManyReaders}) << 32) | w;
      }
      if (next == cur) break;  // the common case on inputs: already recorded, no write
      if (word.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
    }
  }
  return true;
}

bool ThreadStack::reserve(uint64_t end) {
  if (end > limits::kMaxLocalPerThread) return false;
  if (end > bytes.size()) {
    uint64_t n = std::max<uint64_t>(end, std::min<uint64_t>(bytes.size() * 2, limits::kMaxLocalPerThread));
    bytes.resize(n, 0);
    init.resize(n, 0);
  }
  return true;
}

}  // namespace ptxforge::emu
