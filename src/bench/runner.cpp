#include "bench/runner.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "agent/hardware.h"
#include "agent/session_layout.h"
#include "task/seeds.h"
#include "util/text.h"

namespace ptxforge::bench {

namespace fs = std::filesystem;

std::string bench_config_copy(const std::string& bench_dir) { return bench_dir + "/bench.toml"; }
std::string bench_store_path(const std::string& bench_dir) { return bench_dir + "/bench.db"; }
std::string cell_session_dir(const std::string& bench_dir, const Cell& cell) { return bench_dir + "/cells/" + cell.folder; }

Result<BenchConfig> prepare_bench_folder(const std::string& config_path, const std::string& bench_dir, std::string* config_text) {
  auto text = read_file(config_path);
  if (!text) return Error{fmt::format("cannot read {}: {}", config_path, text.error().message)};
  auto config = parse_config(*text, config_path);
  if (!config) return config.error();
  std::error_code ec;
  fs::create_directories(bench_dir + "/cells", ec);
  if (ec) return Error{fmt::format("cannot create the bench folder {}: {}", bench_dir, ec.message())};
  std::string copy = bench_config_copy(bench_dir);
  if (auto held = read_file(copy)) {
    if (*held != *text)
      return Error{fmt::format("{} holds a bench with another definition ({}); give a new --out folder, or run {} again "
                               "to continue that bench",
                               bench_dir, copy, copy)};
  } else if (auto st = write_file(copy, *text); !st) {
    return Error{fmt::format("cannot write {}: {}", copy, st.error().message)};
  }
  if (config_text) *config_text = *text;
  return config;
}

Result<uint64_t> bench_seed(const BenchConfig& c, Store& store, const Shard& shard) {
  if (!c.seeds.empty()) return c.seeds.front();
  if (shard.count > 1)
    return Error{"--shard needs the seeds in the bench definition (seeds = [1, 2, ...]): every shard must derive the "
                 "same cells, and a fresh seed would differ from shard to shard"};
  if (auto kept = store.meta("bench_seed")) {
    if (auto s = task::parse_seed(*kept)) return *s;
  }
  uint64_t s = task::fresh_seed();
  if (auto st = store.set_meta("bench_seed", task::seed_text(s)); !st) return st.error();
  return s;
}

Status record_cell(Store& store, const BenchConfig& c, const Cell& cell, const agent::CompileResult& res,
                   const std::string& session_rel, const std::string& session_dir) {
  CellRow row;
  row.id = cell.id;
  row.index = cell.index;
  row.model = cell.model->name;
  row.model_spec = cell.model->options.model;
  row.task = cell.task;
  row.level = cell.level;
  row.has_library = cell.has_library;
  row.mode = cell.mode == agent::Mode::translate ? "translate" : "implement";
  row.knowledge = std::string(agent::knowledge_level_name(cell.knowledge));
  row.seed = task::seed_text(cell.seed);
  row.samples = c.options.samples;
  row.rounds = c.options.rounds;
  row.status = res.status_text();
  row.finished = res.status != agent::SessionStatus::stopped && res.status != agent::SessionStatus::pending;
  row.session = session_rel;
  row.prompt_tokens = res.prompt_tokens;
  row.completion_tokens = res.completion_tokens;
  row.cost_usd = res.cost_usd;
  row.priced = cell.model->options.prices.known;
  return store.put_cell(row, read_session_rounds(cell.id, session_dir));
}

namespace {

std::string duration_text(double seconds) {
  long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

// Prints progress: one line per finished cell, or on a terminal one line redrawn in place.
class ProgressLine {
 public:
  ProgressLine(std::ostream& out, bool tty, BenchProgress start)
      : out_(out), tty_(tty), p_(start), t0_(std::chrono::steady_clock::now()) {}

  void cell_done(const Cell& cell, const agent::CompileResult* res, const std::string& error) {
    std::lock_guard lock(m_);
    ++p_.done;
    ++ran_;
    std::string what = error.empty() ? res->status_text() : "error: " + error;
    if (res && res->status == agent::SessionStatus::verified) ++p_.verified;
    if (!error.empty() || (res && res->status == agent::SessionStatus::stopped)) ++p_.stopped;
    if (tty_) {
      out_ << "\r\033[K" << line() << std::flush;
      if (!error.empty()) out_ << "\n" << cell.id << ": " << what << "\n";
    } else {
      out_ << fmt::format("[{}/{}] {}: {}", p_.done, p_.cells, cell.id, what);
      if (res && res->best && res->best->speedup_vs_nvcc > 0) out_ << fmt::format(" ({:.2f}x nvcc)", res->best->speedup_vs_nvcc);
      out_ << "\n" << std::flush;
    }
  }
  void start() {
    std::lock_guard lock(m_);
    if (tty_) out_ << line() << std::flush;
    else out_ << fmt::format("bench: {} cells, {} finished before\n", p_.cells, p_.skipped) << std::flush;
  }
  void finish() {
    std::lock_guard lock(m_);
    if (tty_) out_ << "\r\033[K" << line() << "\n" << std::flush;
  }
  BenchProgress progress() const {
    std::lock_guard lock(m_);
    return p_;
  }

 private:
  std::string line() const {
    std::string eta = "-";
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    int left = p_.cells - p_.done;
    if (ran_ > 0 && left > 0) eta = duration_text(elapsed / ran_ * left);
    if (left == 0) eta = "done";
    return fmt::format("bench: {}/{} cells, {} verified, {} stopped, ETA {}", p_.done, p_.cells, p_.verified, p_.stopped, eta);
  }
  std::ostream& out_;
  bool tty_;
  mutable std::mutex m_;
  BenchProgress p_;
  int ran_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

Result<BenchProgress> run_bench(const RunBenchOptions& o, const agent::ProviderFactory& make, agent::GpuPool& gpus,
                                std::ostream& log) {
  auto config = prepare_bench_folder(o.config_path, o.out, nullptr);
  if (!config) return config.error();
  resolve_arch(*config);
  auto store = Store::open(bench_store_path(o.out));
  if (!store) return store.error();
  auto seed = bench_seed(*config, *store, o.shard);
  if (!seed) return seed.error();
  if (auto st = store->set_meta("name", config->name); !st) return st.error();
  auto all = expand(*config, *seed);
  if (!all) return all.error();
  std::vector<Cell> cells = shard_cells(*all, o.shard);
  if (auto st = store->set_meta("cells_in_grid", std::to_string(all->size())); !st) return st.error();

  // Every cell's options are checked before the first model call, so a bad definition stops
  // at once instead of after hours of other cells.
  for (auto& cell : cells)
    if (auto st = agent::validate_options(cell_options(*config, cell, cell_session_dir(o.out, cell))); !st)
      return Error{fmt::format("cell {}: {}", cell.id, st.error().message)};

  BenchProgress start;
  start.cells = static_cast<int>(cells.size());
  std::vector<const Cell*> todo;
  for (auto& cell : cells) {
    auto held = store->cell(cell.id);
    if (held && held->finished) {
      ++start.skipped;
      ++start.done;
      if (held->status == "verified") ++start.verified;
    } else {
      todo.push_back(&cell);
    }
  }
  ProgressLine progress(log, o.tty, start);
  progress.start();

  std::mutex store_mutex;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < todo.size(); i = next++) {
      const Cell& cell = *todo[i];
      std::string dir = cell_session_dir(o.out, cell);
      bool started = agent::file_exists(agent::layout::session_options(dir));
      auto res = started ? agent::resume(dir, make, gpus) : agent::compile(cell_options(*config, cell, dir), make, gpus);
      if (!res) {
        progress.cell_done(cell, nullptr, res.error().message);
        continue;
      }
      std::string error;
      {
        std::lock_guard lock(store_mutex);
        if (auto st = record_cell(*store, *config, cell, *res, "cells/" + cell.folder, dir); !st) error = st.error().message;
      }
      progress.cell_done(cell, &*res, error);
    }
  };
  int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(todo.size())));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  progress.finish();
  return progress.progress();
}

