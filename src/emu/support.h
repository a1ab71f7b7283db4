// Which PTX instruction families the CPU engine executes (docs/emu.md sections 2 and 9). Every
// family of the ISA table (ptx/isa.h) is decided here, one way or the other, so a new table row
// fails EmuSupport.EveryFamilyIsDecided until someone decides it; lowering (emu/lower*.cpp)
// refuses the unsupported ones before anything runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxforge::emu {

enum class Support : uint8_t { executed, unsupported };

// nullopt: the family is in neither list (a table row nobody decided).
std::optional<Support> family_support(std::string_view family);

}  // namespace ptxforge::emu
