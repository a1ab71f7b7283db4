// The CPU engine's parent side without the engine: which size sets an engine job runs
// (cpu_sizes and its default), the reference PTX's pinning hash (SHA-256 against the FIPS
// 180-4 examples, and every committed reference.ptx against its reference.cu), and the text
// of a wrong element.
#include <gtest/gtest.h>

#include <filesystem>

#include "eval/engine_path.h"
#include "util/sha256.h"
#include "task/task_spec.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = PTXFORGE_SOURCE_DIR;

// Three f32 buffers of n elements (12 n bytes a set): tiny 12 KiB, mid 12 MiB (over the 4 MiB
// default), held 1.2 KiB held back, odd 120 KiB + 12 bytes shown.
std::string task_text(const std::string& extra) {
  return extra + R"TOML(
name = "t"
entry = "k"
description = "c = a + b"
[[param]]
name = "a"
dtype = "f32"
count = "n"
role = "in"
[[param]]
name = "b"
dtype = "f32"
count = "n"
role = "in"
[[param]]
name = "c"
dtype = "f32"
count = "n"
role = "out"
[[param]]
name = "n"
kind = "scalar"
dtype = "u32"
value = "n"
[[sizes]]
name = "mid"
n = 1_048_576
[[sizes]]
name = "tiny"
n = 1024
[[sizes]]
name = "held"
shown = false
n = 100
[[sizes]]
name = "odd"
n = 10_241
[reference]
entry = "k_ref"
grid = "(ceil_div(n, 256), 1, 1)"
block = "(256, 1, 1)"
[roofline]
bytes = "12 * n"
flops = "n"
)TOML";
}

task::Task load(const std::string& extra) {
  auto t = task::parse_task(task_text(extra), "task.toml", ".");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? *t : task::Task{};
}

TEST(CpuSizes, DefaultIsEverySetUpToFourMiBHeldBackIncluded) {
  task::Task t = load("");
  EXPECT_TRUE(t.cpu_sizes.empty());
  // mid is 12 MiB: over kDefaultCpuSetBytes. The rest, in the task's order.
  EXPECT_EQ(cpu_size_sets(t, true), (std::vector<std::string>{"tiny", "held", "odd"}));
  EXPECT_EQ(cpu_size_sets(t, false), (std::vector<std::string>{"tiny", "odd"})) << "--sizes shown drops held-back sets";
}

TEST(CpuSizes, NamedSetsAreTakenAsWritten) {
  task::Task t = load("cpu_sizes = [\"odd\", \"held\"]\n");
  EXPECT_EQ(t.cpu_sizes, (std::vector<std::string>{"odd", "held"}));
  EXPECT_EQ(cpu_size_sets(t, true), (std::vector<std::string>{"odd", "held"}));
  EXPECT_EQ(cpu_size_sets(t, false), (std::vector<std::string>{"odd"}));
}

TEST(CpuSizes, OnlyHeldBackNamedAndShownAskedGivesTheSmallestShownSet) {
  task::Task t = load("cpu_sizes = [\"held\"]\n");
  EXPECT_EQ(cpu_size_sets(t, false), (std::vector<std::string>{"tiny"})) << "never an empty list: that would mean every set";
}

TEST(CpuSizes, EverySetTooLargeGivesTheSmallestShownOne) {
  std::string text = task_text("");
  // Every set over the default's limit; `held` (held back) is the smallest of them.
  for (auto [from, to] : {std::pair{"n = 1024\n", "n = 2_000_000\n"}, {"n = 100\n", "n = 1_000_000\n"},
                          {"n = 10_241\n", "n = 3_000_000\n"}})
    text.replace(text.find(from), std::string(from).size(), to);
  auto t = task::parse_task(text, "task.toml", ".");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(cpu_size_sets(*t, true), (std::vector<std::string>{"mid"})) << "1 M elements: the smallest SHOWN set";
}

