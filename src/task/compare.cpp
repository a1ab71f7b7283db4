#include "task/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <thread>
#include <fmt/format.h>

#include "task/buffers.h"

namespace ptxforge::task {

namespace {

bool close(double e, double a, const Tolerance& tol) {
  if (std::isnan(e)) return std::isnan(a);
  if (std::isinf(e)) return a == e;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
}

// Checks one candidate explanation over all elements: does `f(i)` reproduce the actual output?
template <typename F>
bool explains(size_t count, const Tolerance& tol, F&& f) {
  for (size_t i = 0; i < count; ++i) {
    auto [e, a] = f(i);
    if (!close(e, a, tol)) return false;
  }
  return true;
}

std::string find_hint(const Comparison& c, const void* expected, const void* actual, DType t, size_t count,
                      const Tolerance& tol, const std::vector<int64_t>& shape) {
  auto E = [&](size_t i) { return load_element(expected, t, i); };
  auto A = [&](size_t i) { return load_element(actual, t, i); };
  if (c.never_written == count) return "the output was never written (every element still holds the poison pattern)";
  bool all_zero = true, expected_zero = true;
  for (size_t i = 0; i < count && (all_zero || expected_zero); ++i) {
    all_zero = all_zero && A(i) == 0;
    expected_zero = expected_zero && E(i) == 0;
  }
  if (all_zero && !expected_zero) return "the output is all zeros";
  // A correct prefix, then nothing right: the grid or the index covers only the first block(s).
  size_t first_bad = c.first.empty() ? count : c.first[0].index;
  if (first_bad > 0 && c.mismatches == count - first_bad && count - first_bad > 1)
    return fmt::format("only the first {} of {} elements are correct: does the grid cover the whole output, and does "
                       "the index include the block index?", first_bad, count);
  if (c.never_written > 0)
    return fmt::format("{} elements were never written (they still hold the poison pattern)", c.never_written);
  if (c.nan_count > 0) return fmt::format("{} NaN values where the reference is finite", c.nan_count);
  if (count >= 2 && c.first.size() > 0) {
    double d = A(0) - E(0);
    if (d != 0 && std::isfinite(d) && explains(count, tol, [&](size_t i) { return std::pair{E(i) + d, A(i)}; }))
      return fmt::format("every element is off by the same constant ({:g})", d);
    if (E(0) != 0) {
      double k = A(0) / E(0);
      if (std::isfinite(k) && k != 1 && explains(count, tol, [&](size_t i) { return std::pair{E(i) * k, A(i)}; }))
        return fmt::format("every element is off by the same factor ({:g})", k);
    }
  }
  if (shape.size() == 2 && shape[0] > 1 && shape[1] > 1 && static_cast<size_t>(shape[0] * shape[1]) == count) {
    size_t rows = static_cast<size_t>(shape[0]), cols = static_cast<size_t>(shape[1]);
    // actual viewed as cols x rows holding expected's transpose
    if (explains(count, tol, [&](size_t i) {
          size_t r = i / rows, col = i % rows;  // actual[r][col] in a cols x rows matrix
          return std::pair{E(col * cols + r), A(i)};
        }))
      return "the output is the transpose of the expected one (rows and columns swapped)";
  }
  return "";
}

}  // namespace

namespace {

// One slice of the comparison; slices run on several threads and merge in order.
struct Partial {
  size_t mismatches = 0, nan_count = 0, inf_count = 0, never_written = 0;
  double max_abs = 0, max_rel = 0;
  std::vector<Mismatch> first;
};

template <typename Load>
Partial compare_range(Load load, const void* expected, const void* actual, size_t elem, size_t begin, size_t end,
                      const Tolerance& tol) {
  Partial p;
  for (size_t i = begin; i < end; ++i) {
    double e = load(expected, i), a = load(actual, i);
    bool finite_e = std::isfinite(e), finite_a = std::isfinite(a);
    if (finite_e && finite_a) {
      double abs_err = std::fabs(a - e);
      p.max_abs = std::max(p.max_abs, abs_err);
      if (e != 0) p.max_rel = std::max(p.max_rel, abs_err / std::fabs(e));
      if (abs_err <= tol.atol + tol.rtol * std::fabs(e)) continue;
    } else {
      if (finite_e) (std::isnan(a) ? p.nan_count : p.inf_count) += 1;
      if (close(e, a, tol)) continue;
    }
    ++p.mismatches;
    // Only a wrong element can be an unwritten one, so the poison test costs nothing on success.
    if (is_poisoned(actual, elem, i)) ++p.never_written;
    if (p.first.size() < 8) p.first.push_back({i, e, a});
  }
  return p;
}

// 64-bit integers are compared as integers: a double holds only 53 bits, so 2^60 and 2^60 + 1
// would look equal.
template <typename T>
Partial compare_exact(const void* expected, const void* actual, size_t begin, size_t end) {
  Partial p;
  for (size_t i = begin; i < end; ++i) {
    T e, a;
    std::memcpy(&e, static_cast<const char*>(expected) + i * sizeof(T), sizeof(T));
    std::memcpy(&a, static_cast<const char*>(actual) + i * sizeof(T), sizeof(T));
    if (e == a) continue;
    double diff = e > a ? static_cast<double>(e - a) : static_cast<double>(a - e);  // no overflow: computed unsigned below
    if constexpr (std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      U d = e > a ? static_cast<U>(static_cast<U>(e) - static_cast<U>(a)) : static_cast<U>(static_cast<U>(a) - static_cast<U>(e));
      diff = static_cast<double>(d);
    }
    p.max_abs = std::max(p.max_abs, diff);
    if (e != 0) p.max_rel = std::max(p.max_rel, diff / std::fabs(static_cast<double>(e)));
    ++p.mismatches;
    if (is_poisoned(actual, sizeof(T), i)) ++p.never_written;
    if (p.first.size() < 8) p.first.push_back({i, static_cast<double>(e), static_cast<double>(a)});
  }
  return p;
}

Partial compare_any(DType t, const void* expected, const void* actual, size_t begin, size_t end, const Tolerance& tol) {
  size_t elem = dtype_size(t);
  if (t == DType::i64) return compare_exact<int64_t>(expected, actual, begin, end);
  if (t == DType::u64) return compare_exact<uint64_t>(expected, actual, begin, end);
  if (t == DType::f32)
    return compare_range([](const void* p, size_t i) { return static_cast<double>(static_cast<const float*>(p)[i]); },
                         expected, actual, elem, begin, end, tol);
  return compare_range([t](const void* p, size_t i) { return load_element(p, t, i); }, expected, actual, elem, begin, end, tol);
}

}  // namespace

Comparison compare_output(const std::string& name, const void* expected, const void* actual, DType t, size_t count,
                          const Tolerance& given, const std::vector<int64_t>& shape) {
  // Integer outputs are exact: a count off by one is wrong however large the count is.
  const Tolerance tol = is_float(t) ? given : Tolerance{0, 0, given.min_match};
  Comparison c;
  c.output = name;
  c.count = count;
  size_t threads = count < (size_t{1} << 20) ? 1 : std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 16);
  std::vector<Partial> parts(threads);
  size_t chunk = (count + threads - 1) / threads;
  auto work = [&](size_t k) { parts[k] = compare_any(t, expected, actual, std::min(count, k * chunk), std::min(count, (k + 1) * chunk), tol); };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (size_t k = 0; k < threads; ++k) pool.emplace_back(work, k);
    for (auto& th : pool) th.join();
  }
  for (auto& p : parts) {
    c.mismatches += p.mismatches;
    c.nan_count += p.nan_count;
    c.inf_count += p.inf_count;
    c.never_written += p.never_written;
    c.max_abs_error = std::max(c.max_abs_error, p.max_abs);
    c.max_rel_error = std::max(c.max_rel_error, p.max_rel);
    for (auto& m : p.first)
      if (c.first.size() < 8) c.first.push_back(m);
  }
  c.matched_fraction = count ? static_cast<double>(count - c.mismatches) / static_cast<double>(count) : 1.0;
  c.pass = c.matched_fraction >= tol.min_match && (c.mismatches == 0 || tol.min_match < 1.0);
  if (c.mismatches > 0) c.hint = find_hint(c, expected, actual, t, count, tol, shape);
  return c;
}

}  // namespace ptxforge::task
