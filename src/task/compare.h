// Comparing a candidate's output with the reference's: mixed absolute/relative tolerance
// (|a - e| <= atol + rtol * |e|), a minimum matched fraction, the numbers a person needs
// (max errors, mismatch count, the first mismatches, NaN/Inf counts) and a hint that names
// the common failure patterns, so the feedback says what went wrong, not only that it did.
// Integer outputs are compared exactly (rtol and atol do not apply; min_match does), 64-bit
// ones as integers, not through a double.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "task/dtype.h"
#include "task/task_spec.h"

namespace ptxforge::task {

struct Mismatch {
  size_t index = 0;
  double expected = 0, actual = 0;
};

struct Comparison {
  std::string output;
  size_t count = 0;
  size_t mismatches = 0;
  double matched_fraction = 1;
  double max_abs_error = 0, max_rel_error = 0;
  size_t nan_count = 0, inf_count = 0;  // in the candidate where the reference is finite
  size_t never_written = 0;             // elements still holding the poison pattern
  std::vector<Mismatch> first;          // up to 8
  bool pass = true;
  std::string hint;                     // "" when nothing stands out
};

// `shape` (rows, cols) enables the "transposed" hint; empty otherwise.
Comparison compare_output(const std::string& name, const void* expected, const void* actual, DType t, size_t count,
                          const Tolerance& tol, const std::vector<int64_t>& shape = {});

}  // namespace ptxforge::task
