#include "ptx/rewrite.h"

#include <gtest/gtest.h>

#include "ptx/parser.h"
#include "ptx/printer.h"

namespace ptxforge::ptx {
namespace {

Module parse_ok(const std::string& s) {
  Diagnostics d;
  Module m = parse(s, d);
  EXPECT_TRUE(d.empty());
  return m;
}

TEST(Rewrite, AddHeaderChoosesTheLowestVersionTheBodyNeeds) {
  Module m = parse_ok(".visible .entry k() { .reg .b32 %r<2>; add.s32 %r0, %r1, 1; ret; }");
  HeaderChange c;
  c.add_header = true;
  Diagnostics d;
  ASSERT_TRUE(rewrite_header(m, c, d));
  EXPECT_EQ(m.version_text(), "6.3");  // sm_75 is the oldest target ptxas 13 accepts
  EXPECT_EQ(m.target_names(), std::vector<std::string>{"sm_75"});
  EXPECT_EQ(print(m).substr(0, 44), ".version 6.3\n.target sm_75\n.address_size 64\n");
}

TEST(Rewrite, AddHeaderForHopperOnlyCode) {
  Module m = parse_ok(".visible .entry k() { wgmma.fence.sync.aligned; ret; }");
  HeaderChange c;
  c.add_header = true;
  Diagnostics d;
  ASSERT_TRUE(rewrite_header(m, c, d));
  EXPECT_EQ(m.version_text(), "8.0");
  EXPECT_EQ(m.target_names(), std::vector<std::string>{"sm_90a"});
}

TEST(Rewrite, RetargetRefusesWithTheOffendingLine) {
  Module m = parse_ok(".version 8.0\n.target sm_90a\n.entry k() {\nwgmma.fence.sync.aligned;\nret;\n}");
  HeaderChange c;
  c.target = "sm_90";
  Diagnostics d;
  EXPECT_FALSE(rewrite_header(m, c, d));
  ASSERT_EQ(d.list().size(), 1u);
  EXPECT_EQ(d.list()[0].loc.line, 4u);
  EXPECT_EQ(d.list()[0].check_id, "needs-target");
}

TEST(Rewrite, RetargetRaisesVersionToWhatTheTargetNeeds) {
  Module m = parse_ok(".version 7.0\n.target sm_80\n.entry k() { ret; }");
  HeaderChange c;
  c.target = "sm_90a";
  Diagnostics d;
  ASSERT_TRUE(rewrite_header(m, c, d));
  EXPECT_EQ(m.version_text(), "8.0");
}

TEST(Rewrite, PtxVersionTooLowForAnInstruction) {
  Module m = parse_ok(".version 8.0\n.target sm_90\n.entry k() {\nelect.sync %r1|%p1, -1;\nret;\n}");
  HeaderChange c;
  c.version = "7.8";
  Diagnostics d;
  EXPECT_FALSE(rewrite_header(m, c, d));
  ASSERT_FALSE(d.list().empty());
  EXPECT_EQ(d.list()[0].check_id, "needs-version");
}

// The harness reads a candidate's launch from its comment lines, so header rewrites keep them
// (and every other comment) where they were.
TEST(Rewrite, LaunchCommentsSurviveRetargetAndAddHeader) {
  const std::string launch =
      "// @launch grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1) smem=0\n"
      "// @scratch tmp bytes=1024\n";
  const std::string body = ".visible .entry k() // the kernel\n{\n\tret; // done\n}\n";

  Module snippet = parse_ok(launch + body);
  HeaderChange add;
  add.add_header = true;
  Diagnostics d;
  ASSERT_TRUE(rewrite_header(snippet, add, d));
  EXPECT_EQ(print(snippet), ".version 6.3\n.target sm_75\n.address_size 64\n\n" + launch + body);

  Module full = parse_ok(launch + ".version 8.0 // old\n.target sm_80\n.address_size 64\n\n" + body);
  HeaderChange retarget;
  retarget.target = "sm_90a";
  ASSERT_TRUE(rewrite_header(full, retarget, d));
  EXPECT_EQ(print(full), launch + ".version 8.0 // old\n.target sm_90a\n.address_size 64\n\n" + body);
}

}  // namespace
}  // namespace ptxforge::ptx
