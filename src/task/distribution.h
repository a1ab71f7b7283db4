// How a task's input elements are drawn: a base distribution, and optionally the structure
// that breaks lazy kernels: many exact ties, sorted or reversed runs, an extreme planted at a
// chosen place. The grammar (docs/task-format.md, "Input distributions"):
//
//   init  := plant | order | ties | base
//   plant := plant_max(order|ties|base, start|middle|end|random) | plant_min(...)
//   order := sorted(ties|base) | reversed(ties|base)
//   ties  := ties(K) | ties(K, base)          values from K distinct ones
//   base  := uniform(lo, hi) | normal(mean, stddev) | int(lo, hi) | randint(lo, hi)
//          | zeros | ones | iota | huge | tiny
//
// Generation (task/buffers.cpp) is counter-based: element i depends only on (seed, stream, i),
// so buffers are filled by many threads and come out the same everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "task/dtype.h"
#include "util/result.h"

namespace ptxforge::task {

struct Distribution {
  // huge: magnitudes in [max/4, max/2] of the dtype, random signs (a few added overflow);
  // tiny: magnitudes around the dtype's smallest normal, subnormals included (floats only).
  enum Kind { uniform, normal, integers, zeros, ones, iota, huge, tiny } kind = uniform;
  double a = -1, b = 1;
  uint64_t ties = 0;  // 0: none; K: every element is one of K distinct values
  enum class Order { none, sorted, reversed } order = Order::none;
  enum class Plant { none, max, min } plant = Plant::none;
  enum class Where { start, middle, end, random } where = Where::random;

  std::string text() const;
  static Result<Distribution> parse(std::string_view text);
  // A problem with this distribution for a buffer of `t` ("tiny" of an integer type), or "".
  std::string unfit_for(DType t) const;
};

// The value below which a fraction u of the base distribution lies (u in [0, 1)), for a
// dtype whose limits `huge` and `tiny` follow. Monotone in u: sorted runs come from it.
double base_quantile(const Distribution& d, DType t, double u);
// The largest and smallest values the base can produce, for planting an extreme beyond them.
double base_sup(const Distribution& d, DType t);
double base_inf(const Distribution& d, DType t);

}  // namespace ptxforge::task
