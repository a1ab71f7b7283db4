// fill_input's throughput on one large input, the shape that costs most per check: 64M f32
// elements (256 MB) filled by all the threads fill_input uses, and 512K filled by one thread
// (below fill_input's threshold for threads), for the distributions whose per-element cost
// differs most, into memory already touched. Input values come from a keyed ChaCha (task/prf.h); this shows what that costs.
//   build/<dir>/perf/fill_input_perf [--benchmark_filter=f32_64M]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "task/buffers.h"
#include "task/distribution.h"
#include "task/prf.h"

using namespace ptxforge;

namespace {

void BM_Fill(benchmark::State& state, std::string text, task::DType t, size_t count) {
  auto d = task::Distribution::parse(text);
  if (!d) {
    state.SkipWithError(d.error().message.c_str());
    return;
  }
  // Touched once before timing: the pages' first-touch faults are the allocation's cost, not
  // the generator's, and would swamp it on the first iteration.
  std::vector<uint8_t> bytes(count * task::dtype_size(t), 0);
  uint64_t seed = 1;
  for (auto _ : state) {
    task::fill_input(bytes.data(), t, count, *d, seed++, 0);
    benchmark::ClobberMemory();
  }
  state.counters["elem/s"] =
      benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
}

// The PRF alone, one thread, at a given round count: what fill_input pays per 8 elements.
void BM_PrfBlocks(benchmark::State& state, int rounds) {
  const task::Prf prf(task::Prf::from_seed(1).key(), rounds);
  std::vector<uint64_t> out(8 * 1024);
  uint64_t counter = 0;
  for (auto _ : state) {
    prf.blocks(0, counter, 1024, out.data());
    counter += 1024;
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["elem/s"] = benchmark::Counter(8.0 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const char* kForms[] = {"uniform(-1, 1)", "normal(0, 1)", "int(-100, 100)", "plant_max(sorted(normal(0, 1)), end)",
                          "ties(100, uniform(0, 1))"};
  for (const char* text : kForms) {
    benchmark::RegisterBenchmark((std::string("f32_64M/") + text).c_str(), BM_Fill, text, task::DType::f32,
                                 size_t{64} << 20)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("f32_512K_one_thread/") + text).c_str(), BM_Fill, text,
                                 task::DType::f32, size_t{512} << 10)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("f16_64M/normal(0, 1)", BM_Fill, "normal(0, 1)", task::DType::f16, size_t{64} << 20)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  for (int rounds : {8, 12, 20})
    benchmark::RegisterBenchmark(("prf_blocks/chacha" + std::to_string(rounds)).c_str(), BM_PrfBlocks, rounds)
        ->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
