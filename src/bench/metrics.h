// What a bench measured, computed from its store alone: rates at each stage, pass@k with the
// unbiased estimator, fast_p against nvcc and against the vendor library, geometric-mean
// speedups, proof rates, rounds to the first verified kernel, tokens and cost per verified
// kernel, a failure taxonomy and translate mode's model-vs-nvcc table. Nothing here reads a
// clock or a path, so the same cells give the same metrics however they were run (sharded,
// resumed, on other machines). Definitions: docs/bench.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/store.h"

namespace ptxforge::bench {

struct Rate {
  int hits = 0, of = 0;
  double value() const { return of ? static_cast<double>(hits) / of : 0; }
};

// The unbiased estimate of pass@k from n samples with c passing: 1 - C(n-c, k) / C(n, k).
double pass_at_k(int n, int c, int k);

inline const std::vector<double> kFastP = {0, 0.5, 0.8, 1.0, 1.5, 2.0};

struct FastP {
  double p = 0;
  Rate rate;  // trajectories verified and (for p > 0) faster than p times the base
};

// One arm of the bench: a model in one mode at one knowledge level.
struct ArmMetrics {
  std::string label;  // the model, with the mode and knowledge where the bench varies them
  std::string model, mode, knowledge;
  int cells = 0, trajectories = 0;
  bool gpu_ran = false;  // some round of this arm reached GPU verification
  bool engine_ran = false;  // some round of this arm was verified (or failed verify) on the CPU engine
  // Per trajectory: at its first round, and by its end (any round).
  Rate extracted_first, checked_first, assembled_first, verified_first;
  Rate extracted, checked, assembled, verified;  // verified: on a GPU
  // Trajectories the CPU engine verified and no GPU did (not in `verified`, pass@k or fast_p:
  // those hold GPU verdicts only).
  Rate verified_cpu;
  std::vector<std::pair<int, double>> pass_at;            // k -> mean over cells, verified
  std::vector<std::pair<int, double>> assembled_at;       // the same for reaching ptxas's approval
  std::vector<FastP> fast_nvcc, fast_library;
  double geomean_nvcc = 0, geomean_library = 0;  // over verified, timed trajectories (0: none)
  int timed_nvcc = 0, timed_library = 0;
  Rate proven_sass, proven_executed;  // verified trajectories of tasks that require families
  std::vector<int> first_verified;    // [r-1]: trajectories first verified at round r; back(): never
  long prompt_tokens = 0, completion_tokens = 0;
  double cost_usd = 0;
  bool priced = false;
};

// A task's best result for one arm.
struct TaskResult {
  std::string task, arm;
  bool has_library = false;
  int verified = 0, trajectories = 0;
  int verified_cpu = 0;  // trajectories the CPU engine verified and no GPU did (not in `verified`)
  double best_nvcc = 0, best_library = 0;  // best verified speedup (0: none timed)
  std::string status;                      // the cell's status (the first cell's where seeds repeat it)
};

// A failure class with its count per arm (in the arms' order).
struct FailureClass {
  std::string axis;  // "stage", "diagnostic" or "failure kind"
  std::string name;
  std::vector<int> counts;
  int total = 0;
};

struct BenchMetrics {
  std::string name;
  int cells_in_grid = 0, cells = 0, finished = 0;
  std::vector<int> ks;  // the k of pass@k
  std::vector<ArmMetrics> arms;
  std::vector<std::string> tasks;    // in grid order
  std::vector<TaskResult> results;   // task-major, arms in order
  std::vector<FailureClass> failures;  // by axis, then count, then name
  std::vector<TaskResult> translate;   // translate mode's cells: the model vs nvcc on the same source
  std::map<int, int> rounds_per_gpu;   // GPU ordinal -> rounds it verified (-1: none)
};

BenchMetrics compute_metrics(const std::vector<CellRow>& cells, const std::vector<RoundRow>& rounds, const std::string& name,
                             int cells_in_grid);
Result<BenchMetrics> compute_metrics(const Store& store);

}  // namespace ptxforge::bench
