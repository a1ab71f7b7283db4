// A bench's definition (bench.toml) and the grid it spans: models × tasks × modes × knowledge
// levels × seeds. Each point of the grid is a cell: one compile session of `samples`
// trajectories. Cells are listed in one fixed order, so a shard (`--shard i/N`) is the same
// slice on every machine and merged shards cover the grid exactly once. Format: docs/bench.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/compile.h"
#include "agent/options.h"
#include "util/result.h"

namespace ptxforge::bench {

struct ModelEntry {
  std::string name;  // the label in reports (default: the spec)
  // The bench's options with this model's own [[models]] keys read over them: spec (as
  // options.model), temperature, max_tokens, price. Its architecture is resolve_arch's.
  agent::CompileOptions options;
};

struct TaskSelection {
  std::vector<std::string> names;  // level1/saxpy or saxpy
  std::vector<std::string> globs;  // level1/*, */*gemm*
  std::vector<int> levels;         // keep tasks of these levels (filter)
  std::vector<std::string> tags;   // keep tasks with any of these tags (filter)
};

struct BenchConfig {
  std::string name;
  std::vector<ModelEntry> models;
  TaskSelection tasks;
  std::vector<agent::Mode> modes{agent::Mode::implement};
  std::vector<agent::KnowledgeLevel> knowledge{agent::KnowledgeLevel::templates};
  std::vector<uint64_t> seeds;  // session base seeds, one cell each; empty: one fresh seed per bench
  // Every cell's loop options: the top-level keys (samples, rounds, arch, hardware,
  // target_speedup) and [run]'s, spelled as the option table says (agent/options.h); a key
  // left out keeps the one default. The architecture stays "" (the GPU's) until resolve_arch.
  agent::CompileOptions options = agent::default_options();
  // require_gpu_verify = true: only a GPU verifies (every cell runs with --device gpu), so a
  // kernel the CPU engine alone passed never counts; [run] device = "cpu" beside it is an error.
  bool require_gpu_verify = false;
};

// Reads bench.toml; every problem is listed in the error, with the file name and the line.
Result<BenchConfig> parse_config(std::string_view toml_text, const std::string& file_name);
Result<BenchConfig> load_config(const std::string& path);

struct Cell {
  int index = 0;            // in the grid's order
  std::string id;           // "<model>/<level>/<task>/<mode>/<knowledge>/seed-<k>": stable across runs
  std::string folder;       // its session folder's name under cells/
  const ModelEntry* model = nullptr;
  std::string task;         // "level1/saxpy"
  std::string task_dir;
  int level = 1;
  bool has_library = false; // the task has a library baseline
  agent::Mode mode = agent::Mode::implement;
  agent::KnowledgeLevel knowledge = agent::KnowledgeLevel::templates;
  int seed_index = 0;       // which of the config's seeds (1-based)
  uint64_t seed = 0;
};

// The grid, in its fixed order. `bench_seed` stands in for a config without seeds.
Result<std::vector<Cell>> expand(const BenchConfig& c, uint64_t bench_seed);

// `--shard i/N`: cells whose index is i modulo N.
struct Shard {
  int index = 0, count = 1;
};
Result<Shard> parse_shard(std::string_view text);
std::vector<Cell> shard_cells(const std::vector<Cell>& cells, Shard s);

// An architecture left to the GPU becomes the hardware profile's, else the GPU's, else sm_90a
// (asked once, for every model).
void resolve_arch(BenchConfig& c);

// The compile options of one cell (its session folder is `out`).
agent::CompileOptions cell_options(const BenchConfig& c, const Cell& cell, const std::string& out);

}  // namespace ptxforge::bench
