#include "data/library_ptx.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::data {
namespace {

namespace fs = std::filesystem;

TEST(LibraryPtx, TargetIsTheFirstNameOfTheTargetDirective) {
  EXPECT_EQ(ptx_target(".version 8.0\n.target sm_90a\n.address_size 64\n"), "sm_90a");
  EXPECT_EQ(ptx_target("// x\n  .target sm_52, texmode_independent\n"), "sm_52");
  EXPECT_EQ(ptx_target(".target sm_80 // comment\n"), "sm_80");
  EXPECT_EQ(ptx_target(".version 8.0\n"), "");
}

TEST(LibraryPtx, FoldersGiveTheFilesThatCanHoldDeviceCodeSorted) {
  auto tmp = TempDir::create("ptxforge-libfiles");
  ASSERT_TRUE(tmp.ok());
  for (auto name : {"b.so.13", "a.so", "notes.txt", "k.cubin", "sub/c.a", "sub/x.fatbin", "readme"}) {
    fs::create_directories(fs::path(tmp->path() + "/" + name).parent_path());
    ASSERT_TRUE(write_file(tmp->path() + "/" + name, "x").ok());
  }
  fs::permissions(tmp->path() + "/readme", fs::perms::owner_read | fs::perms::owner_write);
  auto files = library_files({tmp->path()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  std::vector<std::string> names;
  for (auto& f : *files) names.push_back(fs::relative(f, tmp->path()).string());
  EXPECT_EQ(names, (std::vector<std::string>{"a.so", "b.so.13", "k.cubin", "sub/c.a", "sub/x.fatbin"}));
  EXPECT_FALSE(library_files({tmp->path() + "/missing"}).ok());
}

// The real chain where cuobjdump exists (the GPU machine): nvcc embeds a kernel's PTX in a
// shared library, and the library gives back that module, labelled by ptxas.
TEST(LibraryPtx, ExtractsThePtxNvccEmbeddedInASharedLibrary) {
  auto nvcc = find_cuda_tool("nvcc");
  if (!find_cuda_tool("cuobjdump") || !nvcc || !find_cuda_tool("ptxas")) GTEST_SKIP() << "needs cuobjdump, nvcc and ptxas";
  auto tmp = TempDir::create("ptxforge-libptx-test");
  ASSERT_TRUE(tmp.ok());
  std::string cu = tmp->path() + "/k.cu", so = tmp->path() + "/libk.so";
  ASSERT_TRUE(write_file(cu, "extern \"C\" __global__ void triple(float* y, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) y[i] *= 3.0f;\n}\n")
                  .ok());
  auto built = run_process({*nvcc, "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_90,code=compute_90", "-o", so, cu},
                           std::chrono::minutes(3));
  ASSERT_TRUE(built.ok());
  ASSERT_EQ(built->exit_code, 0) << built->err;
  std::set<std::string> seen;
  LibraryStats st;
  auto pairs = library_pairs({so, cu}, seen, st);  // the .cu holds no device code: no module, no problem
  ASSERT_TRUE(pairs.ok()) << pairs.error().message;
  EXPECT_TRUE(st.problems.empty()) << st.problems[0];
  ASSERT_EQ(pairs->size(), 1u);
  auto& p = (*pairs)[0];
  EXPECT_EQ(p.origin, "library:libk.so");
  EXPECT_EQ(p.arch, "sm_90");
  EXPECT_TRUE(p.cuda.empty());
  EXPECT_TRUE(p.assembles) << p.ptxas_error;
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].name, "triple");
  EXPECT_EQ(st.files, 2);
  EXPECT_EQ(st.files_with_ptx, 1);
  // The same library again: its module is a duplicate now.
  auto again = library_pairs({so}, seen, st);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(st.duplicates, 1);
}

}  // namespace
}  // namespace ptxforge::data
