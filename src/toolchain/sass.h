// What ptxas really emitted: the SASS listing of a cubin (nvdisasm, else cuobjdump -sass) and
// the table that says which SASS opcodes each PTX instruction family becomes. The prove stage
// uses both to tell "wgmma is in the PTX" from "the machine code holds HGMMA": a required
// instruction that ptxas dropped as dead code, or lowered to something else, is not proven.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ptxforge::toolchain {

// One function of a cubin: its opcodes and the functions it calls. A required opcode proves
// nothing in a function no launched entry reaches (a second entry that is never launched, a
// device function nothing calls), so the prove stage counts only the reachable ones.
struct SassFunction {
  std::map<std::string, int, std::less<>> opcodes;
  std::vector<std::string> calls;  // direct call targets that name a function (`CALL.REL.NOINC `(f)`)
  // A call whose target the listing does not name (through a register, or cuobjdump's bare
  // addresses): it may reach any function that is not an entry.
  bool calls_unknown = false;
};

// Opcodes (with their modifiers, "HGMMA.64x128x16.F32.BF16") and how often each occurs.
struct SassListing {
  std::string tool;  // "nvdisasm" or "cuobjdump"
  std::map<std::string, int, std::less<>> opcodes;
  int instructions = 0;
  // Per function, where the listing says which function a line belongs to (nvdisasm's
  // `.text.<name>` sections, cuobjdump's `Function : <name>` headers).
  std::map<std::string, SassFunction, std::less<>> functions;
  // How many instructions have an opcode that is `prefix` or begins with `prefix.`.
  int count(std::string_view prefix) const;
  // The listing cut down to the functions reachable from the launched `entries` through calls.
  // An unknown call reaches every function that is not one of `all_entries` (the module's
  // entries, launched or not: device code cannot call an entry). An error where a launched
  // entry is not in the listing (a listing without functions, or with other names).
  Result<SassListing> reachable_from(const std::vector<std::string>& entries, const std::vector<std::string>& all_entries) const;
};

// The opcodes of a disassembly in nvdisasm's or cuobjdump's text form: every line that holds
// `/*<hex address>*/ [@[!]P] OPCODE operands ;`. Anything else (headers, labels, encodings) is
// skipped.
SassListing parse_sass_listing(std::string_view text);

// Disassembles a cubin. An error says that neither tool is installed or that both failed;
// callers report "SASS proof unavailable" then, never a pass.
Result<SassListing> disassemble(const std::string& cubin);

// One row of the PTX -> SASS table: an instruction family as the task names it and the SASS
// opcode prefixes it can become on sm_90 (each confirmed by sass_rows_test on the GPU machine).
struct SassFamily {
  std::string_view ptx;
  std::vector<std::string_view> sass;
};
const std::vector<SassFamily>& sass_family_table();

// The SASS opcode prefixes that prove a required family: the row named exactly; else every row
// under it ("mbarrier" takes init, arrive and try_wait); else the longest row above it
// ("wgmma.mma_async.sp" takes wgmma.mma_async). nullopt when the table has nothing for it.
std::optional<std::vector<std::string_view>> sass_for_family(std::string_view family);

}  // namespace ptxforge::toolchain
