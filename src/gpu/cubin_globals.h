// The candidate's module-scope device variables, read from its cubin (an ELF file): every
// object in the .nv.global (zero-initialised) and .nv.global.init (initialised) sections.
// A `.global` variable keeps its value from one launch to the next, so a kernel could leave
// itself a "done" flag or a table of remembered answers there; the timing loop restores
// these variables to their loaded values before every trial. The cubin is read, not the
// PTX: a variable declared inside a function gets a name of ptxas's making ($__flag__6),
// which only the cubin knows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ptxforge::gpu {

struct GlobalSymbol {
  std::string name;
  uint64_t offset = 0;  // within its section
  uint64_t size = 0;
};

struct GlobalSection {
  std::string name;  // ".nv.global" or ".nv.global.init"
  uint64_t size = 0;
  std::vector<GlobalSymbol> symbols;
};

// The device-variable sections of a 64-bit little-endian ELF image; empty when it has none.
// A damaged image is an error that says where it is damaged.
Result<std::vector<GlobalSection>> cubin_global_sections(std::string_view elf);

}  // namespace ptxforge::gpu
