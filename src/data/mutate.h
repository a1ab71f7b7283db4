// One-defect mutants of a valid PTX module: the defects compilers' rules forbid (a dropped
// declaration, a wrong type suffix, a missing rounding mode, ...) and the mistakes models make
// (prose or a Markdown fence in the module, an x86 register, a missing semicolon or .version).
// The mutation test judges them against ptxas; `ptxforge data mutate` labels them with ptxas's
// verdict and our diagnostics to make broken/fixed training pairs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ptxforge::data {

struct Mutant {
  std::string kind;
  std::string text;     // the whole mutated module
  uint32_t line = 0;    // the mutated line (1-based)
  std::string original_line, mutated_line;  // that line before and after
  bool single_edit = true;  // only that line differs from the original
};

// Up to two mutants of each kind (one for some), in a fixed order.
std::vector<Mutant> compiler_mutants(const std::string& text);
std::vector<Mutant> model_style_mutants(const std::string& text);
std::vector<Mutant> mutants_of(const std::string& text);  // both

}  // namespace ptxforge::data
