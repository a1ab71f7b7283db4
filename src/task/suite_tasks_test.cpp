// Every task shipped under tasks/ (and the test tasks under tests/tasks/) loads, and its
// roofline says what a kernel must move on every size set: the time stage's physical-limit
// gate depends on it, and a task with no traffic could never catch an impossible time.
#include <gtest/gtest.h>

#include <filesystem>

#include "task/task_spec.h"

namespace ptxforge::task {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> task_dirs() {
  std::vector<std::string> out;
  for (const char* root : {"/tasks", "/tests/tasks"})
    for (auto& e : fs::recursive_directory_iterator(std::string(PTXFORGE_SOURCE_DIR) + root))
      if (e.path().filename() == "task.toml") out.push_back(e.path().parent_path().string());
  return out;
}

TEST(ShippedTasks, LoadAndStateTheirTrafficOnEverySizeSet) {
  auto dirs = task_dirs();
  ASSERT_GE(dirs.size(), 11u);
  for (auto& d : dirs) {
    auto t = load_task(d);
    ASSERT_TRUE(t) << d << "\n" << t.error().message;
    ASSERT_TRUE(t->roofline_bytes && t->roofline_flops) << d;
    for (auto& s : t->sizes) {
      auto b = t->roofline_bytes->evaluate(s.values);
      ASSERT_TRUE(b) << d << " " << s.name;
      EXPECT_GT(b->as_double(), 0) << d << " " << s.name;
      // At least every input buffer is read once: the bytes cannot be below the inputs' size.
      double inputs = 0;
      for (auto& p : t->params)
        if (p.kind == Param::buffer && p.role != Role::out) inputs += *p.count.evaluate_int(s.values) * dtype_size(p.dtype);
      EXPECT_GE(b->as_double(), inputs) << d << " " << s.name << ": the roofline is below the input traffic";
      auto f = t->roofline_flops->evaluate(s.values);
      ASSERT_TRUE(f) << d;
      EXPECT_GE(f->as_double(), 0) << d;
    }
  }
}

}  // namespace
}  // namespace ptxforge::task
