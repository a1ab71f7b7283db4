#include <gtest/gtest.h>

#include "agent/extract.h"

namespace ptxforge::agent {
namespace {

const char* kModule =
    ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n    ret;\n}\n";

TEST(Extract, ProseAroundOneBlock) {
  std::string reply = std::string("Sure! Here is the kernel:\n\n```ptx\n// @launch grid=1 block=32\n") + kModule +
                      "```\n\nIt uses one thread per element.";
  auto ex = extract_candidate(reply);
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_EQ(ex->kind, Extracted::ptx);
  EXPECT_EQ(ex->code.rfind("// @launch grid=1 block=32\n.version 8.0", 0), 0u) << ex->code;
  EXPECT_TRUE(ex->notes.empty());
}

TEST(Extract, SeveralBlocksTakeTheLastKernel) {
  std::string reply = std::string("First try:\n```ptx\n") + kModule + "```\nBetter:\n```\n" + kModule +
                      "// final\n```\nAnd a host snippet:\n```python\nprint(1)\n```\n";
  auto ex = extract_candidate(reply);
  ASSERT_TRUE(ex.ok());
  EXPECT_NE(ex->code.find("// final"), std::string::npos);
  ASSERT_FALSE(ex->notes.empty());
  EXPECT_NE(ex->notes[0].find("2 code blocks"), std::string::npos);
}

TEST(Extract, NoFencesAndLaunchLinesOutsideTheBlock) {
  std::string bare = std::string("The launch is below.\n") + kModule + "That's all.";
  auto ex = extract_candidate(bare);
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_EQ(ex->code.rfind(".version 8.0", 0), 0u);
  EXPECT_EQ(ex->code.find("That's all"), std::string::npos);
  std::string outside = std::string("Launch with:\n// @launch grid=(ceil_div(n,256),1,1) block=(256,1,1)\n\n```ptx\n") +
                        kModule + "```\n";
  ex = extract_candidate(outside);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(ex->code.rfind("// @launch grid=(ceil_div(n,256),1,1)", 0), 0u) << ex->code;
}

TEST(Extract, TruncatedReplyAndMissingHeader) {
  auto ex = extract_candidate("```ptx\n.visible .entry k()\n{\n    ret;\n}\n");  // never closed, no header
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  EXPECT_NE(ex->code.find(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()"), std::string::npos) << ex->code;
  EXPECT_EQ(ex->notes.size(), 2u);
  // A body that needs more than the target's minimum gets the version it needs.
  ex = extract_candidate("```ptx\n.visible .entry k()\n{\n    .reg .b32 %r<3>;\n    min.s32 %r1, %r1, %r2, %r2;\n    ret;\n}\n```",
                         "sm_100a");
  ASSERT_TRUE(ex.ok());
  EXPECT_NE(ex->code.find(".version 8.8\n.target sm_100a"), std::string::npos) << ex->code;
}

TEST(Extract, CudaCandidatesAndRepliesWithoutCode) {
  auto ex = extract_candidate("```cuda\nextern \"C\" __global__ void k(float* a) { a[0] = 1; }\n```");
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(ex->kind, Extracted::cuda);
  auto none = extract_candidate("I think you should use shared memory tiling for this.");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no PTX kernel found"), std::string::npos);
  EXPECT_NE(extract_candidate("   \n").error().message.find("the reply is empty"), std::string::npos);
  EXPECT_FALSE(extract_candidate("```python\nprint('.entry')\n```").ok()) << "a Python block is not PTX";
}

}  // namespace
}  // namespace ptxforge::agent
