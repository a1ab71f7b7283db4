// A task: what a kernel must compute, on which sizes, against which reference, within which
// tolerance. Read from tasks/<level>/<name>/task.toml (format in docs/task-format.md) and
// checked completely before anything runs: every expression parses, every symbol is bound
// in every size set, every dtype and role is known.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "task/baselines.h"
#include "task/distribution.h"
#include "task/dtype.h"
#include "task/expr.h"
#include "util/result.h"

namespace ptxforge::task {

enum class Role { in, out, inout };
std::string_view role_name(Role r);

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
  // Inits that replace a parameter's own for this size set (`init.x = "sorted(...)"`).
  std::map<std::string, Distribution> init;
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
  BaselineKind kind = BaselineKind::cublas_sgemm;  // which library call (task/baselines.h)
  std::map<std::string, std::string> args;         // its keys (baseline_spec(kind).keys): m, n, k, a, b, c ... as text
};

// Which tensor-core precision the task lets a kernel use for its flops, for the physical-limit
// gate: its flops may then run at that precision's peak instead of the FP32 FMA peak.
enum class TensorCores { none, tf32, f16, fp8, int8 };
std::string_view to_string(TensorCores t);
std::optional<TensorCores> tensor_cores_from_string(std::string_view s);

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
  // Every opcode family the task names ("wgmma.mma_async"), in order, once each.
  std::vector<std::string> required_instructions;
  // What must be proven: one entry per required_instructions line of the task file, each the
  // families that may carry it ("mma.sync | wgmma.mma_async": either will do); a plain entry is
  // a group of one.
  std::vector<std::vector<std::string>> required_groups;
  // [min_work]: per required family, the least work (multiply-adds, bytes, else warp executions) one case must show in the
  // prove stage's count (an expression of the sizes), so that a family used for a token part
  // of the work (one mma while FMAs do the rest) fails.
  std::map<std::string, SizeExpr> min_executed;
  std::string min_target = "sm_80";
  double time_budget_s = 10;
  // The size sets compute-sanitizer's tools run on, when the task names them (sanitize_sizes);
  // empty: each tool's default (docs/task-format.md). Under racecheck a kernel runs hundreds
  // of times slower, so a compute-heavy task names a small set where its pipeline still turns.
  std::vector<std::string> sanitize_sizes;
  // The size sets the CPU engine verifies on, when the task names them (cpu_sizes); empty: the
  // default of docs/task-format.md (every set whose buffers total at most 4 MiB, else the
  // smallest shown one). An interpreter runs a kernel some thousand times slower than a GPU,
  // so a task names sets small enough to run in a second yet with its tails and odd shapes.
  std::vector<std::string> cpu_sizes;
  // [roofline] (required): the bytes a kernel must move and the flops it must do, for
  // "fraction of peak" in reports and for the physical-limit gate of the time stage. Both
  // are set once a task has loaded; bytes evaluate above zero on every size set.
  std::optional<SizeExpr> roofline_bytes, roofline_flops;
  TensorCores tensor_cores = TensorCores::none;
  // The device heap a candidate may draw on with malloc/free (device_heap_bytes; 0 when absent).
  // 0: a candidate that declares the device allocator fails the assemble stage's policy
  // (eval/limits.h), since a heap outlives a launch and could carry results between trials;
  // above 0, the GPU worker sets the context's heap to this size.
  uint64_t device_heap_bytes = 0;

  const Param* find_param(std::string_view name) const;
  Tolerance tolerance_for(const std::string& output) const;
  std::vector<const SizeSet*> size_sets(bool include_held_back) const;
  // The distribution of buffer `p` on size set `s`: the set's override, else the param's own.
  const Distribution& init_for(const SizeSet& s, const Param& p) const;
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
