// The PTX parser: a recursive-descent parser over the lexer's token stream that builds the
// AST and collects every syntax error (it resynchronises at ';' and '}' rather than stopping).
// It knows the grammar, not the instruction set: opcode and modifier rules live in the ISA
// table and are applied by the validator.
#pragma once

#include <string_view>

#include "ptx/ast.h"
#include "util/diagnostic.h"

namespace ptxforge::ptx {

struct ParseOptions {
  size_t max_errors = 500;  // then one note, and parsing stops
  int max_depth = 256;      // nesting of blocks, expressions and operand braces
  // The module views the text instead of copying it into its arena: the caller keeps the
  // text alive and unchanged for as long as the module lives.
  bool borrow_text = false;
};

Module parse(std::string_view text, Diagnostics& diags, const ParseOptions& opts = {});

}  // namespace ptxforge::ptx
