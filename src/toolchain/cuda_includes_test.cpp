// The include policy: every way of making the preprocessor open a file other than a CUDA
// toolkit header is refused at its line, and the headers a real kernel uses pass.
#include "toolchain/cuda_includes.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {
namespace {

// A fake toolkit include folder, so the test does not depend on an installed CUDA.
class CudaIncludes : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::create("ptxforge-inc");
    ASSERT_TRUE(d.ok());
    dir_.emplace(std::move(*d));
    std::filesystem::create_directories(root() + "/cuda/std");
    for (const char* h : {"cuda_fp16.h", "cuda_bf16.h", "mma.h", "cuda/barrier", "cuda/std/cstdint"})
      ASSERT_TRUE(write_file(root() + "/" + h, "// header\n").ok());
    // A symlink inside the toolkit that points out of it is not a toolkit header.
    ASSERT_TRUE(write_file(dir_->path() + "/outside.toml", "secret\n").ok());
    std::filesystem::create_symlink(dir_->path() + "/outside.toml", root() + "/escape.h");
  }
  std::string root() { return dir_->path() + "/include"; }
  Diagnostics check(const std::string& src) { return check_cuda_includes(src, {root()}); }
  // The one refusal's check id and line ("" when the source passes).
  std::string refusal(const std::string& src, uint32_t* line = nullptr) {
    Diagnostics d = check(src);
    if (d.list().empty()) return "";
    EXPECT_EQ(d.list().size(), 1u) << src;
    if (line) *line = d.list()[0].loc.line;
    return d.list()[0].check_id;
  }
  std::optional<TempDir> dir_;
};

TEST_F(CudaIncludes, ToolkitHeadersPass) {
  EXPECT_FALSE(check("#include <cuda_fp16.h>\n#  include  <cuda_bf16.h> // bf16\n#include <mma.h>\n"
                     "#include <cuda/barrier>\n#include <cuda/std/cstdint>\n/* c */ #include <mma.h>\n"
                     "__global__ void k() {}\n")
                   .has_errors());
}

TEST_F(CudaIncludes, QuotedAbsoluteAndProcPathsAreRefusedAtTheirLine) {
  uint32_t line = 0;
  EXPECT_EQ(refusal("// a kernel\n#include \"/proc/self/environ\"\n", &line), "include-quoted");
  EXPECT_EQ(line, 2u);
  EXPECT_EQ(refusal("#include </proc/self/environ>\n"), "include-path");
  EXPECT_EQ(refusal("#include </work/main/tasks/level1/vector_add/task.toml>\n"), "include-path");
  EXPECT_EQ(refusal("#include \"k.cuh\"\n"), "include-quoted");
  EXPECT_EQ(refusal("#include <../../tasks/level1/vector_add/task.toml>\n"), "include-path");
  EXPECT_EQ(refusal("#include <cuda/../../../etc/passwd>\n"), "include-path");
  EXPECT_EQ(refusal("#include <cuda//barrier>\n"), "include-path");
  EXPECT_EQ(refusal("#include <cuda\\barrier>\n"), "include-path");
}

TEST_F(CudaIncludes, HeadersNotInTheToolkitAreRefusedWithAHint) {
  Diagnostics d = check("#include <sys/mman.h>\n");
  ASSERT_EQ(d.list().size(), 1u);
  EXPECT_EQ(d.list()[0].check_id, "include-missing");
  EXPECT_NE(d.list()[0].message.find("nor a C/C++ standard header"), std::string::npos) << d.list()[0].message;
  EXPECT_NE(d.list()[0].hint.find("<stdint.h>"), std::string::npos) << d.list()[0].hint;
  EXPECT_NE(d.list()[0].hint.find("cuda/std/"), std::string::npos) << d.list()[0].hint;
  EXPECT_EQ(refusal("#include <escape.h>\n"), "include-missing") << "a symlink out of the toolkit";
  EXPECT_EQ(refusal("#include <task.toml>\n"), "include-missing");
}

// C/C++ standard headers pass by name, and by name only: the list is exact names, so no
// spelling of a path (a folder, `..`, a suffix, another case) rides on it.
TEST_F(CudaIncludes, StandardHeadersPassByNameOnly) {
  EXPECT_FALSE(check("#include <stdint.h>\n#include <cstdint>\n#include <math.h>\n#include <type_traits>\n"
                     "#include <cuda_bf16.h>\n__global__ void k() {}\n")
                   .has_errors());
  for (auto h : standard_headers()) {
    EXPECT_TRUE(is_standard_header(h));
    EXPECT_EQ(h.find('/'), std::string_view::npos) << h << ": a listed name has no folder";
  }
  EXPECT_FALSE(is_standard_header("bits/stdint-intn.h"));
  EXPECT_FALSE(is_standard_header("STDINT.H"));
  EXPECT_FALSE(is_standard_header("stdint.h "));
  EXPECT_FALSE(is_standard_header("unistd.h"));
  EXPECT_EQ(refusal("#include <stdint.h/../../../proc/self/environ>\n"), "include-path");
  EXPECT_EQ(refusal("#include <../stdint.h>\n"), "include-path");
  EXPECT_EQ(refusal("#include </usr/include/stdint.h>\n"), "include-path");
  EXPECT_EQ(refusal("#include \"stdint.h\"\n"), "include-quoted");
  EXPECT_EQ(refusal("#include <bits/types.h>\n"), "include-missing");
  EXPECT_EQ(refusal("#include <stdint.hpp>\n"), "include-missing");
  EXPECT_EQ(refusal("#include_next <stdint.h>\n"), "include-directive");
  EXPECT_EQ(refusal("#if __has_include(<stdint.h>)\n#endif\n"), "include-has-include");
}

