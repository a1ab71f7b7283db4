// The candidate's module-scope device variables, read from its cubin (an ELF file): every
// object in the .nv.global (zero-initialised) and .nv.global.init (initialised) sections.
// A `.global` variable keeps its value from one launch to the next, so a kernel could leave
// itself a "done" flag or a table of remembered answers there; the timing loop restores
// every byte of these sections, as the driver placed them, to its loaded value before every
// trial: the variables and the alignment gaps between them (a small variable, then one with
// a large .align, leaves a gap no symbol names). The cubin is read, not the
// PTX: a variable declared inside a function gets a name of ptxas's making ($__flag__6),
// which only the cubin knows.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
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

// What a restore copies, placed as the driver placed it. The driver does not keep the cubin's
// layout, and gives every variable an allocation of its own (measured on an H100 and an H200,
// driver 580: each variable at a 256-byte boundary, 0x100 apart where the section had them 0x400
// apart, one module's variables side by side, the next module's right after them). No
// allocation starts between 256-byte boundaries, so the bytes from a variable's address to the
// next boundary past its end (its "slot") are the candidate's alone: the alignment gaps between
// its variables are the tails of these slots. The plan restores every slot of every variable,
// adjacent ones merged; the copy API refuses the tail bytes (they lie in no allocation), so the
// caller copies with a kernel. A section one of whose named variables the driver cannot place
// (`resolve` gives nothing) or places off a 256-byte boundary, or which has bytes and no named
// variable, is `unlocated`, and the caller reloads the module instead. Sections of more than
// `limit` bytes in all are an error that names the limit (ptxforge's PTX bounds keep a legit
// module far below it). Bytes past a module's last slot are another module's or free: they are
// left alone.
constexpr uint64_t kDriverSlotBytes = 256;
constexpr uint64_t kMaxGlobalRestoreBytes = uint64_t{256} << 20;
struct DeviceRange {
  uint64_t base = 0, size = 0;
};
struct SectionRange {
  std::string name;  // the sections it covers, joined with '+' where one range serves both
  uint64_t base = 0, size = 0;
};
struct GlobalRestorePlan {
  std::vector<SectionRange> ranges;    // disjoint, by base
  std::vector<std::string> unlocated;  // section names
};
using ResolveGlobal = std::function<std::optional<DeviceRange>(const std::string& name)>;
Result<GlobalRestorePlan> plan_global_restore(const std::vector<GlobalSection>& sections, const ResolveGlobal& resolve,
                                              uint64_t limit = kMaxGlobalRestoreBytes);

}  // namespace ptxforge::gpu
