// Size and launch expressions: `ceil_div(n, 256)`, `m*k`, `min(n, 1024)`, `2.5`. Tasks and
// launch specs are written in them so that one spec serves every size set, including the
// held-back sizes a model never sees. Integer arithmetic follows C (truncating `/` and `%`);
// a float literal makes the result a float (scalar parameter values such as saxpy's alpha).
#pragma once

#include <cstdint>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ptxforge::task {

using Bindings = std::map<std::string, double, std::less<>>;

struct Number {
  bool is_int = true;
  int64_t i = 0;
  double d = 0;
  double as_double() const { return is_int ? double(i) : d; }
};

class SizeExpr {
 public:
  struct Node;
  // Parses `text`; the error names the column (1-based) of the problem.
  static Result<SizeExpr> parse(std::string_view text);

  Result<Number> evaluate(const Bindings& symbols) const;
  // The value as a whole number; an error when it is fractional or negative and `allow_negative` is off.
  Result<int64_t> evaluate_int(const Bindings& symbols, bool allow_negative = false) const;
  // Symbols the expression names, for checking a task before anything runs.
  std::vector<std::string> symbols() const;
  const std::string& text() const { return text_; }

 private:
  std::shared_ptr<const Node> root_;
  std::string text_;
};

// `(a, b, c)` or `a` (then y = z = 1): a grid, block or cluster shape.
struct Dim3Expr {
  SizeExpr x, y, z;
  static Result<Dim3Expr> parse(std::string_view text);
  Result<std::array<int64_t, 3>> evaluate(const Bindings& symbols) const;
  std::string text() const;
};

}  // namespace ptxforge::task
