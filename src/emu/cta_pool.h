// A launch's CTAs on several host threads, with the one-thread verdict (docs/emu.md section 3,
// "CTAs on host threads"). Only a kernel with no instruction that can order accesses across
// CTAs runs in parallel (no global or generic atomics, no strong or .volatile global or generic
// access, no fence above .cta scope): in it every access two CTAs make to one global granule,
// one of them a write, is a race whatever the interleaving, so a run with no such conflict
// gives every CTA exactly the execution it has on one thread, and the same memory, last
// writers, counts and (no) findings. Any finding, any cross-CTA conflict (exact, per granule,
// Alloc::claim) or the budget crossed throws the parallel run away: global memory is put back
// and the launch runs again on one thread, so every finding reported is the one-thread run's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "emu/cta.h"
#include "emu/interp.h"
#include "emu/memory.h"
#include "emu/program.h"

namespace ptxforge::emu {

// Per function of `prog`: whether a launch of it (its callees included; a call through a
// register may reach any function) may run on several host threads.
std::vector<bool> parallel_functions(const Program& prog);

// The environment variable that sets the host threads of a launch (1: one thread, as before).
inline constexpr const char* kHostThreadsEnv = "PTXFORGE_EMU_THREADS";
// The host threads a launch may use: `configured` when not 0, else PTXFORGE_EMU_THREADS, else
// min(hardware threads, kDefaultHostThreads); at least 1.
inline constexpr uint32_t kDefaultHostThreads = 8;
uint32_t host_threads(uint32_t configured);

// A parallel run is kept only while the race detector's memory stays below this fraction of its
// limit, so that a `limit` verdict is always the one-thread run's (which holds up to 8 resident
// CTAs' shadows and may keep larger read sets of granules several CTAs read).
inline constexpr uint64_t kParallelShadowShare = 8;

// Global memory as a launch found it (bytes, init bits, last writers, the ld.global.nc record),
// to put back when a parallel run is thrown away.
class GlobalSnapshot {
 public:
  explicit GlobalSnapshot(AllocMap& global);
  void restore();

 private:
  struct Saved {
    Alloc* alloc;
    std::vector<uint8_t> bytes, init;
    std::vector<WriterRec> writers;
    uint32_t written_launch;
  };
  std::vector<Saved> saved_;
};

// Gives every global allocation its granule owners (and, with ld.global.nc, its per-launch
// written bytes up front: no host thread resizes them later); disarm drops the owners.
void arm_owners(AllocMap& global, uint32_t gridid, bool track_nc);
void disarm_owners(AllocMap& global);

struct PoolOutcome {
  bool clean = false;  // no finding, no cross-CTA conflict, within the budget: the result stands
  uint64_t lane_instructions = 0;
  uint32_t threads_used = 0;                // host threads that ran at least one CTA
  std::vector<std::vector<Counts>> counts;  // per function and instruction, summed over threads
};

// Makes CTA `linear` for the launch (thread-safe), and ends a finished one.
using MakeCta = std::function<std::unique_ptr<Cta>(const Launch&, uint64_t linear)>;
using EndCta = std::function<void(Cta&)>;

// Runs CTAs 0..ctas-1 of `proto` on `threads` host threads, each taking CTAs in linear order
// from one counter and rotating its resident ones round by round (one at first, up to
// limits::kResidentCtas while they keep running: a CTA spinning on a later one gets it
// resident, as on one thread). Stops every thread at the first finding, conflict or the budget
// crossed (then `clean` is false and memory must be restored by the caller).
PoolOutcome run_cta_pool(const Launch& proto, uint64_t ctas, uint32_t threads, const MakeCta& make, const EndCta& end);

}  // namespace ptxforge::emu
