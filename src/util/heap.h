// Heap tuning for commands that build and free one large tree after another (`check` over many
// modules): glibc hands freed megabytes back to the kernel and the next module faults them in
// again, zeroed, which over large modules costs about a tenth of the time. Keeping them lets
// the next tree reuse them.
//
// The first tree still faults its pages in, one 4 KB page at a time: an 11 MB module's tree
// and text touch some 35,000 pages, and on a virtual machine a fault costs microseconds (they
// were over half of such a module's time). So the heap is first grown by address space alone
// and marked for transparent huge pages, where the kernel offers them on request (its "madvise"
// setting, a common default): the tree is then faulted in 2 MB at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace ptxforge {

inline void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: blocks below it come from the heap
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  // Grow the heap by a block under the mmap threshold plus a top pad: untouched, so it costs
  // address space only. Freed, it becomes malloc's free top, below the trim threshold.
  constexpr size_t kHuge = size_t{2} << 20, kBlock = size_t{31} << 20, kPad = size_t{224} << 20;
  void* before = sbrk(0);
  mallopt(M_TOP_PAD, static_cast<int>(kPad));
  void* block = malloc(kBlock);
  void* after = sbrk(0);
  mallopt(M_TOP_PAD, 128 << 10);  // glibc's default again
  // The block starts in the old top (below the old break) and ends in the new room; where the
  // heap could not grow in place, glibc mapped it elsewhere and nothing is advised.
  auto* b = static_cast<char*>(block);
  if (b && after > before && b < static_cast<char*>(after) && b + kBlock <= static_cast<char*>(after)) {
    uintptr_t lo = (reinterpret_cast<uintptr_t>(block) + kHuge - 1) & ~(kHuge - 1);
    uintptr_t hi = reinterpret_cast<uintptr_t>(after) & ~(kHuge - 1);
    if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // advice: failure is harmless
  }
  free(block);
#endif
}

}  // namespace ptxforge
