// Heap tuning for commands that build and free one large tree after another (`check` over many
// modules): glibc hands freed megabytes back to the kernel and the next module faults them in
// again, zeroed, which over large modules costs about a tenth of the time. Keeping them lets
// the next tree reuse them.
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ptxforge {

inline void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: blocks below it come from the heap
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace ptxforge