Status merge_benches(const std::string& out, const std::vector<std::string>& sources) {
  if (sources.empty()) return Error{"give the bench folders to merge"};
  std::string config;
  for (auto& src : sources) {
    auto text = read_file(bench_config_copy(src));
    if (!text) return Error{fmt::format("{} is not a bench folder (no bench.toml)", src)};
    if (config.empty()) config = *text;
    else if (*text != config)
      return Error{fmt::format("{} ran another bench definition than {}: only shards of one bench merge", src, sources.front())};
  }
  std::error_code ec;
  fs::create_directories(out + "/cells", ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", out, ec.message())};
  if (auto held = read_file(bench_config_copy(out))) {
    if (*held != config) return Error{fmt::format("{} holds another bench", out)};
  } else if (auto st = write_file(bench_config_copy(out), config); !st) {
    return st;
  }
  auto target = Store::open(bench_store_path(out));
  if (!target) return target.error();
  for (auto& src : sources) {
    if (!agent::file_exists(bench_store_path(src))) return Error{fmt::format("{} has no results store (bench.db)", src)};
    auto store = Store::open(bench_store_path(src));
    if (!store) return store.error();
    for (auto key : {"name", "cells_in_grid", "bench_seed"}) {
      auto v = store->meta(key);
      if (!v) continue;
      auto mine = target->meta(key);
      if (mine && *mine != *v)
        return Error{fmt::format("{}: {} is {} here and {} in the merged store", src, key, *v, *mine)};
      if (auto st = target->set_meta(key, *v); !st) return st;
    }
    auto cells = store->cells();
    if (!cells) return cells.error();
    auto rounds = store->rounds();
    if (!rounds) return rounds.error();
    for (auto& c : *cells) {
      auto held = target->cell(c.id);
      if (held && held->finished && !c.finished) continue;
      std::vector<RoundRow> mine;
      for (auto& r : *rounds)
        if (r.cell == c.id) mine.push_back(r);
      if (auto st = target->put_cell(c, mine); !st) return st;
      fs::path from = fs::path(src) / c.session, to = fs::path(out) / c.session;
      if (fs::exists(from, ec) && fs::weakly_canonical(from, ec) != fs::weakly_canonical(to, ec)) {
        fs::remove_all(to, ec);
        fs::create_directories(to.parent_path(), ec);
        fs::copy(from, to, fs::copy_options::recursive, ec);
        if (ec) return Error{fmt::format("copying {} to {}: {}", from.string(), to.string(), ec.message())};
      }
    }
  }
  return ok_status();
}

}  // namespace ptxforge::bench
