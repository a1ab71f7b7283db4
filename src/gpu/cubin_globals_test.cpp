// Reading a cubin's device variables: ptxas's own output (module-scope variables, visible or
// not, initialised or not, and one declared inside a function), and damaged images.
#include "gpu/cubin_globals.h"

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
