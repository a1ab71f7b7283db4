// The CPU engine's limits (docs/emu.md section 8): a hostile kernel must neither hang nor exhaust
// the host, so every resource the engine allocates on a kernel's behalf has a ceiling here, and
// crossing one is a Finding (budget or limit), never a crash.
#pragma once

#include <cstdint>

namespace ptxforge::emu::limits {

inline constexpr uint64_t kMaxThreadsPerLaunch = uint64_t{1} << 26;
inline constexpr uint64_t kMaxCtasPerLaunch = uint64_t{1} << 31;
inline constexpr uint32_t kMaxThreadsPerCta = 1024;
inline constexpr uint64_t kMaxAllocatedBytes = uint64_t{1} << 30;  // emulated allocations per machine
inline constexpr uint32_t kMaxSharedPerCta = 227 * 1024;
inline constexpr uint32_t kMaxLocalPerThread = 512 * 1024;  // .local and call frames' .param
inline constexpr uint32_t kMaxKernelParamBytes = 32764;      // an entry's .param list, as on sm_70+ (PTX 8.1)
inline constexpr uint32_t kMaxCallDepth = 1024;
// A lane group issued this often while another group of its warp waits yields to it, and a warp
// runs at most this many issues before the next warp of its CTA gets a turn (section 3).
inline constexpr uint32_t kQuantum = 4096;
// CTAs of a launch resident at once on a host thread, rotated round by round (section 3). CTAs
// are admitted in linear-id order, so one waiting on an EARLIER CTA always finds it resident or
// finished; the count bounds the memory of a launch at 8 CTAs' shared, stacks and frames.
inline constexpr uint32_t kResidentCtas = 8;
// A launch runs its CTAs on several host threads (emu/cta_pool.h) only while the machine's
// global allocations stay under this: the parallel run keeps a copy of them and two owner words
// per 4 bytes, which must not push the worker past its address-space cap.
inline constexpr uint64_t kMaxParallelBytes = uint64_t{256} << 20;
// %globaltimer: synthetic nanoseconds, this many per issue of the CTA since its start. A slow
// clock on purpose: a kernel that waits a millisecond (a spin on %globaltimer) waits a thousand
// issues, not a million, and the time is deterministic and monotonic, never wall time.
inline constexpr uint64_t kGlobaltimerNsPerIssue = 1000;
// Lowering: registers per function (slots x 32 lanes x 8 bytes per frame) and instructions.
inline constexpr uint32_t kMaxRegisterSlots = 1u << 16;
inline constexpr uint32_t kMaxInstructions = 1u << 22;
// A call's frame setup (its registers zeroed, its .local bytes marked never written) is charged
// to the lane-instruction budget at one lane-instruction per this many bytes, about what a
// lane-instruction costs: a loop of calls into a huge frame ends as `budget` as soon as any loop.
inline constexpr uint64_t kFrameBytesPerLaneInstruction = 64;
// Register storage of one CTA's live frames (8 bytes x 32 lanes per slot per frame): deep
// recursion through a function with many registers stops here, not in the host's memory.
inline constexpr uint64_t kMaxFrameBytesPerCta = uint64_t{256} << 20;

}  // namespace ptxforge::emu::limits
