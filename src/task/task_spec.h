// A task: what a kernel must compute, on which sizes, against which reference, within which
// tolerance. Read from tasks/<level>/<name>/task.toml (format in docs/task-format.md) and
// checked completely before anything runs: every expression parses, every symbol is bound
// in every size set, every dtype and role is known.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "task/dtype.h"
#include "task/expr.h"
#include "util/result.h"

namespace ptxforge::task {

enum class Role { in, out, inout };
std::string_view role_name(Role r);

// How input elements are drawn: uniform(lo, hi), normal(mean, stddev), int(lo, hi) (both
// ends included), zeros, ones, or iota (0, 1, 2, ...).
struct Distribution {
  enum Kind { uniform, normal, integers, zeros, ones, iota } kind = uniform;
  double a = -1, b = 1;
  std::string text() const;
  static Result<Distribution> parse(std::string_view text);
};

struct Param {
  enum Kind { buffer, scalar, tensor_map } kind = buffer;
  std::string name;
  int line = 0;
  DType dtype = DType::f32;
  // buffer
  SizeExpr count;                 // elements
  Role role = Role::in;
  Distribution init;
  std::vector<SizeExpr> shape;    // optional (rows, cols), for the "transposed" hint
  // scalar
  SizeExpr value;
  // tensor_map: a global tensor over `over` (a buffer parameter), innermost dimension first
  std::string over;
  std::vector<SizeExpr> dims, strides;  // strides in bytes, for dims[1..]

  bool is_output() const { return kind == buffer && role != Role::in; }
  // Bytes the kernel parameter takes: 8 for a pointer, the scalar's size, 128 for a tensor map.
  size_t param_bytes() const;
};

struct SizeSet {
  std::string name;
  bool shown = true;  // false: a held-back check size never shown to a model
  Bindings values;
};

struct Launch {
  std::string entry;
  Dim3Expr grid, block, cluster;
  bool has_cluster = false;
  SizeExpr smem;                  // dynamic shared memory in bytes
  std::vector<std::string> args;  // parameter and scratch names in order; empty: the task's params
};

struct Tolerance {
  double rtol = 1e-5, atol = 1e-6;
  double min_match = 1.0;  // fraction of elements that must be within tolerance
};

struct Baseline {
  std::string library;                  // "cublas_sgemm", "cublas_sgemv"
  std::map<std::string, std::string> args;  // library-specific: m, n, k, a, b, c ... as text
};

struct Task {
  std::string name, dir, description;
  int level = 1;
  std::vector<std::string> tags;
  std::string entry;  // the entry a single-launch candidate must define
  std::vector<Param> params;
  std::vector<SizeSet> sizes;
  Launch reference;
  std::map<std::string, Tolerance> tolerance;  // per output; missing ones get the defaults
  std::optional<Baseline> baseline;
  std::vector<std::string> required_instructions;  // opcode families, e.g. "wgmma.mma_async"
  std::string min_target = "sm_80";
  double time_budget_s = 10;
  bool racecheck = false;
  // [roofline]: the bytes moved and the flops done, for "fraction of peak" in reports.
  std::optional<SizeExpr> roofline_bytes, roofline_flops;

  const Param* find_param(std::string_view name) const;
  Tolerance tolerance_for(const std::string& output) const;
  std::vector<const SizeSet*> size_sets(bool include_held_back) const;
};

// Reads and checks `dir`/task.toml. On failure the error lists every problem as
// `task.toml:LINE:COL: error: ...`.
Result<Task> load_task(const std::string& dir);
Result<Task> parse_task(std::string_view toml_text, const std::string& file_name, const std::string& dir);

// Finds a task by path, `level1/vector_add` or bare name, under the data directory's tasks/.
Result<std::string> find_task_dir(const std::string& name_or_path);
// Every task folder under the data directory's tasks/, sorted.
Result<std::vector<std::string>> list_task_dirs();

}  // namespace ptxforge::task
