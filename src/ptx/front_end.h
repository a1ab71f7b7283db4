// The front end as one call: parse, then validate when parsing found no errors (a module
// with syntax errors would drown the real problem in follow-on findings).
#pragma once

#include <string_view>

#include "ptx/ast.h"
#include "ptx/validator.h"
#include "util/diagnostic.h"

namespace ptxforge::ptx {

struct CheckResult {
  Module module;
  Diagnostics diags;
  bool ok() const { return !diags.has_errors(); }
};

CheckResult check_source(std::string_view text, const ValidateOptions& opts = {});
// The same, with a module that views `text` instead of keeping a copy (the copy of a 10 MB
// module is a twentieth of its check): the caller keeps the text alive and unchanged for as
// long as the result's module lives.
CheckResult check_borrowed_source(std::string_view text, const ValidateOptions& opts = {});

}  // namespace ptxforge::ptx
