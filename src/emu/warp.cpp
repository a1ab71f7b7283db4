// The warp scheduler: which lanes issue next. Lanes at the same frame and PC form a group; the
// group in the deepest frame with the lowest reverse-post-order index goes first, so after a
// divergent branch the earlier side runs and the lanes meet at the join, and lanes that left a
// loop wait for those still in it. A group that issued kQuantum times in a row while another
// waits yields once, so an intra-warp spin lock (legal under independent scheduling) ends.
#include "emu/warp.h"

#include <bit>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "emu/limits.h"

namespace ptxforge::emu {

namespace {

// The lanes in state `run` (SSE2 where the host has it: one compare of the 32 state bytes).
uint32_t runnable(const Warp& w) {
#if defined(__SSE2__)
  static_assert(sizeof(LaneState) == 1 && static_cast<int>(LaneState::run) == 0);
  const __m128i zero = _mm_setzero_si128();
  const auto* p = reinterpret_cast<const __m128i*>(w.state.data());
  auto lo = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p), zero)));
  auto hi = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(p + 1), zero)));
  return lo | (hi << 16);
#else
  uint32_t run = 0;
  for (int l = 0; l < 32; ++l) run |= uint32_t{w.state[l] == LaneState::run} << l;
  return run;
#endif
}

// The lanes at frame `frame0` and PC `pc0`.
uint32_t at(const Warp& w, uint32_t pc0, int32_t frame0) {
#if defined(__SSE2__)
  const __m128i pc = _mm_set1_epi32(static_cast<int>(pc0)), fr = _mm_set1_epi32(frame0);
  uint32_t m = 0;
  for (int i = 0; i < 8; ++i) {
    __m128i pv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.pc.data() + 4 * i));
    __m128i fv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.frame.data() + 4 * i));
    __m128i eq = _mm_and_si128(_mm_cmpeq_epi32(pv, pc), _mm_cmpeq_epi32(fv, fr));
    m |= static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(eq))) << (4 * i);
  }
  return m;
#else
  uint32_t m = 0;
  for (int l = 0; l < 32; ++l) m |= static_cast<uint32_t>(w.pc[l] == pc0 && w.frame[l] == frame0) << l;
  return m;
#endif
}

}  // namespace

int32_t Warp::new_frame(const Function& fn, uint32_t fn_index, int32_t parent) {
  int32_t id;
  if (!free_frames.empty()) {
    id = free_frames.back();
    free_frames.pop_back();
  } else {
    id = static_cast<int32_t>(frames.size());
    frames.emplace_back();
  }
  Frame& f = frames[static_cast<size_t>(id)];
  f.fn = fn_index;
  f.parent = parent;
  f.depth = parent < 0 ? 0 : frames[static_cast<size_t>(parent)].depth + 1;
  f.refs = 0;
  f.call = nullptr;
  f.regs.assign(size_t{fn.slots} * 32, 0);
  // A register nobody wrote holds garbage on a GPU: it reads as tainted until written, so a
  // kernel that uses one (an accumulator never zeroed) cannot pass on the engine's zeros.
  f.taint.assign(fn.slots, ~0u);
  f.preds.assign(fn.preds, 0);
  f.pred_taint.assign(fn.preds, ~0u);
  if (parent >= 0) frames[static_cast<size_t>(parent)].refs++;
  reg_bytes += f.regs.size() * 8 + f.preds.size() * 8;
  return id;
}

void Warp::release_frame(int32_t id) {
  while (id >= 0) {
    Frame& f = frames[static_cast<size_t>(id)];
    if (--f.refs > 0) return;
    int32_t parent = f.parent;
    reg_bytes -= f.regs.size() * 8 + f.preds.size() * 8;
    f.regs.clear();
    f.regs.shrink_to_fit();
    free_frames.push_back(id);
    id = parent;
  }
}

Group pick_group(Warp& w, const std::vector<Function>& fns) {
  // key: depth high first, then rpo low; the frame id breaks ties.
  auto key_of = [&](int l) -> uint64_t {
    const Frame& f = w.frames[static_cast<size_t>(w.frame[l])];
    uint64_t depth_rank = limits::kMaxCallDepth + 1 - f.depth;
    return (depth_rank << 48) | (uint64_t{fns[f.fn].rpo[w.pc[l]]} << 20) | static_cast<uint64_t>(w.frame[l] & 0xfffff);
  };
  // The common case, a converged warp: every runnable lane at one frame and PC is the only
  // group, so its key is the best and there is no second (the streak is kept as below).
  uint32_t run = runnable(w);
  if (!run) return {};
  int first = std::countr_zero(run);
  uint32_t pc0 = w.pc[first];
  int32_t frame0 = w.frame[first];
  if (!(run & ~at(w, pc0, frame0))) {
    uint64_t k = key_of(first);
    if (k == w.last_key) ++w.streak;
    else w.streak = 0;
    w.last_key = k;
    return {run, frame0, pc0};
  }
  // Lanes at the same frame and PC as the previous runnable lane share its key (no lookup).
  std::array<uint64_t, 32> keys;
  uint64_t best = ~uint64_t{0}, second = ~uint64_t{0};
  int prev = -1;
  for (int l = 0; l < 32; ++l) {
    if (w.state[l] != LaneState::run) continue;
    uint64_t k = prev >= 0 && w.pc[l] == w.pc[prev] && w.frame[l] == w.frame[prev] ? keys[prev] : key_of(l);
    keys[l] = k;
    prev = l;
    if (k < best) {
      if (best != ~uint64_t{0}) second = best;
      best = k;
    } else if (k != best && k < second) {
      second = k;
    }
  }
  if (best == ~uint64_t{0}) return {};
  uint64_t chosen = best;
  if (best == w.last_key && ++w.streak >= limits::kQuantum && second != ~uint64_t{0}) chosen = second;
  if (chosen != w.last_key) w.streak = 0;
  w.last_key = chosen;
  Group g;
  for (int l = 0; l < 32; ++l)
    if (w.state[l] == LaneState::run && keys[l] == chosen) {
      g.mask |= 1u << l;
      g.frame = w.frame[l];
      g.pc = w.pc[l];
    }
  return g;
}

}  // namespace ptxforge::emu
