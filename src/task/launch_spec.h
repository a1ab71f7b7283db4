// A candidate's launch spec: how the harness launches the model's PTX, in the terms host code
// would use (grid, block, cluster, dynamic shared memory, scratch buffers, tensor-map
// choices), with values as expressions over the task's size symbols. It sits in the PTX as
// `// @launch ...` comment lines, so one file is a whole candidate, or in a TOML file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptx/ast.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::task {

// A buffer the harness allocates and zero-fills for the candidate (partial sums of a
// multi-pass reduction, a scan's block totals).
struct Scratch {
  std::string name;
  DType dtype = DType::f32;
  SizeExpr count;
  int line = 0;
};

// The candidate's choices for a task's tensor map (cuTensorMapEncodeTiled arguments).
struct TensorMapChoice {
  std::string name;
  std::vector<SizeExpr> box;             // innermost first
  std::string swizzle = "none";          // none, 32B, 64B, 128B
  std::string interleave = "none";       // none, 16B, 32B
  std::string l2_promotion = "none";     // none, 64B, 128B, 256B
  std::string oob_fill = "zero";         // zero, nan
  int line = 0;
};

struct LaunchSpec {
  std::vector<Launch> launches;  // run in order; each names an entry (default: the task's)
  std::vector<int> launch_lines;
  std::vector<Scratch> scratch;
  std::vector<TensorMapChoice> tensor_maps;
};

// Whether a line is one of the spec's comment lines (`// @launch`, `// @scratch`, `// @tensormap`).
bool is_launch_spec_line(std::string_view line);

// Reads `// @launch`, `// @scratch` and `// @tensormap` lines. Errors name file and line.
Result<LaunchSpec> parse_launch_comments(std::string_view text, const std::string& file_name);
// Reads [[launch]], [[scratch]] and [[tensor_map]] tables from a TOML launch file.
Result<LaunchSpec> parse_launch_toml(std::string_view text, const std::string& file_name);

// The spec against the task and the candidate's PTX: entries exist, argument names are task
// parameters or scratch buffers, counts and sizes match each entry's .param list, tensor-map
// choices name the task's tensor maps. Fills in default entries and arguments.
Status check_launch_spec(LaunchSpec& spec, const Task& task, const ptx::Module& module, const std::string& file_name);

}  // namespace ptxforge::task
