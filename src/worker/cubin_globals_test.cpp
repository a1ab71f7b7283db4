// Reading a cubin's device variables: ptxas's own output (module-scope variables, visible or
// not, initialised or not, and one declared inside a function), and damaged images.
#include "worker/cubin_globals.h"

#include <gtest/gtest.h>

#include <map>

#include "toolchain/ptxas.h"
#include "util/paths.h"

namespace ptxforge::gpu {
namespace {

const char* kModule = R"(.version 8.0
.target sm_80
.address_size 64
.global .u32 done_once;
.visible .global .u32 shown;
.global .u32 table[4] = {1, 2, 3, 4};
.global .b8 cache[100000];
.const .u32 limit = 9;
.visible .entry k(.param .u64 p)
{
  .global .u32 launches;
  .reg .b32 %r<3>;
  .reg .b64 %a;
  ld.global.u32 %r1, [launches];
  add.u32 %r1, %r1, 1;
  st.global.u32 [launches], %r1;
  st.global.u32 [done_once], %r1;
  st.global.u32 [shown], %r1;
  ld.global.u32 %r2, [table+4];
  ld.const.u32 %r2, [limit];
  st.global.u32 [table], %r2;
  mov.u64 %a, cache;
  st.global.u32 [%a+800], %r1;
  ret;
}
)";

TEST(CubinGlobals, FindsEveryDeviceVariableThatPtxasKeeps) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "needs ptxas";
  toolchain::AssembleOptions o;
  o.arch = "sm_80";
  auto a = toolchain::assemble(kModule, o);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->ok);
  auto sections = cubin_global_sections(a->cubin);
  ASSERT_TRUE(sections.ok()) << sections.error().message;
  std::map<std::string, GlobalSymbol> found;
  std::map<std::string, std::string> section_of;
  for (auto& s : *sections)
    for (auto& sym : s.symbols) {
      found[sym.name] = sym;
      section_of[sym.name] = s.name;
      EXPECT_LE(sym.offset + sym.size, s.size) << sym.name << " lies inside " << s.name;
    }
  for (const char* name : {"done_once", "shown", "table", "cache"}) EXPECT_TRUE(found.count(name)) << name;
  EXPECT_EQ(found["cache"].size, 100000u);
  EXPECT_EQ(found["table"].size, 16u);
  EXPECT_EQ(section_of["table"], ".nv.global.init") << "initialised variables";
  EXPECT_EQ(section_of["done_once"], ".nv.global");
  EXPECT_FALSE(found.count("limit")) << ".const cannot be written by a kernel";
  bool function_scope = false;  // ptxas names it itself ($__launches__N): only the cubin knows the name
  for (auto& [name, sym] : found) function_scope = function_scope || name.find("launches") != std::string::npos;
  EXPECT_TRUE(function_scope);
}

TEST(CubinGlobals, AModuleWithoutVariablesHasNone) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "needs ptxas";
  toolchain::AssembleOptions o;
  o.arch = "sm_80";
  auto a = toolchain::assemble(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n", o);
  ASSERT_TRUE(a.ok() && a->ok);
  auto sections = cubin_global_sections(a->cubin);
  ASSERT_TRUE(sections.ok()) << sections.error().message;
  for (auto& s : *sections) EXPECT_TRUE(s.symbols.empty()) << s.name;
}

// Variables of different alignments: ptxas orders them by alignment, so after a 4-byte
// variable aligned to 4096 comes one aligned to 1024, and the 1020 bytes between belong to no
// symbol: a kernel can keep a launch counter there. The section's size covers them, so
// restoring the section whole restores the gap.
TEST(CubinGlobals, TheSectionCoversTheGapsBetweenVariables) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "needs ptxas";
  toolchain::AssembleOptions o;
  o.arch = "sm_80";
  auto a = toolchain::assemble(R"(.version 8.0
.target sm_80
.address_size 64
.global .align 4096 .u32 big;
.global .align 1024 .b8 mid[8];
.visible .entry k()
{
  .reg .b64 %a;
  .reg .b32 %r;
  mov.u64 %a, big;
  ld.global.u32 %r, [%a+512];
  add.u32 %r, %r, 1;
  st.global.u32 [%a+512], %r;
  st.global.u32 [mid], %r;
  ret;
}
)",
                               o);
  ASSERT_TRUE(a.ok() && a->ok);
  auto sections = cubin_global_sections(a->cubin);
  ASSERT_TRUE(sections.ok()) << sections.error().message;
  const GlobalSection* g = nullptr;
  for (auto& sec : *sections)
    if (sec.name == ".nv.global") g = &sec;
  ASSERT_NE(g, nullptr);
  uint64_t named = 0;
  for (auto& sym : g->symbols) named += sym.size;
  EXPECT_EQ(named, 12u) << "a u32 and 8 bytes";
  EXPECT_GE(g->size, 1024u + 8) << "the section spans the gap between them";
  // The driver places the variables its own way: each at a 256-byte boundary, 0x100 apart
  // where the section has them 0x400 apart (an H100 and an H200, driver 580). The restore covers
  // each variable's slot to the next boundary, so the gap between them as placed too.
  auto plan = plan_global_restore(*sections, [&](const std::string& name) -> std::optional<DeviceRange> {
    if (name == "big") return DeviceRange{0x7f0000000000ull, 4};
    if (name == "mid") return DeviceRange{0x7f0000000100ull, 8};
    return std::nullopt;
  });
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->ranges.size(), 1u);
  EXPECT_EQ(plan->ranges[0].base, 0x7f0000000000ull);
  EXPECT_EQ(plan->ranges[0].size, 0x200u) << "both slots, the gap between the variables as placed included";
  EXPECT_TRUE(plan->unlocated.empty());
}