TEST(CpuSizes, AnUnknownNameIsATaskError) {
  auto typo = task::parse_task(task_text("cpu_sizes = [\"tiyn\"]\n"), "task.toml", ".");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("task.toml:1:14: error: cpu_sizes names 'tiyn', which is not a size set; did you mean 'tiny'?"),
            std::string::npos)
      << typo.error().message;
  auto scalar = task::parse_task(task_text("cpu_sizes = \"tiny\"\n"), "task.toml", ".");
  ASSERT_FALSE(scalar.ok());
  EXPECT_NE(scalar.error().message.find("cpu_sizes is a list of size-set names"), std::string::npos) << scalar.error().message;
}

TEST(ReferencePtx, FirstLineHash) {
  std::string hex(64, 'a');
  EXPECT_EQ(reference_ptx_hash("// reference.cu sha256 " + hex + ", nvcc 13.0.88\n.version 9.0\n"), hex);
  EXPECT_EQ(reference_ptx_hash("// reference.cu sha256 abc, nvcc 13.0.88\n"), "") << "not 64 hex digits";
  EXPECT_EQ(reference_ptx_hash(".version 9.0\n"), "");
  EXPECT_EQ(reference_ptx_hash("// reference.cu sha256 " + std::string(64, 'G') + ", nvcc\n"), "");
}

// Every committed reference.ptx was made from the reference.cu beside it: a stale one would
// run an old reference on machines without nvcc. Fix with scripts/refresh-reference-ptx.
TEST(SuiteTasks, ReferencePtxIsCurrent) {
  int checked = 0;
  for (auto& e : fs::recursive_directory_iterator(kRoot + "/tasks")) {
    if (e.path().filename() != "reference.ptx") continue;
    auto ptx = read_file(e.path().string());
    auto cu = read_file((e.path().parent_path() / "reference.cu").string());
    ASSERT_TRUE(ptx.ok() && cu.ok()) << e.path();
    EXPECT_EQ(reference_ptx_hash(*ptx), sha256_hex(*cu))
        << e.path() << " is stale or has no hash line; run scripts/refresh-reference-ptx";
    ++checked;
  }
  // The level-1 tasks run on the CPU engine without a toolkit: each has its reference.ptx.
  for (auto& e : fs::directory_iterator(kRoot + "/tasks/level1"))
    EXPECT_TRUE(fs::exists(e.path() / "reference.ptx")) << e.path() << " has no reference.ptx";
  EXPECT_GE(checked, 10);
}

TEST(ReferencePtx, AStaleCommittedFileIsRefusedWithoutNvcc) {
  // Only the no-toolkit branch reads the committed file; with nvcc here, it is not reached.
  if (find_cuda_tool("nvcc")) GTEST_SKIP() << "nvcc is installed: the reference is built, not read";
  std::string dir = ::testing::TempDir() + "/stale_ref";
  fs::create_directories(dir);
  ASSERT_TRUE(write_file(dir + "/reference.cu", "__global__ void k_ref() {}\n").ok());
  ASSERT_TRUE(write_file(dir + "/reference.ptx", "// reference.cu sha256 " + std::string(64, '0') + ", nvcc 13.0\n").ok());
  task::Task t;
  t.dir = dir;
  auto r = reference_ptx(t, dir + "/cache");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("is stale"), std::string::npos) << r.error().message;
}

TEST(WrongElement, NamesIndicesValuesAndTheLastWriter) {
  gpu::WrongElement w;
  w.output = "c";
  w.index = 1041;
  w.multi_index = {2, 17};
  w.expected = "3.5";
  w.actual = "0.25";
  w.writer = gpu::WrongElement::Writer{gpu::EmuThread{{8, 0, 0}, {17, 0, 0}}, 44};
  EXPECT_EQ(describe_wrong_element(w),
            "'c'[2, 17] (element 1041): expected 3.5, got 0.25, last written by thread (17,0,0) of CTA (8,0,0) at line 44");
  gpu::WrongElement never;
  never.output = "y";
  never.index = 7;
  never.expected = "1";
  never.actual = "0";
  never.never_written = true;
  EXPECT_EQ(describe_wrong_element(never), "'y'[7]: expected 1, got 0, never written");
}

}  // namespace
}  // namespace ptxforge::eval
