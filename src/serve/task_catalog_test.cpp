// The catalog is the only place a client's task name meets the file system's names: these
// tests hold that a name which is not exactly an entry (a traversal, an absolute path, an
// encoded dot, a NUL) finds nothing, and that a broken --tasks folder stops the start.
#include "serve/task_catalog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "util/paths.h"

namespace ptxforge::serve {
namespace {
namespace fs = std::filesystem;

TaskCatalog::Entry entry(std::string name) { return TaskCatalog::Entry{name, "/nowhere/" + name, task::Task{}}; }

class TaskCatalogFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("catalog-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  // A copy of a shipped task under root_/rel.
  void copy_task(const std::string& shipped, const std::string& rel) {
    auto data = data_dir();
    ASSERT_TRUE(data.has_value());
    fs::create_directories(root_ / rel);
    fs::copy(fs::path(*data) / "tasks" / shipped, root_ / rel, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  fs::path root_;
};

TEST(TaskCatalog, ShippedTasksHaveLevelNames) {
  auto cat = TaskCatalog::load({});
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  ASSERT_GE(cat->entries().size(), 10u);
  const auto* e = cat->find("level1/vector_add");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "level1/vector_add");
  EXPECT_EQ(e->task.entry, "vector_add");
  EXPECT_TRUE(fs::exists(fs::path(e->dir) / "task.toml"));
  // Sorted by name, each name a level folder and a task folder.
  for (size_t i = 1; i < cat->entries().size(); ++i) EXPECT_LT(cat->entries()[i - 1].name, cat->entries()[i].name);
  for (auto& x : cat->entries()) EXPECT_EQ(x.name.rfind("level", 0), 0u) << x.name;
}

TEST(TaskCatalog, BareNameFindsTheUniqueEntry) {
  auto cat = TaskCatalog::load({});
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  EXPECT_EQ(cat->find("vector_add"), cat->find("level1/vector_add"));
  EXPECT_EQ(cat->find("sgemm")->name, "level1/sgemm");
  EXPECT_EQ(cat->find("no_such_task"), nullptr);
  EXPECT_EQ(cat->find("level2/vector_add"), nullptr);  // a folder in the name: full names only
  EXPECT_EQ(cat->find("1/vector_add"), nullptr);       // not a suffix match
}

TEST(TaskCatalog, AmbiguousBareNameFindsNothing) {
  TaskCatalog cat({entry("level1/add"), entry("mine/add"), entry("level1/mul")});
  EXPECT_EQ(cat.find("add"), nullptr);
  EXPECT_EQ(cat.find("mul")->name, "level1/mul");
  EXPECT_EQ(cat.find("mine/add")->name, "mine/add");
  EXPECT_EQ(cat.find("level1/add")->name, "level1/add");
}

TEST(TaskCatalog, FullNameWinsOverAnotherEntrysLastPart) {
  TaskCatalog cat({entry("add"), entry("level1/add")});
  EXPECT_EQ(cat.find("add")->name, "add");
}

TEST(TaskCatalog, PathLikeAndOddNamesAreNotFound) {
  auto cat = TaskCatalog::load({});
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  using namespace std::string_literals;
  for (std::string name : {"../x"s, "/etc"s, "/etc/passwd"s, "level1/../level1/vector_add"s, "./level1/vector_add"s,
                           "level1//vector_add"s, "level1/vector_add/"s, "/level1/vector_add"s, "%2e%2e"s,
                           "%2e%2e/level1/vector_add"s, "level1%2fvector_add"s, "vector_add\0"s, "vector\0_add"s,
                           "vector_ädd"s, "véctor_add"s, "level1\\vector_add"s, "vector_add "s, " vector_add"s, ""s, "."s,
                           ".."s, "level1/vector_add/task.toml"s, "tasks/level1/vector_add"s, std::string(200, 'a')}) {
    EXPECT_EQ(cat->find(name), nullptr) << "'" << name << "'";
  }
  // The same name, plainly written, is found: the refusals above are about the form.
  EXPECT_NE(cat->find("level1/vector_add"), nullptr);
}

TEST_F(TaskCatalogFolders, ExtraFoldersAddTheirTasks) {
  copy_task("level1/vector_add", "my_add");
  copy_task("level1/saxpy", "group/my_saxpy");
  auto cat = TaskCatalog::load({root_.string()});
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  ASSERT_NE(cat->find("my_add"), nullptr);
  EXPECT_EQ(cat->find("my_add")->task.entry, "vector_add");
  ASSERT_NE(cat->find("group/my_saxpy"), nullptr);
  EXPECT_EQ(cat->find("my_saxpy"), cat->find("group/my_saxpy"));
  EXPECT_NE(cat->find("level1/vector_add"), nullptr);  // the shipped ones are still there
}

TEST_F(TaskCatalogFolders, AFolderThatIsItselfATask) {
  copy_task("level1/vector_add", "solo_add");
  auto cat = TaskCatalog::load({(root_ / "solo_add").string()});
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  EXPECT_NE(cat->find("solo_add"), nullptr);
}

TEST_F(TaskCatalogFolders, SameLastPartAsAShippedTaskIsAmbiguous) {
  copy_task("level1/vector_add", "mine/vector_add");
  auto cat = TaskCatalog::load({root_.string()});
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  EXPECT_EQ(cat->find("vector_add"), nullptr);
  EXPECT_NE(cat->find("mine/vector_add"), nullptr);
  EXPECT_NE(cat->find("level1/vector_add"), nullptr);
}

TEST_F(TaskCatalogFolders, BrokenTaskIsAnErrorNamingIt) {
  copy_task("level1/vector_add", "fine_add");
  fs::create_directories(root_ / "broken_op");
  std::ofstream(root_ / "broken_op" / "task.toml") << "name = \"broken_op\"\nlevel = \"not a number\"\n[[param]\n";
  auto cat = TaskCatalog::load({root_.string()});
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.error().message.find("broken_op"), std::string::npos) << cat.error().message;
}

TEST_F(TaskCatalogFolders, TwoTasksWithOneNameAreAnError) {
  fs::path a = root_ / "a", b = root_ / "b";
  copy_task("level1/vector_add", "a/twin");
  copy_task("level1/saxpy", "b/twin");
  auto cat = TaskCatalog::load({a.string(), b.string()});
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.error().message.find("twin"), std::string::npos) << cat.error().message;
}

TEST_F(TaskCatalogFolders, UnusableFolderNameIsAnError) {
  copy_task("level1/vector_add", "has space");
  auto cat = TaskCatalog::load({root_.string()});
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.error().message.find("has space"), std::string::npos) << cat.error().message;
}

TEST_F(TaskCatalogFolders, MissingFolderIsAnError) {
  auto cat = TaskCatalog::load({(root_ / "absent").string()});
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.error().message.find("absent"), std::string::npos);
}

}  // namespace
}  // namespace ptxforge::serve
