#include <gtest/gtest.h>

#include "task/task_new.h"
#include "task/task_spec.h"

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

}  // namespace
}  // namespace ptxforge::task
