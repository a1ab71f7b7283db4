// Lowering (docs/emu.md section 2): a validated ptx::Module becomes an emu::Program once per
// machine. Names become register slots, frame offsets and addresses; opcodes and modifiers
// become an Op with its types and modes; labels become instruction indices. Anything the engine
// does not execute stops lowering with a Finding{unsupported} at its line: a module never runs
// partially.
#pragma once

#include <string>
#include <variant>

#include "emu/engine.h"
#include "emu/program.h"
#include "ptx/ast.h"

namespace ptxforge::emu {

std::variant<Program, Finding> lower(const ptx::Module& module);

// Function addresses (mov of a function name; calls through a register) live in a window of
// their own, so a data access through one is oob and a call through a data address is a trap.
inline constexpr uint64_t kFuncBase = uint64_t{5} << 44;

}  // namespace ptxforge::emu
