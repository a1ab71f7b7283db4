// The CPU engine's throughput (docs/emu.md section 10): lane-instructions per second of one
// launch on an ALU-bound loop (fma, add, xor, setp, bra) and on a memory loop whose every
// global and shared access goes through the race detector, 16 CTAs of 256 threads each,
// through emu::Machine directly (no process, no job). The argument is the launch's host threads
// (LaunchConfig::host_threads; both loops are eligible to run their CTAs on several): /1 is the
// per-core figure, /2 and /4 what a pool of host threads gives on this machine.
// Reported as the counter lane_inst/s (wall time) beside Google Benchmark's CPU time of the
// calling thread only, and the counter host_threads (threads that ran CTAs of the last launch).
//   build/<dir>/perf/emu_perf [--benchmark_repetitions=3]
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emu/engine.h"
#include "ptx/front_end.h"

using namespace ptxforge;

namespace {

const char* kLoops = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry alu(.param .u64 y)
{
  .reg .pred %p;
  .reg .b32 %k, %u;
  .reg .f32 %a, %b;
  mov.u32 %u, %tid.x;
  cvt.rn.f32.u32 %a, %u;
  mov.f32 %b, 0f3F800000;
  mov.u32 %k, 0;
L:
  fma.rn.f32 %a, %a, %b, %b;
  add.f32 %b, %b, %a;
  xor.b32 %u, %u, %k;
  add.u32 %k, %k, 1;
  setp.lt.u32 %p, %k, 2000;
  @%p bra L;
  ret;
}
.visible .entry mem(.param .u64 x, .param .u64 y)
{
  .shared .align 4 .f32 s[256];
  .reg .pred %p;
  .reg .b32 %k, %t, %i, %sa;
  .reg .b64 %px, %py, %off;
  .reg .f32 %a, %b;
  ld.param.u64 %px, [x];
  ld.param.u64 %py, [y];
  mov.u32 %t, %tid.x;
  mov.u32 %i, %ctaid.x;
  mad.lo.u32 %i, %i, 256, %t;
  mul.wide.u32 %off, %i, 4;
  add.u64 %px, %px, %off;
  add.u64 %py, %py, %off;
  mov.u32 %sa, s;
  shl.b32 %t, %t, 2;
  add.u32 %sa, %sa, %t;
  mov.u32 %k, 0;
L:
  ld.global.f32 %a, [%px];
  st.shared.f32 [%sa], %a;
  ld.shared.f32 %b, [%sa];
  fma.rn.f32 %b, %b, 0f40000000, 0f3F800000;
  st.global.f32 [%py], %b;
  add.u32 %k, %k, 1;
  setp.lt.u32 %p, %k, 400;
  @%p bra L;
  ret;
}
)";

emu::ParamBytes u64p(uint64_t v) {
  emu::ParamBytes p(8);
  std::memcpy(p.data(), &v, 8);
  return p;
}

void run_loop(benchmark::State& state, const char* entry) {
  auto checked = ptx::check_source(kLoops);
  auto made = emu::Machine::create(checked.module);
  if (!std::holds_alternative<std::unique_ptr<emu::Machine>>(made)) {
    state.SkipWithError("the loops do not lower");
    return;
  }
  auto& m = *std::get<std::unique_ptr<emu::Machine>>(made);
  std::vector<float> ones(4096, 1.0f);
  uint64_t x = m.alloc("x", 4096 * 4, emu::Init::written);
  m.write(x, {reinterpret_cast<const uint8_t*>(ones.data()), ones.size() * 4});
  uint64_t y = m.alloc("y", 4096 * 4, emu::Init::unwritten);
  std::vector<emu::ParamBytes> params = std::string(entry) == "alu" ? std::vector<emu::ParamBytes>{u64p(y)}
                                                                    : std::vector<emu::ParamBytes>{u64p(x), u64p(y)};
  emu::LaunchConfig cfg;
  cfg.grid = {16, 1, 1};
  cfg.block = {256, 1, 1};
  cfg.host_threads = static_cast<uint32_t>(state.range(0));
  uint64_t lanes = 0;
  uint32_t used = 0;
  for (auto _ : state) {
    auto r = m.launch(entry, cfg, params);
    if (!r.ok()) {
      state.SkipWithError(r.finding->message.c_str());
      return;
    }
    lanes += r.lane_instructions;
    used = r.host_threads;
  }
  state.counters["lane_inst/s"] = benchmark::Counter(static_cast<double>(lanes), benchmark::Counter::kIsRate);
  state.counters["host_threads"] = used;
}

void BM_EmuAluLoop(benchmark::State& state) { run_loop(state, "alu"); }
void BM_EmuMemoryLoop(benchmark::State& state) { run_loop(state, "mem"); }

BENCHMARK(BM_EmuAluLoop)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EmuMemoryLoop)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
