// Front-end speed against ptxas, over the corpus modules that tests/corpus/run.sh writes
// (or any .ptx files given with --corpus DIR). Reports parse+validate time per module and
// MB/s, and ptxas's time per module on the same files, with the median ratio.
//   build/<dir>/perf/frontend_perf --corpus build/tests/corpus
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "ptx/parser.h"
#include "toolchain/ptxas.h"
#include "util/heap.h"
#include "util/paths.h"
#include "util/text.h"

namespace fs = std::filesystem;
using namespace ptxforge;

namespace {

std::vector<std::pair<std::string, std::string>> g_modules;  // name, text

void BM_CheckCorpus(benchmark::State& state) {
  size_t bytes = 0;
  for (auto _ : state) {
    for (auto& [name, text] : g_modules) {
      auto r = ptx::check_borrowed_source(text);  // as `ptxforge check` does
      benchmark::DoNotOptimize(r.diags.list().size());
      bytes += text.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));  // printed in MiB/s (1024-based)
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(bytes) / 1e6, benchmark::Counter::kIsRate);
  state.counters["modules"] = static_cast<double>(g_modules.size());
}

// Which modules a parse benchmark reads: all, or only those nvcc built with -G (most of
// their bytes are DWARF sections) or only the others (instructions and declarations).
enum class Subset { all, debug, code };

bool in_subset(const std::string& name, Subset s) {
  bool debug = name.ends_with("_G.ptx");
  return s == Subset::all || (s == Subset::debug) == debug;
}

void BM_ParseOnlyCorpus(benchmark::State& state, Subset subset) {
  size_t bytes = 0;
  for (auto _ : state) {
    for (auto& [name, text] : g_modules) {
      if (!in_subset(name, subset)) continue;
      Diagnostics d;
      auto m = ptx::parse(text, d);
      benchmark::DoNotOptimize(m.items.size());
      bytes += text.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(bytes) / 1e6, benchmark::Counter::kIsRate);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Per module: the best of 5 runs of our check and one ptxas run (whole process, as a
// pipeline pays it), printed as a table with the median ratio.
void compare_with_ptxas() {
  if (!find_cuda_tool("ptxas")) {
    fmt::print("ptxas not found: no comparison\n");
    return;
  }
  std::vector<double> ours_us, ptxas_us, ratios;
  for (auto& [name, text] : g_modules) {
    double best = 1e18;
    for (int i = 0; i < 5; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = ptx::check_borrowed_source(text);  // as `ptxforge check` does
      benchmark::DoNotOptimize(r.diags.list().size());
      best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    toolchain::AssembleOptions opts;
    auto checked = ptx::check_source(text);
    auto d = checked.module.target_names();
    if (!d.empty()) opts.arch = d[0];
    if (checked.module.targets_debug()) opts.opt_level = 0;
    auto a = toolchain::assemble_with_ptxas(text, opts);
    if (!a) continue;
    double p = a->seconds * 1e6;
    ours_us.push_back(best);
    ptxas_us.push_back(p);
    ratios.push_back(p / best);
  }
  fmt::print("\nper module (median over {} modules): ptxforge check {:.1f} us, ptxas {:.0f} us, ratio {:.0f}x "
             "(min ratio {:.0f}x)\n",
             ratios.size(), median(ours_us), median(ptxas_us), median(ratios),
             ratios.empty() ? 0 : *std::min_element(ratios.begin(), ratios.end()));
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as `ptxforge check` does
  std::string dir = "build/tests/corpus";
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--corpus") == 0 && i + 1 < argc) {
      dir = argv[++i];
      continue;
    }
    rest.push_back(argv[i]);
  }
  if (!fs::is_directory(dir)) {
    fmt::print(stderr, "no corpus at {}: run the corpus test first (ctest -R corpus) or pass --corpus DIR\n", dir);
    return 2;
  }
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ptx")
      if (auto t = read_file(e.path().string())) g_modules.emplace_back(e.path().filename().string(), *t);
  std::sort(g_modules.begin(), g_modules.end());
  size_t total = 0;
  for (auto& m : g_modules) total += m.second.size();
  fmt::print("corpus: {} modules, {:.2f} MB from {}\n", g_modules.size(), total / 1e6, dir);
  benchmark::RegisterBenchmark("check_corpus", BM_CheckCorpus)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("parse_corpus", BM_ParseOnlyCorpus, Subset::all)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("parse_corpus_-G_modules", BM_ParseOnlyCorpus, Subset::debug)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("parse_corpus_other_modules", BM_ParseOnlyCorpus, Subset::code)
      ->Unit(benchmark::kMillisecond);
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  compare_with_ptxas();
  return 0;
}
