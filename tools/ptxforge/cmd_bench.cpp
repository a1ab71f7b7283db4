// ptxforge bench: models × tasks × samples as one resumable run with a results store.
//   bench CONFIG.toml [--out DIR] [--shard i/N] [--gpus all|0,1] [--jobs N]   run (or continue)
//   bench report DIR [--format md|json|html] [-o FILE]                         the metrics
//   bench export DIR --table T [--format jsonl|csv] [-o FILE]                  raw rows
//   bench merge --out DIR SHARD_DIR...                                         shards into one
// Exit 0: done (every cell of the slice finished); 1: some cell stopped (run it again to
// retry); 2: usage or environment.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "bench/report.h"
#include "bench/runner.h"
#include "cli_parse.h"

namespace ptxforge::cli {

namespace {

int write_output(const std::string& text, const std::string& path, const char* who) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return kExitOk;
  }
  if (auto st = write_file(path, text); !st) {
    std::cerr << "ptxforge bench " << who << ": cannot write " << path << ": " << st.error().message << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

Result<bench::Store> open_bench(const std::string& dir) {
  std::string db = bench::bench_store_path(dir);
  if (!std::filesystem::exists(db)) return Error{fmt::format("{} is not a bench folder: it has no bench.db", dir)};
  return bench::Store::open(db);
}

int bench_report(const std::vector<std::string>& args) {
  CLI::App app("The metrics of a bench: rates, pass@k, fast_p, speedups, proofs, rounds, cost, failures", "bench report");
  std::string dir, format = "md", out;
  app.add_option("dir", dir, "the bench folder")->required();
  app.add_option("--format", format, "md, json or html")->check(CLI::IsMember({"md", "markdown", "json", "html"}))->capture_default_str();
  app.add_option("-o,--output", out, "write the report here (default: standard output)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto store = open_bench(dir);
  if (!store) {
    std::cerr << "ptxforge bench report: " << store.error().message << "\n";
    return kExitUsage;
  }
  auto m = bench::compute_metrics(*store);
  if (!m) {
    std::cerr << "ptxforge bench report: " << m.error().message << "\n";
    return kExitUsage;
  }
  return write_output(bench::render(*m, *bench::parse_report_format(format)), out, "report");
}

int bench_export(const std::vector<std::string>& args) {
  CLI::App app("Rows of a bench's results store as JSON lines or CSV", "bench export");
  std::string dir, table, format = "jsonl", out;
  app.add_option("dir", dir, "the bench folder")->required();
  app.add_option("--table", table, "meta, cells, rounds, stages, timings, resources, proofs or diagnostics")->required();
  app.add_option("--format", format, "jsonl or csv")->check(CLI::IsMember({"jsonl", "csv"}))->capture_default_str();
  app.add_option("-o,--output", out, "write here (default: standard output)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto store = open_bench(dir);
  if (!store) {
    std::cerr << "ptxforge bench export: " << store.error().message << "\n";
    return kExitUsage;
  }
  std::string text;
  if (format == "csv") {
    auto csv = store->export_csv(table);
    if (!csv) {
      std::cerr << "ptxforge bench export: " << csv.error().message << "\n";
      return kExitUsage;
    }
    text = *csv;
  } else {
    auto rows = store->export_jsonl(table);
    if (!rows) {
      std::cerr << "ptxforge bench export: " << rows.error().message << "\n";
      return kExitUsage;
    }
    for (auto& r : *rows) text += r + "\n";
  }
  return write_output(text, out, "export");
}

int bench_merge(const std::vector<std::string>& args) {
  CLI::App app("Merge the folders of a bench's shards into one bench folder", "bench merge");
  std::string out;
  std::vector<std::string> sources;
  app.add_option("--out", out, "the merged bench folder")->required();
  app.add_option("shards", sources, "the shards' bench folders")->required();
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (auto st = bench::merge_benches(out, sources); !st) {
    std::cerr << "ptxforge bench merge: " << st.error().message << "\n";
    return kExitUsage;
  }
  auto store = open_bench(out);
  auto cells = store ? store->cells() : Result<std::vector<bench::CellRow>>(store.error());
  if (cells) std::cout << fmt::format("merged {} bench folders into {}: {} cells\n", sources.size(), out, cells->size());
  return kExitOk;
}

int bench_run(const std::vector<std::string>& args) {
  CLI::App app("Run a bench: every cell of models × tasks × modes × knowledge × seeds as a compile session", "bench");
  bench::RunBenchOptions o;
  std::string shard = "0/1", gpus_text = "all";
  app.add_option("config", o.config_path, "the bench definition (bench.toml; docs/bench.md)")->required();
  app.add_option("--out", o.out, "the bench folder (default: benches/<config name>)");
  app.add_option("--shard", shard, "run only cells i, i+N, i+2N, ... of the grid (i/N; needs seeds in the definition)")
      ->capture_default_str();
  app.add_option("--gpus", gpus_text, "GPUs the cells' candidates spread over: all, or ordinals such as 0,1")->capture_default_str();
  app.add_option("--jobs", o.jobs, "cells run side by side")->check(CLI::Range(1, 256))->capture_default_str();
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto s = bench::parse_shard(shard);
  if (!s) {
    std::cerr << "ptxforge bench: --shard: " << s.error().message << "\n";
    return kExitUsage;
  }
  o.shard = *s;
  auto gpus = agent::parse_gpu_list(gpus_text);
  if (!gpus) {
    std::cerr << "ptxforge bench: --gpus: " << gpus.error().message << "\n";
    return kExitUsage;
  }
  if (o.out.empty()) o.out = "benches/" + std::filesystem::path(o.config_path).stem().string();
  o.tty = isatty(2) == 1;
  agent::GpuPool pool = agent::GpuPool::for_ordinals(agent::resolve_gpus(*gpus));
  auto res = bench::run_bench(o, llm::make_provider, pool, std::cerr);
  if (!res) {
    std::cerr << "ptxforge bench: " << res.error().message << "\n";
    return kExitUsage;
  }
  std::cout << fmt::format("bench {}: {} cells, {} verified, {} stopped; report: ptxforge bench report {}\n", o.out, res->cells,
                           res->verified, res->stopped, o.out);
  return res->stopped ? kExitInputErrors : kExitOk;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "report") return bench_report(rest);
    if (args[0] == "export") return bench_export(rest);
    if (args[0] == "merge") return bench_merge(rest);
  }
  return bench_run(args);
}

}  // namespace ptxforge::cli
