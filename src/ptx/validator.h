// The validator: separate checks over a parsed module, each with an id (docs/checks.md),
// all findings collected. It implements the manual's relaxed operand type-checking rules so
// it raises no alarm on what ptxas accepts, and adds warnings for what ptxas accepts but is
// almost always a bug in model-written PTX.
#pragma once

#include "ptx/ast.h"
#include "util/diagnostic.h"

namespace ptxforge::ptx {

struct ValidateOptions {
  bool warnings = true;  // the LLM-pitfall warnings
};

void validate(const Module& m, Diagnostics& diags, const ValidateOptions& opts = {});

}  // namespace ptxforge::ptx
