// The interpreter (docs/emu.md section 2): one lowered instruction issued for a group of lanes
// of a warp. Launch holds what every CTA of a launch shares (program, memory, parameters,
// budget, the first finding, counts); Exec is one issue. The dispatch is split by op group:
// interp.cpp (operands, integer and logic), interp_float.cpp (floating point and cvt),
// interp_memory.cpp (ld/st/cvta/atomics and the bounds and init checks), interp_control.cpp
// (branches, calls, barriers, warp collectives).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "emu/cta.h"
#include "emu/engine.h"
#include "emu/memory.h"
#include "emu/program.h"
#include "emu/race.h"

namespace ptxforge::emu {

struct Counts {
  uint64_t warp_issues = 0, lane_executions = 0;
};

struct Launch {
  const Program* prog = nullptr;
  uint32_t entry = 0;
  AllocMap* global = nullptr;   // buffers and module .global variables
  AllocMap* consts = nullptr;   // module .const variables, by generic address
  std::vector<uint8_t> params;  // the kernel parameter buffer
  LaunchConfig config;
  uint32_t shared_bytes = 0;    // static + dynamic per CTA
  uint32_t gridid = 0;
  uint64_t lane_instructions = 0;
  std::optional<Finding> finding;
  std::vector<std::vector<Counts>>* counts = nullptr;  // per function, per instruction
  uint32_t last_line = 0;
  RaceDetector* race = nullptr;     // the race detector (null: races not checked)
  bool track_nc = false;            // the program has ld.global.nc: record bytes written per launch
  std::vector<uint32_t> scratch_tids;  // reused by the synchronisation events' thread lists
  std::vector<RaceLane> race_lanes[2];  // reused by each access's lanes: .shared, .global
};

struct Exec {
  Launch& L;
  Cta& cta;
  Warp& w;
  int32_t frame_id;
  const Function& fn;
  const Inst& in;
  uint32_t pc;
  uint32_t issued;  // lanes issued (at this frame and pc)
  uint32_t mask;    // lanes that execute (issued and guard true)
  Frame& f() { return w.frames[static_cast<size_t>(frame_id)]; }
  uint32_t tid(uint32_t lane) const { return w.index * 32 + lane; }
  ThreadId who(uint32_t lane) const { return cta.who(w.index, lane, L.config.block); }
};

// How an issue left the lanes' PCs.
enum class Flow { next, done, stop };

// Issues `g` of warp `w`; false when a finding stopped the launch.
bool issue(Launch& L, Cta& cta, Warp& w, uint32_t mask, int32_t frame, uint32_t pc);

// " (the last load of never-written bytes: line N)" or "" when none was loaded.
std::string origin(const Warp& w);

// Findings at an issue, with the first executing lane as the thread.
Flow fail(Exec& x, FindingKind kind, std::string message, uint32_t lane);

// Operand access (interp.cpp).
uint64_t read_operand(Exec& x, const Opnd& o, uint32_t lane, int bits);
uint32_t taint_of(Exec& x, const Opnd& o);
void write_reg(Exec& x, const Opnd& d, uint32_t lane, uint64_t v, int bits);
void set_taint(Exec& x, const Opnd& d, uint32_t lanes_tainted);
bool pred_value(Exec& x, const Opnd& o, uint32_t lane);
// setp/set's result for one lane from its comparison `r`: combined with the .and/.or/.xor
// predicate, written as a predicate (and its complement to setp's second destination) or, for
// set, as 1.0f or all ones.
void write_compare(Exec& x, const Inst& in, uint32_t lane, bool r);

// Op groups.
Flow exec_float(Exec& x);
Flow exec_memory(Exec& x);
Flow exec_control(Exec& x);

}  // namespace ptxforge::emu
