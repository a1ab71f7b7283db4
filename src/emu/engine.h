// The CPU engine's interface to its executor (docs/emu.md): a validated PTX module lowered
// once (Machine::create), buffers in one emulated address space, launches of its entries with
// exact bounds and the engine's checks, and the outputs read back with their last writers.
// The executor (emu/executor.cpp) turns a gpu::Job into calls here; nothing in this header
// knows about tasks, jobs or the worker protocol.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ptx/ast.h"
#include "util/result.h"

namespace ptxforge::emu {

using Dim3 = std::array<uint32_t, 3>;

// What a finding is about; each has a check id in docs/checks.md ("emu-" + to_string).
enum class FindingKind {
  unsupported,         // an instruction or construct the engine does not execute (emu-unsupported)
  oob,                 // an access outside every allocation, or past the end of its own (emu-oob)
  misaligned,          // an access not aligned to its width or vector size (emu-misaligned)
  uninit,              // a value read from never-written memory decided a branch, an address or an output (emu-uninit)
  race,                // two conflicting accesses with no order between them (emu-race)
  barrier_divergence,  // an .aligned barrier or collective not reached by the whole warp (emu-barrier-divergence)
  barrier_count,       // a barrier count not a multiple of 32, or differing counts on one barrier (emu-barrier-count)
  deadlock,            // every thread of a CTA blocked, nothing can complete (emu-deadlock)
  warp_mask,           // a .sync collective whose member mask names lanes not executing it (emu-warp-mask)
  budget,              // the launch exceeded its lane-instruction budget (emu-budget)
  limit,               // a launch shape or memory beyond the engine's limits (emu-limit)
  trap,                // trap, brkpt, or a store to read-only memory (emu-trap)
};
std::string_view to_string(FindingKind k);

// One thread: its CTA and its thread index, as the kernel sees %ctaid and %tid.
struct ThreadId {
  Dim3 cta{0, 0, 0};
  Dim3 thread{0, 0, 0};
  bool operator==(const ThreadId&) const = default;
};

// A PTX source position (the module's lines and columns, 1-based).
struct PtxPos {
  uint32_t line = 0, col = 0;
};

// The other access of a race.
struct OtherAccess {
  PtxPos pos;
  ThreadId who;
  bool write = false;
};

struct Finding {
  FindingKind kind = FindingKind::trap;
  std::string message;  // one sentence, no location: "read of 4 bytes at offset 4096 of 'a' (4096 bytes)"
  PtxPos pos;           // the instruction that found it (0:0 when no instruction did: a launch limit)
  std::optional<ThreadId> who;
  std::string buffer;   // the allocation involved, by the name given to alloc ("" for none)
  uint64_t offset = 0;  // byte offset into `buffer`
  std::optional<OtherAccess> other;
};

// Who last wrote an element of an output buffer.
struct Writer {
  ThreadId who;
  PtxPos pos;
};

// How a buffer starts: its bytes count as written (inputs, scratch the harness fills), or as
// never written (outputs: a read of one before the kernel writes it is `uninit`).
enum class Init { written, unwritten };

// A kernel argument: the bytes of one .param of the entry, in declaration order (a buffer's
// address as 8 little-endian bytes, a scalar as its bytes).
using ParamBytes = std::vector<uint8_t>;

struct LaunchConfig {
  Dim3 grid{1, 1, 1}, block{1, 1, 1};
  uint32_t dynamic_smem = 0;
  uint64_t budget = uint64_t{1} << 33;  // lane-instructions for this launch
  // Host threads the CTAs may run on (docs/emu.md section 3): 0 takes PTXFORGE_EMU_THREADS,
  // else min(hardware threads, 8); 1 runs on the calling thread only. Any number gives the
  // same result: a kernel that could tell runs on one thread.
  uint32_t host_threads = 0;
};

struct LaunchResult {
  std::optional<Finding> finding;  // the first finding; the launch stopped there
  uint64_t lane_instructions = 0;
  // Host threads that ran CTAs of this result (1: the one-thread path), and whether a parallel
  // run was thrown away first (it found something, or two CTAs' accesses conflicted).
  uint32_t host_threads = 1;
  bool rerun_on_one_thread = false;
  bool ok() const { return !finding; }
};

// Per lowered instruction, how often it ran: warp issues with at least one lane whose guard
// holds (a guarded instruction no lane runs is not counted) and lane executions, summed over
// every launch of the machine.
struct InstructionCount {
  PtxPos pos;
  std::string opcode;  // full opcode as written ("ld.global.nc.f32")
  uint64_t warp_issues = 0, lane_executions = 0;
};

class Machine {
 public:
  // Lowers every function of a validated module, lays out its .global/.const variables with
  // their initializers (they persist across launches, as in a loaded CUmodule). A construct
  // the engine does not execute is a Finding of kind `unsupported` naming it and its line.
  static std::variant<std::unique_ptr<Machine>, Finding> create(const ptx::Module& module);
  virtual ~Machine() = default;

  // A buffer of exactly `bytes` bytes (no slack: one byte past the end is `oob`), named for
  // findings. `track_writers` keeps a last writer per `element_bytes` element (outputs).
  virtual uint64_t alloc(std::string name, uint64_t bytes, Init init, bool track_writers = false,
                         uint32_t element_bytes = 4) = 0;
  virtual void write(uint64_t address, std::span<const uint8_t> bytes) = 0;
  virtual std::vector<uint8_t> read(uint64_t address, uint64_t bytes) const = 0;
  // The last writer of the element at `address` (nullopt: never written during a launch).
  virtual std::optional<Writer> last_writer(uint64_t address) const = 0;
  // Frees every buffer alloc made (module variables stay).
  virtual void free_buffers() = 0;

  // Runs one launch of `entry` to completion, or to its first finding.
  virtual LaunchResult launch(std::string_view entry, const LaunchConfig& config,
                              std::span<const ParamBytes> params) = 0;
  // The entry's parameters: their sizes in bytes, in declaration order (for building ParamBytes).
  virtual std::optional<std::vector<uint32_t>> param_sizes(std::string_view entry) const = 0;

  virtual std::vector<InstructionCount> counts() const = 0;
};

}  // namespace ptxforge::emu