TEST(CubinGlobals, ARestoreCoversEverySlotAsPlacedOrReloads) {
  std::vector<GlobalSection> secs = {
      {".nv.global", 8192, {{"a", 0, 4}, {"$__local__1", 4096, 300}}},
      {".nv.global.init", 64, {{"t", 16, 16}, {"u", 32, 8}}},
      {".nv.global", 128, {{"hidden", 0, 4}}},  // the driver cannot place it: the module is reloaded instead
      {".nv.global", 64, {}},                   // bytes that no variable names: reloaded too
      {".nv.global", 0, {}},                    // empty: nothing to restore
  };
  std::map<std::string, DeviceRange> at = {
      {"a", {0x10200, 4}}, {"$__local__1", {0x10000, 300}}, {"t", {0x20000, 16}}, {"u", {0x20400, 8}}};
  auto resolve = [&](const std::string& n) -> std::optional<DeviceRange> {
    if (!at.count(n)) return std::nullopt;
    return at[n];
  };
  auto plan = plan_global_restore(secs, resolve);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->ranges.size(), 3u);
  EXPECT_EQ(plan->ranges[0].base, 0x10000u) << "300 bytes: two slots, and 'a' right after them";
  EXPECT_EQ(plan->ranges[0].size, 0x300u);
  EXPECT_EQ(plan->ranges[1].base, 0x20000u) << "'t' and 'u' are not side by side: a range each";
  EXPECT_EQ(plan->ranges[1].size, 0x100u);
  EXPECT_EQ(plan->ranges[2].base, 0x20400u);
  EXPECT_EQ(plan->ranges[2].size, 0x100u);
  for (auto& r : plan->ranges)
    EXPECT_FALSE(r.base <= 0x10300u && 0x10300u < r.base + r.size) << "the byte past the last slot is nobody's to restore";
  EXPECT_EQ(plan->unlocated, (std::vector<std::string>{".nv.global", ".nv.global"}));

  at["t"] = {0x10300, 16};  // the two sections placed side by side: one range covers both
  at["u"] = {0x10400, 8};
  plan = plan_global_restore({secs[0], secs[1]}, resolve);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->ranges.size(), 1u);
  EXPECT_EQ(plan->ranges[0].base, 0x10000u);
  EXPECT_EQ(plan->ranges[0].size, 0x500u);
  EXPECT_EQ(plan->ranges[0].name, ".nv.global+.nv.global.init");

  at["u"] = {0x10408, 8};  // off a 256-byte boundary: its slot is unknown, the module is reloaded
  plan = plan_global_restore({secs[0], secs[1]}, resolve);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->ranges.size(), 1u);
  EXPECT_EQ(plan->unlocated, std::vector<std::string>{".nv.global.init"});

  auto over = plan_global_restore(secs, resolve, 4096);
  ASSERT_FALSE(over.ok()) << "sections of more than the limit";
  EXPECT_NE(over.error().message.find("restored before every timed trial"), std::string::npos)
      << over.error().message;
}

TEST(CubinGlobals, DamagedImagesAreErrorsNotCrashes) {
  EXPECT_FALSE(cubin_global_sections("").ok());
  EXPECT_FALSE(cubin_global_sections("not an elf file at all, just text that goes on for a while....").ok());
  std::string header(64, '\0');
  header[0] = 0x7f, header[1] = 'E', header[2] = 'L', header[3] = 'F', header[4] = 2, header[5] = 1;
  header[0x28] = static_cast<char>(0xF0);  // the section table far past the end
  header[0x3A] = 64, header[0x3C] = 3, header[0x3E] = 1;
  auto r = cubin_global_sections(header);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("past its end"), std::string::npos) << r.error().message;
  if (!find_cuda_tool("ptxas")) return;
  toolchain::AssembleOptions o;
  o.arch = "sm_80";
  auto a = toolchain::assemble(kModule, o);
  ASSERT_TRUE(a.ok() && a->ok);
  for (size_t cut : {size_t{100}, a->cubin.size() / 2, a->cubin.size() - 10}) {
    auto t = cubin_global_sections(std::string_view(a->cubin).substr(0, cut));
    (void)t;  // an error or a partial answer, never a read past the end (ASan watches)
  }
}

}  // namespace
}  // namespace ptxforge::gpu
