// The compiler log filter: a candidate's own messages and lines pass; text from any other
// file never does, whatever shape it comes in.
#include "toolchain/compiler_log.h"

#include <gtest/gtest.h>

namespace ptxforge::toolchain {
namespace {

const char* kSource =
    "#include <cuda_fp16.h>\n"
    "template <typename T> __device__ T twice(T x) { return x.nothing(); }\n"
    "extern \"C\" __global__ void k(float* x) {\n"
    "\tx[0] = twice(x[1]);\n"
    "  __half h = __float2half(1.0f, 2);\n"
    "}\n";

LogFilter filter() {
  LogFilter f;
  f.candidate_name = "/tmp/k.cu";
  f.display_name = "k.cu";
  f.candidate_source = kSource;
  f.toolkit_dirs = {"/usr/local/cuda/include"};
  f.system_dirs = {"/usr/include"};
  return f;
}

TEST(CompilerLog, CandidateMessagesQuotesAndContextPass) {
  std::string log =
      "/tmp/k.cu(5): error: too many arguments in function call\n"
      "    __half h = __float2half(1.0f, 2);\n"
      "                                  ^\n"
      "\n"
      "/tmp/k.cu(2): error: expression must have class type but it has type \"float\"\n"
      "  template <typename T> __device__ T twice(T x) { return x.nothing(); }\n"
      "                                                         ^\n"
      "          detected during instantiation of \"T twice(T) [with T=float]\" at line 4\n"
      "\n"
      "2 errors detected in the compilation of \"/tmp/k.cu\".\n";
  std::string out = filter_compiler_log(log, filter());
  EXPECT_EQ(out,
            "k.cu(5): error: too many arguments in function call\n"
            "    __half h = __float2half(1.0f, 2);\n"
            "                                  ^\n"
            "k.cu(2): error: expression must have class type but it has type \"float\"\n"
            "  template <typename T> __device__ T twice(T x) { return x.nothing(); }\n"
            "                                                         ^\n"
            "          detected during instantiation of \"T twice(T) [with T=float]\" at line 4\n"
            "2 errors detected in the compilation of \"k.cu\".\n");
}

TEST(CompilerLog, AnotherFilesTextNeverPasses) {
  std::string log =
      "/proc/self/environ(1): error: this declaration has no storage class or type specifier\n"
      "  OPENAI_API_KEY=canary-xyz HOME=/root\n"
      "  ^\n"
      "\n"
      "/work/tasks/level1/x/task.toml(3): error: expected a \";\"\n"
      "  held_back = [{ n = 12345 }]  canary-xyz\n"
      "\n"
      "/tmp/k.cu(5): error: too many arguments in function call\n"
      "  OPENAI_API_KEY=canary-xyz\n"  // a quote that is not the candidate's line 5
      "          detected during instantiation of \"f\" at line 3 of /work/tasks/x/reference.cu canary-xyz\n"
      "canary-xyz: free text\n"
      "/tmp/k.cu.secret(1): error: canary-xyz\n"
      "In file included from /proc/self/environ:1:\n"
      "1 error detected in the compilation of \"/proc/self/environ canary-xyz\".\n";
  std::string out = filter_compiler_log(log, filter());
  EXPECT_EQ(out.find("canary-xyz"), std::string::npos) << out;
  EXPECT_EQ(out.find("environ"), std::string::npos) << out;
  EXPECT_EQ(out.find("task.toml"), std::string::npos) << out;
  EXPECT_NE(out.find("k.cu(5): error: too many arguments"), std::string::npos) << out;
  EXPECT_NE(out.find("lines of the compiler's output not located in k.cu left out"), std::string::npos) << out;
}

TEST(CompilerLog, ToolkitHeaderMessagesAreReducedToTheirPlace) {
  std::string log =
      "/usr/local/cuda/include/cuda_fp16.h(168): error: expected either a definition or a tag name\n"
      "  struct __half;\n"
      "         ^\n"
      "\n"
      "/usr/local/cuda/include/cuda.h(56): catastrophic error: cannot open source file \"stdlib.h\"\n"
      "  #include <stdlib.h>\n"
      "                     ^\n";
  std::string out = filter_compiler_log(log, filter());
  EXPECT_NE(out.find("k.cu: error in toolkit header <cuda_fp16.h>:168\n"), std::string::npos) << out;
  EXPECT_NE(out.find("k.cu: catastrophic error in toolkit header <cuda.h>:56"), std::string::npos) << out;
  EXPECT_EQ(out.find("struct __half"), std::string::npos) << "no header text: " << out;
  EXPECT_EQ(out.find("stdlib"), std::string::npos) << out;
}

TEST(CompilerLog, GccAndToolLinesOfAnNvccBuild) {
  std::string log =
      "/tmp/k.cu:5:14: error: 'foo' was not declared in this scope\n"
      "    5 |   __half h = __float2half(1.0f, 2);\n"
      "      |              ^~~\n"
      "/usr/include/stdio.h:12:3: error: something\n"
      "   12 | int printf(secret);\n"
      "ptxas error   : Entry function 'k' uses too much shared data (0x20000 bytes, 0xc000 max)\n"
      "nvcc fatal   : Unsupported gpu architecture 'sm_1'\n";
  std::string out = filter_compiler_log(log, filter());
  EXPECT_NE(out.find("k.cu(5): error: 'foo' was not declared"), std::string::npos) << out;
  EXPECT_NE(out.find("    5 |   __half h"), std::string::npos) << out;
  EXPECT_NE(out.find("      |              ^~~"), std::string::npos) << out;
  EXPECT_NE(out.find("error in system header <stdio.h>:12"), std::string::npos) << out;
  EXPECT_EQ(out.find("secret"), std::string::npos) << out;
  EXPECT_NE(out.find("ptxas error   : Entry function"), std::string::npos);
  EXPECT_NE(out.find("nvcc fatal   : Unsupported"), std::string::npos);
}

}  // namespace
}  // namespace ptxforge::toolchain
