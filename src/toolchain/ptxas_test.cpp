#include "toolchain/ptxas.h"

#include <gtest/gtest.h>

#include "util/paths.h"

namespace ptxforge::toolchain {
namespace {

TEST(PtxasOutput, ParsesMessagesAndResources) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "    256 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 1 barriers, 4096 bytes smem, 400 bytes cmem[0], 256 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 6.050 ms\n"
      "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.\n"
      "ptxas k.ptx, line 3; error   : Unknown symbol '%r9'\n"
      "ptxas k.ptx, line 2; warning : something odd\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n";
  AssembleResult r;
  parse_ptxas_output(log, "a\nb\n  add.s32 %r1, %r9;\n", r);
  ASSERT_EQ(r.functions.size(), 1u);
  auto& f = r.functions[0];
  EXPECT_TRUE(f.is_entry);
  EXPECT_EQ(f.arch, "sm_90a");
  EXPECT_EQ(f.registers, 10);
  EXPECT_EQ(f.barriers, 1);
  EXPECT_EQ(f.shared_bytes, 4096);
  EXPECT_EQ(f.const_bytes, 400);
  EXPECT_EQ(f.stack_frame, 256);
  EXPECT_EQ(f.spill_stores, 8);
  EXPECT_EQ(f.spill_loads, 4);
  EXPECT_EQ(f.cumulative_stack, 256);
  EXPECT_DOUBLE_EQ(f.compile_ms, 6.05);
  EXPECT_EQ(r.info_codes, std::vector<std::string>{"C7508"});
  ASSERT_EQ(r.diags.list().size(), 3u);
  EXPECT_EQ(r.diags.list()[0].severity, Severity::note);  // the C7508 line
  EXPECT_EQ(r.diags.list()[1].severity, Severity::warning);  // sorted by line: line 2 before line 3
  auto& e = r.diags.list()[2];
  EXPECT_EQ(e.severity, Severity::error);
  EXPECT_EQ(e.loc.line, 3u);
  EXPECT_EQ(e.loc.col, 16u);  // the quoted '%r9' on the source line
  EXPECT_EQ(e.message, "Unknown symbol '%r9'");
}

bool have_ptxas() { return find_cuda_tool("ptxas").has_value(); }

const char* kGood = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
                    ".reg .b64 %rd<3>;\n.reg .b32 %r<3>;\nld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\n"
                    "mov.u32 %r1, %tid.x;\nst.global.u32 [%rd2], %r1;\nret;\n}\n";

TEST(PtxasOutput, OptimisedDebuggingGetsAHint) {
  AssembleResult r;
  parse_ptxas_output("ptxas fatal   : Optimized debugging not supported\n", "", r);
  ASSERT_EQ(r.diags.list().size(), 1u);
  EXPECT_NE(r.diags.list()[0].hint.find("-O0"), std::string::npos);
}

// Some nvJitLink builds answer -verbose with the linker's summary alone (seen with CUDA 13.0
// on an H200): the resources come from it then, not from an empty list.
TEST(PtxasOutput, LinkerSummaryAloneGivesTheResources) {
  AssembleResult r;
  parse_ptxas_output("info    : 0 bytes gmem\ninfo    : Function properties for 'k':\n"
                     "info    : used 8 registers, used 1 barriers, 16 stack, 1024 bytes smem, 536 bytes cmem[0], "
                     "8 bytes lmem\n",
                     "", r);
  ASSERT_EQ(r.functions.size(), 1u);
  EXPECT_EQ(r.functions[0].name, "k");
  EXPECT_EQ(r.functions[0].registers, 8);
  EXPECT_EQ(r.functions[0].barriers, 1);
  EXPECT_EQ(r.functions[0].stack_frame, 16);
  EXPECT_EQ(r.functions[0].shared_bytes, 1024);
  EXPECT_EQ(r.functions[0].const_bytes, 536);
  EXPECT_EQ(r.functions[0].local_bytes, 8);
  EXPECT_TRUE(r.diags.list().empty());
  // With ptxas's own report present, the linker's summary is not read.
  AssembleResult both;
  parse_ptxas_output("ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
                     "ptxas info    : Used 12 registers, used 0 barriers, 0 bytes smem, 536 bytes cmem[0]\n"
                     "info    : Function properties for 'k':\ninfo    : used 99 registers, used 0 barriers, 0 stack\n",
                     "", both);
  ASSERT_EQ(both.functions.size(), 1u);
  EXPECT_EQ(both.functions[0].registers, 12);
}

TEST(Ptxas, AssemblesAndReportsResources) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas not installed";
  auto r = assemble_with_ptxas(kGood, {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok) << r->log;
  ASSERT_NE(r->find("k"), nullptr);
  EXPECT_GT(r->find("k")->registers, 0);
  EXPECT_GT(r->cubin.size(), 100u);
  EXPECT_EQ(r->cubin.substr(1, 3), "ELF");
}

TEST(Ptxas, ErrorsBecomeDiagnosticsOnOurLines) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas not installed";
  std::string bad = kGood;
  bad.replace(bad.find("mov.u32 %r1, %tid.x;"), 20, "mov.u32 %r1, %r99;  ");
  auto r = assemble_with_ptxas(bad, {});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok);
  ASSERT_TRUE(r->diags.has_errors());
  EXPECT_EQ(r->diags.list()[0].loc.line, 10u);
}

