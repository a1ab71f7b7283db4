// Whether this binary was built with AddressSanitizer (scripts/test's sanitized build).
// AddressSanitizer reserves terabytes of shadow address space at start, so a process of
// ours that lowers its own RLIMIT_AS (or is started under one) dies before main with
// "Failed to mmap". Code that limits the address space of a process running this binary
// leaves that limit off when this is true; its other limits (CPU, wall time, files) stay.
#pragma once

namespace ptxforge {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace ptxforge
