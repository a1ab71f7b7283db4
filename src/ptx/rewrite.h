// Header rewrites for `ptxforge fmt`: retarget a module to another architecture, change its
// PTX ISA version, or complete a snippet that lacks .version/.target (a model's common
// omission) with the lowest version its body needs. Each refuses, with the offending lines,
// when an instruction needs more than the new header gives.
#pragma once

#include <optional>
#include <string>

#include "ptx/ast.h"
#include "ptx/target.h"
#include "util/diagnostic.h"

namespace ptxforge::ptx {

// The lowest .version and a .target that every instruction in the module accepts.
struct BodyNeeds {
  PtxVersion ptx{1, 0};
  Target target{20, 0};
};
BodyNeeds body_needs(const Module& m);

struct HeaderChange {
  std::optional<std::string> target;    // "sm_90a"
  std::optional<std::string> version;   // "8.0"
  bool add_header = false;              // only where .version/.target are missing
};

// Applies the change; returns false (with diagnostics naming the offending lines) when the
// module would no longer be valid. Notes say what was raised automatically.
bool rewrite_header(Module& m, const HeaderChange& change, Diagnostics& diags);

}  // namespace ptxforge::ptx
