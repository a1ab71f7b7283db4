#include "ptx/instrument.h"

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "ptx/front_end.h"
#include "ptx/parser.h"
#include "testing/ptx_kernel.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::ptx {
namespace {

Result<Instrumented> instrument(const std::string& text, const std::vector<std::string>& families) {
  Diagnostics d;
  Module m = parse(text, d);
  EXPECT_FALSE(d.has_errors()) << text;
  return instrument_executed(text, m, families);
}

size_t count(std::string_view s, std::string_view what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string_view::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(Instrument, CountsEachInstructionOfEachFamilyOnItsOwnLine) {
  std::string text = testing::kernel(
      "mov.u32 %r1, %tid.x;\n"
      "setp.lt.u32 %p1, %r1, 7;\n"
      "@!%p1 add.u32 %r2, %r1, 1;\n"
      "L: add.u32 %r3, %r1, 2; mul.lo.u32 %r4, %r1, %r1;\n"
      "{ add.u32 %r5, %r1, 3; }\n");
  auto r = instrument(text, {"add", "mul.lo"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->sites, (std::vector<int>{3, 1}));
  ASSERT_EQ(r->slots.size(), 2u) << "one slot per family set and work class";
  EXPECT_EQ(r->slots[0].families, std::vector<size_t>{0});
  EXPECT_EQ(r->slots[0].sites, 3);
  EXPECT_EQ(count(r->ptx, "\n"), count(text, "\n")) << "inserted code stays on the lines it counts";
  EXPECT_EQ(count(r->ptx, "red.global.add.u64 [%__ptxforge_base+0], 1;"), 3u);
  EXPECT_EQ(count(r->ptx, "red.global.add.u64 [%__ptxforge_base+8], 1;"), 1u);
  // The counters live outside the module: no .global of the harness's, a hidden last parameter.
  EXPECT_EQ(r->ptx.find(".global .align"), std::string::npos) << r->ptx;
  EXPECT_NE(r->ptx.find(", .param .u64 __ptxforge_counters)"), std::string::npos) << r->ptx;
  EXPECT_NE(r->ptx.find("{ .reg .b64 %__ptxforge_base; ld.param.u64 %__ptxforge_base, [__ptxforge_counters];"),
            std::string::npos)
      << r->ptx;
  // The guarded add votes with its own guard, negation included, and keeps its guard.
  EXPECT_NE(r->ptx.find("vote.sync.ballot.b32 %__ptxforge_b, !%p1, %__ptxforge_m; neg.s32"), std::string::npos);
  EXPECT_NE(r->ptx.find("} @!%p1 add.u32 %r2, %r1, 1;"), std::string::npos);
  EXPECT_NE(r->ptx.find("L: { .reg .pred"), std::string::npos) << "a label still labels the counted instruction";
  auto checked = check_source(r->ptx);
  EXPECT_FALSE(checked.diags.has_errors()) << render_text(checked.diags, SourceText("instrumented.ptx", r->ptx)) << r->ptx;
}

TEST(Instrument, AnOldModuleIsRaisedToTheVersionActivemaskNeedsAndTheIncrementIsUsed) {
  std::string text =
      ".version 6.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 p) {\n"
      "  .reg .b32 %r<3>;\n  mov.u32 %r1, %tid.x;\n  shfl.sync.bfly.b32 %r2, %r1, 1, 31, 0xffffffff;\n  ret;\n}\n";
  Diagnostics d;
  Module m = parse(text, d);
  ASSERT_FALSE(d.has_errors());
  auto r = instrument_executed(text, m, {"shfl.sync"}, 12345);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->ptx.rfind(".version 6.2\n", 0), 0u) << r->ptx;
  EXPECT_NE(r->ptx.find("red.global.add.u64 [%__ptxforge_base+0], 12345;"), std::string::npos) << r->ptx;
  // (CUDA 13's ptxas no longer assembles for sm_70, the newest target a PTX 6.0 module can name.)
}

TEST(Instrument, ReservedNamesAreRefused) {
  std::string text = testing::kernel("add.u32 %r1, %r1, 1;", "sm_90a", "8.0",
                                     ".global .align 8 .u64 __ptxforge_executed[1];\n");
  auto r = instrument(text, {"add"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("reserves"), std::string::npos);
}

TEST(Instrument, NothingToCountIsNoError) {
  auto r = instrument(testing::kernel("mov.u32 %r1, 1;"), {"wgmma.mma_async"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->sites, std::vector<int>{0});
  EXPECT_FALSE(instrument(".version 8.0\n.target sm_90\n", {"add"})) << "no entry: nowhere to pass the counters";
}

// The candidate's own .global variables keep their declarations, so ptxas lays them out as in
// the binary that is timed; a required instruction in a .func is refused, not silently uncounted.
TEST(Instrument, TheCandidatesVariablesAreUntouchedAndDeviceFunctionsAreRefused) {
  std::string text = testing::kernel("add.u32 %r1, %r1, 1;", "sm_90a", "8.0", ".global .align 4 .u32 mine[3];\n");
  auto r = instrument(text, {"add"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(r->ptx.find(".global .align 4 .u32 mine[3];\n.visible .entry"), std::string::npos) << r->ptx;
  std::string with_func =
      ".version 8.0\n.target sm_90\n.address_size 64\n.func f() {\n  .reg .b32 %r<2>;\n  add.u32 %r1, %r1, 1;\n  ret;\n}\n"
      ".visible .entry k() {\n  call f;\n  ret;\n}\n";
  auto f = instrument(with_func, {"add"});
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("inside the device function 'f'"), std::string::npos) << f.error().message;
}

// DSMEM accesses count only in lanes whose target is another CTA: mapa by its rank operand, a
// .shared::cluster load by the owner of its address; a variable's own address never counts.
TEST(Instrument, ClusterAccessesCountOnlyTowardAnotherRank) {
  std::string text = testing::kernel(
      "mov.u32 %r1, %cluster_ctarank;\n"
      "mapa.shared::cluster.u32 %r2, %r1, %r1;\n"
      "ld.shared::cluster.u32 %r3, [%r2+4];\n",
      "sm_90a", "8.0", "");
  auto r = instrument(text, {"mapa", "ld.shared::cluster"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(r->ptx.find("mov.u32 %__ptxforge_c, %r1; mov.u32 %__ptxforge_m, %cluster_ctarank; setp.ne.u32"),
            std::string::npos)
      << r->ptx;
  EXPECT_NE(r->ptx.find("getctarank.shared::cluster.u32 %__ptxforge_c, %r2;"), std::string::npos) << r->ptx;
  if (!find_cuda_tool("ptxas")) return;
  toolchain::AssembleOptions o;
  o.arch = "sm_90a";
  auto a = toolchain::assemble_with_ptxas(r->ptx, o);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->ok) << a->log << r->ptx;
}

// Every SASS example (wgmma, TMA, mbarrier, cp.async, mma, setmaxnreg, clusters, ...) instrumented
// for the families it demonstrates still checks clean and still assembles: the counters sit
// next to .aligned and warpgroup instructions without upsetting ptxas.
TEST(Instrument, HopperExamplesStillAssemble) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  int files = 0;
  for (auto& entry : std::filesystem::directory_iterator(std::string(PTXFORGE_SOURCE_DIR) + "/tests/handwritten")) {
    if (!starts_with(entry.path().filename().string(), "sass_")) continue;
    auto text = read_file(entry.path().string());
    ASSERT_TRUE(text);
    std::vector<std::string> families;
    for (auto line : split(*text, '\n'))
      if (starts_with(line, "// sass-rows:"))
        for (auto w : split(trim(line.substr(13)), ' ')) families.emplace_back(w);
    auto r = instrument(*text, families);
    ASSERT_TRUE(r) << entry.path() << ": " << r.error().message;
    for (size_t i = 0; i < families.size(); ++i) EXPECT_GT(r->sites[i], 0) << entry.path() << " " << families[i];
    auto checked = check_source(r->ptx);
    EXPECT_FALSE(checked.diags.has_errors()) << render_text(checked.diags, SourceText(entry.path(), r->ptx));
    toolchain::AssembleOptions o;
    o.arch = "sm_90a";
    auto a = toolchain::assemble_with_ptxas(r->ptx, o);
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_TRUE(a->ok) << entry.path() << "\n" << a->log << r->ptx;
    ++files;
  }
  EXPECT_GE(files, 9);
}

// Every shipped solution of a task with required instructions, instrumented for them (hidden
// parameter, counters, DSMEM rank tests), still assembles: the copy prove runs can be built.
TEST(Instrument, ShippedSolutionsStillAssemble) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  int files = 0;
  for (const char* level : {"level2", "level3"})
    for (auto& dir : std::filesystem::directory_iterator(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/" + level)) {
      auto text = read_file(dir.path().string() + "/solution.ptx");
      auto toml = read_file(dir.path().string() + "/task.toml");
      if (!text || !toml) continue;
      std::vector<std::string> families;
      for (auto line : split(*toml, '\n'))
        if (starts_with(line, "required_instructions = ["))
          for (auto part : split(line.substr(25, line.find(']') - 25), ','))
            for (auto alt : split(part, '|')) {
              std::string f(trim(alt));
              f.erase(std::remove(f.begin(), f.end(), '"'), f.end());
              if (!trim(f).empty()) families.emplace_back(trim(f));
            }
      auto r = instrument(*text, families);
      ASSERT_TRUE(r) << dir.path() << ": " << r.error().message;
      toolchain::AssembleOptions o;
      o.arch = text->find(".target sm_100a") != std::string::npos ? "sm_100a" : "sm_90a";  // the Blackwell tasks
      auto a = toolchain::assemble_with_ptxas(r->ptx, o);
      ASSERT_TRUE(a) << a.error().message;
      EXPECT_TRUE(a->ok) << dir.path() << "\n" << a->log;
      ++files;
    }
  EXPECT_GE(files, 8);
}

}  // namespace
}  // namespace ptxforge::ptx
