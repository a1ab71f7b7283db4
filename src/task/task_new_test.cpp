#include <gtest/gtest.h>

#include <filesystem>

#include "task/task_new.h"
#include "task/task_spec.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::task {
namespace {

TEST(TaskNew, SignatureBecomesParameters) {
  auto p = parse_kernel_signature(
      "// a kernel\nextern \"C\" __global__ void k(const float* __restrict__ a, unsigned char* out, float alpha,"
      " unsigned int rows, int cols) { }",
      "k");
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->size(), 5u);
  EXPECT_TRUE((*p)[0].pointer && (*p)[0].is_const);
  EXPECT_EQ((*p)[0].type, "f32");
  EXPECT_EQ((*p)[1].type, "u8");
  EXPECT_FALSE((*p)[1].is_const);
  EXPECT_EQ((*p)[3].type, "u32");
  EXPECT_EQ((*p)[4].name, "cols");
  EXPECT_NE(parse_kernel_signature("__global__ void other(float* a) {}", "k").error().message.find("no __global__ function 'k'"),
            std::string::npos);
  EXPECT_NE(parse_kernel_signature("__global__ void k(Foo* a) {}", "k").error().message.find("type 'Foo'"), std::string::npos);
}

TEST(TaskNew, TheDraftIsAValidTask) {
  auto p = parse_kernel_signature("__global__ void k(const float* a, float* out, float alpha, unsigned rows, unsigned cols) {}", "k");
  ASSERT_TRUE(p.ok());
  std::string toml = draft_task_toml("k", *p);
  auto t = parse_task(toml, "task.toml", "/tmp/k");
  ASSERT_TRUE(t.ok()) << t.error().message << "\n" << toml;
  EXPECT_EQ(t->params[0].role, Role::in);
  EXPECT_EQ(t->params[1].role, Role::out);
  EXPECT_EQ(t->params[0].count.text(), "rows * cols");
  EXPECT_EQ(t->params[2].kind, Param::scalar);
  EXPECT_EQ(t->size_sets(true).size(), 3u);
  EXPECT_EQ(t->size_sets(false).size(), 2u);
}

TEST(TaskNew, AMangledKernelNameIsFoundByItsDemangledName) {
  std::string ptx = ".visible .entry _Z5twicePKfPfj(\n.param .u64 _Z5twicePKfPfj_param_0\n)\n"
                    ".visible .entry _Z6thricePf(\n.param .u64 _Z6thricePf_param_0\n)\n"
                    ".visible .entry plain(\n)\n";
  auto m = find_entry_in_ptx(ptx, "twice");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(*m, "_Z5twicePKfPfj");
  EXPECT_EQ(*find_entry_in_ptx(ptx, "plain"), "plain");
  auto missing = find_entry_in_ptx(ptx, "twic");
  ASSERT_FALSE(missing.ok()) << "a prefix of a name is not the name";
  EXPECT_NE(missing.error().message.find("extern \"C\""), std::string::npos);
  EXPECT_NE(missing.error().message.find("_Z5twicePKfPfj"), std::string::npos) << "the error lists the kernels there are";
}

TEST(TaskNew, AKernelWithoutExternCBecomesATaskUnderItsOwnName) {
  if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "needs nvcc";
  std::string dir = ::testing::TempDir() + "/task-new-mangled";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_file(dir + "/k.cu", "__global__ void twice(const float* x, float* y, unsigned n) {\n"
                                        "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2 * x[i];\n}\n").ok());
  auto made = create_task_from_cuda(dir + "/t", dir + "/k.cu", "twice");
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto t = load_task(dir + "/t");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->entry, "twice");
  EXPECT_EQ(t->reference.entry.rfind("_Z", 0), 0u) << "the reference kernel keeps nvcc's mangled name";
  auto solution = read_file(dir + "/t/solution.ptx");
  ASSERT_TRUE(solution.ok());
  EXPECT_NE(solution->find(".entry twice("), std::string::npos) << "the starting solution names the task's entry";
  EXPECT_EQ(solution->find("_Z5twice"), std::string::npos);
}

TEST(TaskNew, NvccFailingIsAnErrorAndWritesNothing) {
  if (!find_cuda_tool("nvcc")) GTEST_SKIP() << "needs nvcc";
  std::string dir = ::testing::TempDir() + "/task-new-broken";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_file(dir + "/k.cu", "extern \"C\" __global__ void k(float* y) { y[0] = undeclared_thing; }\n").ok());
  auto made = create_task_from_cuda(dir + "/t", dir + "/k.cu", "k");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find("nvcc could not compile"), std::string::npos) << made.error().message;
  EXPECT_NE(made.error().message.find("undeclared_thing"), std::string::npos) << "nvcc's own message is shown";
  EXPECT_FALSE(std::filesystem::exists(dir + "/t/task.toml"));
}

}  // namespace
}  // namespace ptxforge::task
