// The engine's throughput, run by hand (the tests are disabled: timings on a shared machine
// are not a pass/fail matter): lane-instructions per second of one host thread on an ALU loop
// and on a memory-heavy loop (global and shared loads and stores, every one of them checked by
// the race detector). Run with --gtest_also_run_disabled_tests --gtest_filter='EmuThroughput.*'.
#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include "emu/engine.h"
#include "emu/machine_testing.h"

namespace ptxforge::emu {
namespace {

double rate(Machine& m, std::string_view entry, const std::vector<ParamBytes>& p, uint64_t& lanes) {
  LaunchConfig cfg;
  cfg.grid = {16, 1, 1};
  cfg.block = {256, 1, 1};
  auto t0 = std::chrono::steady_clock::now();
  auto r = m.launch(entry, cfg, p);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.ok()) << r.finding->message;
  lanes = r.lane_instructions;
  return double(r.lane_instructions) / s;
}

TEST(EmuThroughput, DISABLED_AluLoopAndMemoryLoop) {
  std::string src = std::string(kHeader) + R"(
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
  auto b = build(src);
  ASSERT_TRUE(b.m);
  uint64_t x = floats(*b.m, "x", std::vector<float>(4096, 1.0f));
  uint64_t y = b.m->alloc("y", 4096 * 4, Init::unwritten);
  uint64_t lanes = 0;
  double alu = rate(*b.m, "alu", {u64p(y)}, lanes);
  std::printf("ALU loop: %llu lane-instructions, %.1f M/s\n", static_cast<unsigned long long>(lanes), alu / 1e6);
  double mem = rate(*b.m, "mem", {u64p(x), u64p(y)}, lanes);
  std::printf("memory loop: %llu lane-instructions, %.1f M/s\n", static_cast<unsigned long long>(lanes), mem / 1e6);
}

}  // namespace
}  // namespace ptxforge::emu
