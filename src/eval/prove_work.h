// Work, not executions: what one execution of a required instruction is worth toward a task's
// [min_work] floor. Counting executions let the smallest wgmma shape (m64n8k16) meet a
// floor sized for m64n256k16 at 1/32 of the work, and a 16-byte TMA box meet one sized for
// 64 KiB boxes. Each family has a unit (multiply-adds for the matrix instructions, bytes for
// the bulk copies and ldmatrix, plain warp executions for the rest); each instruction a work
// class read from its own modifiers and operands, whose weight per warp execution the prove
// stage applies to the instrumented copy's per-class counts on every case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ptx/ast.h"
#include "task/launch_spec.h"
#include "task/task_spec.h"
#include "toolchain/sass.h"
#include "util/result.h"

namespace ptxforge::eval {

enum class WorkUnit { executions, macs, bytes };
// "warp executions", "multiply-adds", "bytes".
std::string_view to_string(WorkUnit u);
// The unit a family's floor is written in: multiply-adds for wgmma.mma_async, mma and
// wmma.mma (and families under them); bytes for cp.async.bulk(.tensor), ldmatrix and
// stmatrix; warp executions for everything else (barriers, waits, setmaxnreg, ...).
WorkUnit unit_of_family(std::string_view family);

// An instruction's work class, a short text that equal-worth instructions share:
//   "mac <n> <sass>"  n multiply-adds per warp execution (a wgmma's M*N*K over the four warps
//                     of its warpgroup; an mma's M*N*K, halved for .sp), and for a wgmma the
//                     SASS shape that must be in the machine code ("64x256x16"), else "-";
//   "tma <entry> <i>" a TMA copy through the tensor map that is parameter i of the entry: its
//                     box bytes on each case, from the launch spec's tensor-map choice;
//   "bytes <n>"       a copy of n bytes known from the instruction (ldmatrix .x4: 512; a bulk
//                     copy with an immediate size); a TMA copy whose tensor map cannot be traced
//                     to an entry parameter is counted at 16 bytes, the smallest box;
//   "exec"            no data work: 1 per warp execution.
std::string work_class(const ptx::Function& fn, const ptx::Instruction& ins);

// What one warp execution of class `cls` adds to the count of a family with unit `unit` on
// size set `set`: 1 for warp executions; the class's amount where its unit is the family's;
// 0 where it is not (a bulk copy's commit_group under the bytes of "cp.async.bulk").
Result<uint64_t> work_weight(std::string_view cls, WorkUnit unit, const task::Task& task, const task::LaunchSpec& spec,
                             const task::SizeSet& set);

// Whether the reachable machine code holds the shape a class needs (only wgmma names one):
// a wgmma ptxas deleted (its results unused) must not add the work of its shape while a
// smaller live one keeps HGMMA in the listing.
bool shape_in_sass(std::string_view cls, const toolchain::SassListing& reachable);

}  // namespace ptxforge::eval
