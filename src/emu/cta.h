// One CTA: its warps, its .shared memory, its threads' stacks and its 16 barriers
// (docs/emu.md section 3). step_cta runs one round of the warps (round-robin by quanta),
// counts barrier arrivals per warp, completes barriers and finds deadlocks; the launch rotates
// its resident CTAs round by round.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "emu/memory.h"
#include "emu/warp.h"

namespace ptxforge::emu {

struct Launch;
struct RaceCta;

struct Barrier {
  uint32_t arrived = 0;          // threads counted (32 per arriving warp)
  std::optional<uint32_t> count; // the expected count given by the first arrival
  uint32_t red_popc = 0;
  bool red_and = true, red_or = false;
  std::vector<uint32_t> arrivals;  // warps that arrived (in order), for deadlock messages
};

struct Cta {
  Dim3 id{0, 0, 0};
  uint32_t linear = 0;  // the linear id in the grid (x fastest)
  uint32_t threads = 0;
  std::vector<Warp> warps;
  std::vector<uint8_t> shared, shared_init;
  std::vector<ThreadStack> stacks;
  std::array<Barrier, 16> bars;
  uint64_t issues = 0;  // %globaltimer
  RaceCta* race = nullptr;  // the race detector's state for this CTA (null: not checked)
  ThreadId who(uint32_t warp, uint32_t lane, const Dim3& block) const;
};

enum class CtaStep { running, done, stopped };

// One round of a CTA: every warp runs until it blocks, exits or spends its quantum, then the
// barriers that can complete do. `stopped`: a finding (in the Launch). The launch rotates
// among its resident CTAs round by round (emu/machine.cpp).
CtaStep step_cta(Launch& L, Cta& cta);


}  // namespace ptxforge::emu