TEST_F(CudaIncludes, ComputedAndIndirectIncludesAreRefused) {
  EXPECT_EQ(refusal("#define F \"/proc/self/environ\"\n#include F\n"), "include-computed");
  EXPECT_EQ(refusal("#define F </proc/self/environ>\n#include F\n"), "include-computed");
  EXPECT_EQ(refusal("#define S(x) #x\n#include S(/proc/self/environ)\n"), "include-computed");
  EXPECT_EQ(refusal("#include <cuda_fp16.h> junk\n"), "include-computed");
  EXPECT_EQ(refusal("#include_next <cuda_fp16.h>\n"), "include-directive");
  EXPECT_EQ(refusal("#import <cuda_fp16.h>\n"), "include-directive");
  EXPECT_EQ(refusal("#embed \"/proc/self/environ\"\n"), "include-directive");
  EXPECT_EQ(refusal("#if __has_include(\"/work/tasks/x/task.toml\")\n#endif\n"), "include-has-include");
  EXPECT_EQ(refusal("#pragma GCC dependency \"/etc/passwd\"\n"), "include-pragma");
  EXPECT_EQ(refusal("_Pragma(\"include_alias(\\\"a\\\", \\\"/etc/passwd\\\")\")\n"), "include-pragma");
  EXPECT_EQ(refusal("#line 1 \"k.cu\"\n"), "include-line-file");
  EXPECT_EQ(refusal("# 1 \"/etc/passwd\"\n"), "include-line-file");
  EXPECT_EQ(refusal("#line 40\n__global__ void k() {}\n"), "") << "a #line without a file name is harmless";
}

TEST_F(CudaIncludes, DigraphsTrigraphsAndContinuationsAreRefused) {
  EXPECT_EQ(refusal("%:include \"/proc/self/environ\"\n"), "include-digraph");
  EXPECT_EQ(refusal("  %:  include <cuda_fp16.h>\n"), "include-digraph");
  EXPECT_EQ(refusal("?\?=include \"/proc/self/environ\"\n"), "include-digraph");
  uint32_t line = 0;
  EXPECT_EQ(refusal("int x;\n#\\\ninclude <cuda_fp16.h>\n", &line), "include-continuation");
  EXPECT_EQ(line, 2u);
  EXPECT_EQ(refusal("#inc\\\nlude \"/proc/self/environ\"\n"), "include-continuation");
  EXPECT_EQ(refusal("#include \\\n \"/proc/self/environ\"\n"), "include-continuation");
  EXPECT_EQ(refusal("#\\  \ninclude <cuda_fp16.h>\n"), "include-continuation") << "blanks after the backslash";
  EXPECT_EQ(refusal("#include <cuda_fp16.h>\r\n#include \"x\"\r\n"), "include-quoted");
}

TEST_F(CudaIncludes, CommentsDoNotHideADirective) {
  // After a block comment that spans lines, the rest of the line is at a line's start.
  EXPECT_EQ(refusal("/* a\n*/ #include \"/proc/self/environ\"\n"), "include-quoted");
  EXPECT_EQ(refusal("/**/#/**/include/**/\"/proc/self/environ\"\n"), "include-quoted");
  EXPECT_EQ(refusal("const char* s = \"/*\";\n#include \"/proc/self/environ\"\n// */\n"), "include-quoted");
  EXPECT_EQ(refusal("int a = 1'0'/*';\n#include \"/proc/self/environ\"\n// */\n"), "include-quoted");
  EXPECT_EQ(refusal("auto s = R\"(\n#include \"/proc/self/environ\"\n)\";\n"), "include-quoted")
      << "inside a raw string too: deleting it costs less than trusting a scanner about it";
  EXPECT_EQ(refusal("#if 0\n#include \"/proc/self/environ\"\n#endif\n"), "include-quoted");
  EXPECT_EQ(refusal("#define A /* #include \"x\" */ 1\n"), "") << "not at the line's start: not a directive";
  EXPECT_EQ(refusal("int x = a#b;\nint y = 3 % 2;\n"), "");
}

TEST_F(CudaIncludes, EveryOffendingLineIsReported) {
  Diagnostics d = check("#include \"a\"\n#include <cuda_fp16.h>\n#include </etc/passwd>\n%:include <x>\n");
  ASSERT_EQ(d.list().size(), 3u);
  EXPECT_EQ(d.list()[0].loc.line, 1u);
  EXPECT_EQ(d.list()[1].loc.line, 3u);
  EXPECT_EQ(d.list()[2].loc.line, 4u);
}

}  // namespace
}  // namespace ptxforge::toolchain
