// A warp of 32 threads with per-lane PCs and call stacks (docs/emu.md section 3). Registers are
// structure-of-arrays (slot x 32 lanes) in call frames that the lanes of one warp share when
// they called together; the scheduler issues, among the runnable lanes, the group at the
// deepest frame and the lowest reverse-post-order index, so lanes meet again at joins.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "emu/program.h"

namespace ptxforge::emu {

struct Frame {
  uint32_t fn = 0;
  int32_t parent = -1;
  uint32_t depth = 0;
  uint32_t ret_pc = 0;      // in the parent: the instruction after the call
  uint64_t stack_off = 0;   // this frame's base in each thread's stack
  uint32_t refs = 0;        // lanes in it plus child frames
  const Inst* call = nullptr;  // the call that made it (returns are copied back through it)
  std::vector<uint64_t> regs;     // slot * 32 + lane
  std::vector<uint32_t> taint;    // per slot: lanes holding a value read from never-written memory
  std::vector<uint32_t> preds;    // per predicate: lane mask
  std::vector<uint32_t> pred_taint;
};

enum class LaneState : uint8_t {
  run,     // runnable
  exited,  // exit, or ret from the entry
  bar,     // blocked at a CTA barrier
  coll,    // blocked at a warp collective, waiting for the rest of its mask
  absent,  // beyond the CTA's thread count
};

struct Warp {
  uint32_t index = 0;
  std::array<uint32_t, 32> pc{};
  std::array<int32_t, 32> frame{};
  std::array<LaneState, 32> state{};
  std::array<uint8_t, 32> bar_pred{};  // bar.red: the lane's predicate at arrival
  uint32_t cc = 0;                     // carry flag per lane (add.cc / addc)
  std::vector<Frame> frames;
  std::vector<int32_t> free_frames;
  uint64_t issued = 0;                 // %clock: this warp's issues
  uint64_t reg_bytes = 0;              // register storage of its live frames
  bool arrived = false;                // counted at its CTA's pending barrier
  uint32_t bar_id = 0;
  // Starvation (section 3): the group issued last and how often in a row.
  uint64_t last_key = ~uint64_t{0};
  uint32_t streak = 0;
  // Where the most recent value from never-written memory came from (for uninit findings).
  uint32_t taint_line = 0, taint_col = 0;

  uint32_t mask_of(LaneState s) const {
    uint32_t m = 0;
    for (int l = 0; l < 32; ++l) m |= uint32_t{state[l] == s} << l;
    return m;
  }
  uint32_t live() const { return ~(mask_of(LaneState::exited) | mask_of(LaneState::absent)); }
  int32_t new_frame(const Function& fn, uint32_t fn_index, int32_t parent);
  void release_frame(int32_t f);
};

// The next group to issue: lanes at one (frame, pc). Empty mask: nothing runnable.
struct Group {
  uint32_t mask = 0;
  int32_t frame = -1;
  uint32_t pc = 0;
};
Group pick_group(Warp& w, const std::vector<Function>& fns);

}  // namespace ptxforge::emu