TEST(Ptxas, MessagesNameTheUsersFileNotTheTempCopy) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas not installed";
  AssembleOptions o;
  o.source_name = "mine/k.ptx";
  auto r = assemble_with_ptxas("\n", o);  // "Missing .version directive at start of file '...'"
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->log.find("mine/k.ptx"), std::string::npos) << r->log;
  EXPECT_EQ(r->log.find("ptxforge-ptxas"), std::string::npos) << r->log;
  bool named = false;
  for (auto& d : r->diags.list()) named = named || d.message.find("'mine/k.ptx'") != std::string::npos;
  EXPECT_TRUE(named) << r->log;
}

TEST(Ptxas, Setmaxnreg7508IsReported) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas not installed";
  std::string k = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
                  "setmaxnreg.inc.sync.aligned.u32 64;\nret;\n}\n";
  auto r = assemble_with_ptxas(k, {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(r->info_codes, std::vector<std::string>{"C7508"});
}

TEST(NvJitLink, AgreesWithPtxas) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas not installed";
  auto a = assemble_with_ptxas(kGood, {});
  auto b = assemble_with_nvjitlink(kGood, {});
  if (!b) GTEST_SKIP() << b.error().message;
  ASSERT_TRUE(a);
  EXPECT_TRUE(b->ok) << b->log;
  EXPECT_FALSE(b->cubin.empty());
  ASSERT_EQ(b->functions.size(), a->functions.size()) << b->log;
  ASSERT_NE(b->find("k"), nullptr) << b->log;
  EXPECT_EQ(b->find("k")->registers, a->find("k")->registers);
  std::string bad = kGood;
  bad.replace(bad.find("ret;"), 4, "rte;");
  auto c = assemble_with_nvjitlink(bad, {});
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->ok);
  EXPECT_TRUE(c->diags.has_errors());
}

// A few lines of PTX that assemble to a cubin of hundreds of megabytes: the file-size limit
// stops ptxas and the result is an assemble error naming it (here 16 MiB against three
// 32 MiB-aligned variables; the default is 256 MiB, the mechanism the same).
TEST(Ptxas, HugeCubinIsStoppedByTheFileSizeLimit) {
  if (!have_ptxas()) GTEST_SKIP() << "ptxas not installed";
  std::string k = ".version 8.0\n.target sm_90\n.address_size 64\n"
                  ".global .align 33554432 .b8 x[1];\n.global .align 33554432 .b8 y[1];\n.global .align 33554432 .b8 z[1];\n"
                  ".visible .entry k()\n{\n.reg .u64 %rd<4>;\nmov.u64 %rd1, x;\nmov.u64 %rd2, y;\nmov.u64 %rd3, z;\n"
                  "st.global.u64 [%rd1], %rd2;\nst.global.u64 [%rd2], %rd3;\nret;\n}\n";
  AssembleOptions o;
  o.limits.file_size_bytes = uint64_t{16} << 20;
  auto r = assemble_with_ptxas(k, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->ok);
  ASSERT_TRUE(r->diags.has_errors());
  EXPECT_EQ(r->diags.list()[0].check_id, "ptxas-limit");
  EXPECT_NE(r->diags.list()[0].message.find("16 MiB file-size limit"), std::string::npos) << r->diags.list()[0].message;
  EXPECT_TRUE(r->cubin.empty());
  AssembleOptions roomy;  // the same module within a roomier limit assembles: it is the limit that stopped it
  roomy.limits.file_size_bytes = uint64_t{1} << 30;
  auto ok = assemble_with_ptxas(k, roomy);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->ok) << ok->log;
}

TEST(Ptxas, MissingToolIsAClearError) {
  setenv("PTXFORGE_CUDA_HOME", "/nonexistent", 1);
  const char* path = getenv("PATH");
  std::string saved = path ? path : "";
  setenv("PATH", "/nonexistent", 1);
  auto r = assemble_with_ptxas(kGood, {});
  setenv("PATH", saved.c_str(), 1);
  unsetenv("PTXFORGE_CUDA_HOME");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("ptxas not found"), std::string::npos);
}

}  // namespace
}  // namespace ptxforge::toolchain
