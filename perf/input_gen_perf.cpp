// Host-side input generation, the CPU part of every check now that each run draws fresh
// seeds (the worker's cache no longer carries inputs from one compile round to the next).
// For every level-1 task: one input set of its largest size set (all in/inout buffers, as
// the worker draws them), and the timing rotation (8 sets). Reports elements per second.
//   build/<dir>/perf/input_gen_perf [--benchmark_filter=reduce_sum]
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "task/buffers.h"
#include "task/task_spec.h"

using namespace ptxforge;

namespace {

struct Input {
  task::DType dtype;
  task::Distribution init;
  size_t count;
  uint64_t stream;
};

// The inputs of a task's largest size set (by elements to draw).
std::vector<Input> largest_inputs(const task::Task& t, std::string& set_name) {
  std::vector<Input> best;
  size_t best_count = 0;
  for (auto& set : t.sizes) {
    std::vector<Input> in;
    size_t total = 0;
    for (size_t i = 0; i < t.params.size(); ++i) {
      auto& p = t.params[i];
      if (p.kind != task::Param::buffer || p.role == task::Role::out) continue;
      auto n = p.count.evaluate_int(set.values);
      if (!n) continue;
      in.push_back({p.dtype, p.init, static_cast<size_t>(*n), i});
      total += static_cast<size_t>(*n);
    }
    if (total > best_count) {
      best = in;
      best_count = total;
      set_name = set.name;
    }
  }
  return best;
}

void BM_Generate(benchmark::State& state, const task::Task& t, int sets) {
  std::string set_name;
  std::vector<Input> inputs = largest_inputs(t, set_name);
  std::vector<std::vector<uint8_t>> buffers;
  size_t elements = 0;
  for (auto& in : inputs) {
    buffers.emplace_back(in.count * task::dtype_size(in.dtype));
    elements += in.count;
  }
  uint64_t seed = 1;
  for (auto _ : state) {
    for (int s = 0; s < sets; ++s, ++seed)
      for (size_t k = 0; k < inputs.size(); ++k)
        task::fill_input(buffers[k].data(), inputs[k].dtype, inputs[k].count, inputs[k].init, seed, inputs[k].stream);
    benchmark::ClobberMemory();
  }
  state.SetLabel(set_name);
  state.counters["elements"] = static_cast<double>(elements) * sets;
  state.counters["elem/s"] =
      benchmark::Counter(static_cast<double>(elements) * sets, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  static std::vector<task::Task> tasks;
  auto dirs = task::list_task_dirs();
  if (dirs)
    for (auto& d : *dirs)
      if (d.find("/level1/") != std::string::npos)
        if (auto t = task::load_task(d)) tasks.push_back(std::move(*t));
  for (auto& t : tasks) {
    benchmark::RegisterBenchmark(("generate/" + t.name + "/one_set").c_str(), BM_Generate, std::cref(t), 1)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("generate/" + t.name + "/timing_rotation").c_str(), BM_Generate, std::cref(t), 8)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
