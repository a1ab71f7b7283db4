// The candidate's module-scope device variables, read from its cubin (an ELF file): every
// object in the .nv.global (zero-initialised) and .nv.global.init (initialised) sections.
// A `.global` variable keeps its value from one launch to the next, so a kernel could leave
// itself a "done" flag or a table of remembered answers there; the timing loop restores
// every byte of these sections to its loaded value before every trial: the variables, the
// alignment gaps between them (a small variable, then one with a large .align, leaves a gap
// no symbol names) and the section's tail. The cubin is read, not the
// PTX: a variable declared inside a function gets a name of ptxas's making ($__flag__6),
// which only the cubin knows.
#pragma once

#include <cstdint>
#include <functional>
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

// What a restore copies: each section whole, from its loaded base (a symbol's device address
// less its offset) to base + size. A section is placed by any of its symbols the driver
// resolves (`resolve` gives a symbol's device address, 0 when the driver does not know it);
// one none of whose symbols resolves, or whose symbols disagree on the base, is `unlocated`
// and the caller reloads the module instead. More than `limit` bytes in all is an error that
// names the limit (ptxforge's PTX bounds keep a legit module far below it).
constexpr uint64_t kMaxGlobalRestoreBytes = uint64_t{256} << 20;
struct SectionRange {
  std::string name;
  uint64_t base = 0, size = 0;
};
struct GlobalRestorePlan {
  std::vector<SectionRange> ranges;
  std::vector<std::string> unlocated;  // section names
};
Result<GlobalRestorePlan> plan_global_restore(const std::vector<GlobalSection>& sections,
                                              const std::function<uint64_t(const std::string&)>& resolve,
                                              uint64_t limit = kMaxGlobalRestoreBytes);

}  // namespace ptxforge::gpu
