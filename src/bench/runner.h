// Runs a bench: every cell of the grid (or of one shard of it) as a compile session under the
// bench folder, several at once over one pool of GPUs, each finished cell written to the
// results store at once. A killed bench run again continues where it stopped: finished cells
// are skipped (the store knows them), a cell cut off mid-session is resumed from its folder
// (its saved rounds are not asked again), and a model call cut off mid-reply is answered from
// the response cache when the reply had arrived.
//
//   <bench>/bench.toml        the definition the bench runs (a copy; another one is refused)
//   <bench>/bench.db          the results store (docs/bench.md)
//   <bench>/cells/NNNN-slug/  one compile session per cell
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "agent/compile.h"
#include "agent/gpu_pool.h"
#include "bench/config.h"
#include "bench/store.h"
#include "util/result.h"

namespace ptxforge::bench {

struct RunBenchOptions {
  std::string config_path;  // bench.toml as given
  std::string out;          // the bench folder
  Shard shard;
  int jobs = 1;             // cells run side by side (their GPU stages share the pool)
  bool tty = false;         // progress as one line redrawn in place, else one line per cell
};

struct BenchProgress {
  int cells = 0;       // in this run's slice
  int skipped = 0;     // finished before this run
  int done = 0;        // finished so far (skipped included)
  int verified = 0;    // cells with a verified kernel
  int stopped = 0;     // cells that stopped (a provider error, ...): run the bench again to retry them
};

// The bench folder's files.
std::string bench_config_copy(const std::string& bench_dir);
std::string bench_store_path(const std::string& bench_dir);
std::string cell_session_dir(const std::string& bench_dir, const Cell& cell);

// Reads the bench definition and prepares the folder: a new folder gets a copy of the
// definition; a folder holding a different one is refused (start a new bench folder).
Result<BenchConfig> prepare_bench_folder(const std::string& config_path, const std::string& bench_dir, std::string* config_text);

// The bench's seed: the config's seeds decide the cells' seeds; a config without seeds gets
// one fresh seed at its first run, kept in the store, so a resumed bench keeps its inputs.
// Sharding needs explicit seeds (every shard must derive the same cells).
Result<uint64_t> bench_seed(const BenchConfig& c, Store& store, const Shard& shard);

// Writes one cell's session into the store (cells row and its rounds).
Status record_cell(Store& store, const BenchConfig& c, const Cell& cell, const agent::CompileResult& res,
                   const std::string& session_rel, const std::string& session_dir);

Result<BenchProgress> run_bench(const RunBenchOptions& o, const agent::ProviderFactory& make, agent::GpuPool& gpus,
                                std::ostream& log);

// `bench merge`: the cells of several bench folders (shards of one bench: the same
// bench.toml) into `out`, with their session folders, so `bench report out` gives what one
// unsharded run gives. A cell held by two sources is taken from the one that finished it.
Status merge_benches(const std::string& out, const std::vector<std::string>& sources);

}  // namespace ptxforge::bench
