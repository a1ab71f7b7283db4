// The vendor-library baselines a task may name in [baseline] library = "...": one row each, with
// everything the task layer knows of it (its id in task.toml, the name reports show, the keys it
// takes and which of them are size expressions, and the checks of its operand types). The
// worker runs each with a runner of its own (worker/vendor/library_baseline.cpp), chosen by
// the same enum, so a new baseline is one row here and one runner there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptxforge::task {

struct Task;
struct Baseline;

enum class BaselineKind { cublas_sgemm, cublas_sgemv, cublaslt_matmul, cudnn_sdpa };

// A problem with a [baseline] table that the keys alone do not show: `key` is the key to point
// at (empty: the library line), `message` says what is wrong and what it takes.
struct BaselineProblem {
  std::string key;
  std::string message;
};

struct BaselineSpec {
  BaselineKind kind;
  std::string_view id;            // [baseline] library = "cublas_sgemm"
  std::string_view display_name;  // "cuBLAS sgemm", in reports beside the library's time
  std::vector<std::string_view> keys;           // every key it takes, "library" first
  std::vector<std::string_view> size_keys;      // keys whose values are size expressions
  std::vector<std::string_view> optional_keys;  // keys it may go without
  // The operand types and roles it can compute with; nullptr: any float buffers.
  std::vector<BaselineProblem> (*check)(const Task& task, const Baseline& base) = nullptr;

  bool takes(std::string_view key) const;
  bool is_size(std::string_view key) const;
  bool is_optional(std::string_view key) const;
};

const std::vector<BaselineSpec>& baseline_specs();
const BaselineSpec& baseline_spec(BaselineKind kind);
const BaselineSpec* find_baseline(std::string_view id);  // nullptr: no such baseline
std::string known_baseline_ids();                         // "cublas_sgemm, cublas_sgemv, ..."

}  // namespace ptxforge::task
