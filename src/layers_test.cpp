// The layer order of docs/design.md, held over every file of src/ and tools/: each folder
// includes only itself and the folders below it; the worker process's files (src/worker/) are
// reached only from its entry point (tools/ptxforge/cmd_worker.cpp, through
// worker/worker_main.h); the CPU engine (src/emu/) includes only util, ptx, task, gpu and itself,
// and is reached only from its process's entry point (tools/ptxforge/cmd_emu_worker.cpp, through
// emu/emu_main.h); nothing outside src/worker/ reaches <cuda.h>, directly or through any chain of
// includes; the test-support headers (src/testing/) are included only by tests.
// The checker runs first on small made-up trees, so that each rule is seen to fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ptxforge {
namespace {

namespace fs = std::filesystem;

// Lower ranks lie below; two folders of one rank stand beside each other and include neither.
const std::map<std::string, int> kRank = {
    {"util", 0}, {"ptx", 1}, {"toolchain", 1}, {"llm", 1}, {"task", 2}, {"gpu", 3},  {"worker", 4},
    {"eval", 4}, {"emu", 4}, {"agent", 5}, {"bench", 6}, {"data", 6}, {"serve", 6}, {"tools", 7}, {"testing", 8},
};
// Folders that may include only the folders named (besides themselves), tighter than their rank:
// the CPU engine runs hostile PTX in its own process and needs no toolchain, model or network.
const std::map<std::string, std::set<std::string>> kOnly = {
    {"emu", {"util", "ptx", "task", "gpu"}},
    // The service runs candidates only through eval (the worker and the engine are processes).
    {"serve", {"util", "ptx", "toolchain", "llm", "task", "gpu", "eval", "agent"}},
};

struct Source {
  std::string folder;  // "gpu", "worker", "tools", ...
  bool test = false;   // *_test.cpp: may reach further than its folder
  std::vector<std::string> includes;  // project files, as paths relative to the tree's root
  bool cuda_h = false;                // includes <cuda.h> itself
};

// Every .h/.cpp under root/src and root/tools, keyed by its path relative to root.
std::map<std::string, Source> read_tree(const fs::path& root) {
  static const std::regex quoted(R"(^\s*#\s*include\s*"([^"]+)\")"), cuda(R"(^\s*#\s*include\s*<cuda\.h>)");
  std::map<std::string, Source> files;
  for (const char* top : {"src", "tools"}) {
    if (!fs::exists(root / top)) continue;
    for (auto& e : fs::recursive_directory_iterator(root / top)) {
      auto ext = e.path().extension();
      if (ext != ".cpp" && ext != ".h") continue;
      std::string rel = fs::relative(e.path(), root).generic_string();
      Source s;
      s.folder = std::string(top) == "tools" ? "tools" : fs::relative(e.path(), root / "src").begin()->string();
      s.test = e.path().stem().string().ends_with("_test");
      std::ifstream in(e.path());
      std::string line;
      std::smatch m;
      while (std::getline(in, line)) {
        if (std::regex_search(line, cuda)) s.cuda_h = true;
        if (!std::regex_search(line, m, quoted)) continue;
        std::string inc = m[1];
        // "dir/file.h" is under src/; a bare name is beside the file (tools/ptxforge/cli_parse.h).
        fs::path beside = e.path().parent_path() / inc, in_src = root / "src" / inc;
        if (fs::exists(in_src)) s.includes.push_back(fs::relative(in_src, root).generic_string());
        else if (fs::exists(beside)) s.includes.push_back(fs::relative(beside, root).generic_string());
      }
      files[rel] = std::move(s);
    }
  }
  return files;
}

std::vector<std::string> check_layers(const fs::path& root) {
  auto files = read_tree(root);
  std::vector<std::string> problems;
  // Direct includes: the order, and src/testing/ for tests alone.
  for (auto& [path, s] : files) {
    for (auto& inc : s.includes) {
      const std::string& to = files.count(inc) ? files[inc].folder : "";
      if (to.empty() || to == s.folder) continue;
      if (to == "testing") {
        if (!s.test && s.folder != "testing") problems.push_back(path + " includes the test-support header " + inc);
        continue;
      }
      if (s.test || !kRank.count(s.folder) || !kRank.count(to)) continue;
      if (auto only = kOnly.find(s.folder); only != kOnly.end() && !only->second.count(to)) {
        problems.push_back(path + " (" + s.folder + ") includes " + inc + " (" + to + "), outside what " + s.folder +
                           "/ may include");
        continue;
      }
      if (kRank.at(to) >= kRank.at(s.folder))
        problems.push_back(path + " (" + s.folder + ") includes " + inc + " (" + to + "), which is not below it");
    }
  }
  // Transitive: what each non-worker, non-test file reaches.
  for (auto& [path, s] : files) {
    if (s.test || s.folder == "worker" || s.folder == "testing") continue;
    std::set<std::string> seen;
    std::vector<std::string> todo = s.includes;
    bool cuda = s.cuda_h;
    std::string worker_reached, emu_reached;
    while (!todo.empty()) {
      std::string f = todo.back();
      todo.pop_back();
      if (!seen.insert(f).second || !files.count(f)) continue;
      const Source& t = files[f];
      cuda = cuda || t.cuda_h;
      bool entry = f == "src/worker/worker_main.h" && path == "tools/ptxforge/cmd_worker.cpp";
      if (t.folder == "worker" && !entry && worker_reached.empty()) worker_reached = f;
      bool emu_entry = f == "src/emu/emu_main.h" && path == "tools/ptxforge/cmd_emu_worker.cpp";
      if (t.folder == "emu" && s.folder != "emu" && !emu_entry && emu_reached.empty()) emu_reached = f;
      for (auto& next : t.includes) todo.push_back(next);
    }
    if (cuda) problems.push_back(path + " reaches <cuda.h>: only src/worker/ may (the parent asks the worker)");
    if (!worker_reached.empty())
      problems.push_back(path + " reaches " + worker_reached +
                         ": the worker is entered only through worker/worker_main.h from tools/ptxforge/cmd_worker.cpp");
    if (!emu_reached.empty())
      problems.push_back(path + " reaches " + emu_reached +
                         ": the CPU engine is entered only through emu/emu_main.h from tools/ptxforge/cmd_emu_worker.cpp");
  }
  return problems;
}

// A made-up tree under a temporary folder: path -> contents.
class Tree {
 public:
  explicit Tree(const std::map<std::string, std::string>& files) {
    root_ = fs::temp_directory_path() / ("layers_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    for (auto& [path, text] : files) {
      fs::create_directories((root_ / path).parent_path());
      std::ofstream(root_ / path) << text;
    }
  }
  ~Tree() { fs::remove_all(root_); }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

std::string joined(const std::vector<std::string>& v) {
  std::ostringstream out;
  for (auto& s : v) out << s << "\n";
  return out.str();
}

TEST(LayerChecker, AnIncludeUpwardsIsReported) {
  Tree t({{"src/util/a.h", "#include \"task/b.h\"\n"}, {"src/task/b.h", ""}});
  auto p = check_layers(t.root());
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_NE(p[0].find("src/util/a.h (util) includes src/task/b.h (task)"), std::string::npos) << p[0];
}

TEST(LayerChecker, FoldersBesideEachOtherIncludeNeither) {
  Tree t({{"src/eval/a.cpp", "#include \"worker/b.h\"\n"}, {"src/worker/b.h", ""}});
  auto p = check_layers(t.root());
  EXPECT_EQ(p.size(), 2u) << joined(p);  // the order, and the worker reached from outside
}

TEST(LayerChecker, CudaHReachedThroughAChainIsReported) {
  Tree t({{"src/agent/a.cpp", "#include \"gpu/b.h\"\n"},
          {"src/gpu/b.h", "#include \"gpu/c.h\"\n"},
          {"src/gpu/c.h", "#include <cuda.h>\n"}});
  auto p = check_layers(t.root());
  EXPECT_EQ(p.size(), 3u) << joined(p);  // c.h, b.h and a.cpp all reach it
  for (auto& s : p) EXPECT_NE(s.find("reaches <cuda.h>"), std::string::npos) << s;
}

TEST(LayerChecker, TheWorkerIsEnteredOnlyThroughItsEntryPoint) {
  Tree t({{"tools/ptxforge/cmd_worker.cpp", "#include \"worker/worker_main.h\"\n"},
          {"tools/ptxforge/cmd_run.cpp", "#include \"worker/executor.h\"\n"},
          {"src/worker/worker_main.h", ""},
          {"src/worker/executor.h", "#include <cuda.h>\n"}});
  auto p = check_layers(t.root());
  ASSERT_EQ(p.size(), 2u) << joined(p);  // cmd_run.cpp: the worker, and <cuda.h> through it
  for (auto& s : p) EXPECT_EQ(s.rfind("tools/ptxforge/cmd_run.cpp", 0), 0u) << s;
}

TEST(LayerChecker, TheEngineIsEnteredOnlyThroughItsEntryPoint) {
  Tree t({{"tools/ptxforge/cmd_emu_worker.cpp", "#include \"emu/emu_main.h\"\n"},
          {"tools/ptxforge/cmd_run.cpp", "#include \"emu/executor.h\"\n"},
          {"src/agent/a.cpp", "#include \"eval/b.h\"\n"},
          {"src/eval/b.h", "#include \"emu/emu_main.h\"\n"},
          {"src/emu/emu_main.h", ""},
          {"src/emu/executor.h", "#include \"emu/engine.h\"\n"},
          {"src/emu/engine.h", ""}});
  auto p = check_layers(t.root());
  // cmd_run.cpp reaches executor.h; eval/b.h includes emu/ beside it, and it and a.cpp reach emu_main.h.
  ASSERT_EQ(p.size(), 4u) << joined(p);
  for (auto& s : p) EXPECT_NE(s.rfind("tools/ptxforge/cmd_emu_worker.cpp", 0), 0u) << "the entry point is allowed: " << s;
  EXPECT_NE(joined(p).find("tools/ptxforge/cmd_run.cpp reaches src/emu/executor.h"), std::string::npos) << joined(p);
}

TEST(LayerChecker, TheEngineIncludesOnlyUtilPtxTaskAndGpu) {
  Tree t({{"src/emu/a.cpp", "#include \"toolchain/t.h\"\n#include \"gpu/g.h\"\n#include \"ptx/p.h\"\n"},
          {"src/emu/b.cpp", "#include \"worker/w.h\"\n"},
          {"src/toolchain/t.h", ""},
          {"src/gpu/g.h", ""},
          {"src/ptx/p.h", ""},
          {"src/worker/w.h", ""}});
  auto p = check_layers(t.root());
  // a.cpp: the toolchain (below it, yet not for the engine); b.cpp: the worker, not an engine layer and reached.
  ASSERT_EQ(p.size(), 3u) << joined(p);
  EXPECT_NE(joined(p).find("src/emu/a.cpp (emu) includes src/toolchain/t.h (toolchain), outside what emu/ may include"),
            std::string::npos)
      << joined(p);
  EXPECT_EQ(joined(p).find("gpu/g.h"), std::string::npos) << joined(p);
}

TEST(LayerChecker, TestSupportIsForTestsOnly) {
  Tree t({{"src/eval/a.cpp", "#include \"testing/fake.h\"\n"},
          {"src/eval/a_test.cpp", "#include \"testing/fake.h\"\n#include \"agent/x.h\"\n"},
          {"src/testing/fake.h", ""},
          {"src/agent/x.h", ""}});
  auto p = check_layers(t.root());
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_NE(p[0].find("src/eval/a.cpp includes the test-support header"), std::string::npos) << p[0];
}

TEST(Layers, TheSourceTreeKeepsTheDocumentedOrder) {
  fs::path root = PTXFORGE_SOURCE_DIR;
  auto files = read_tree(root);
  ASSERT_GT(files.size(), 200u) << "the source tree was not found at " << root;
  for (const auto& [path, s] : files)
    EXPECT_TRUE(s.test || kRank.count(s.folder)) << path << " is in a folder the layer order does not name: " << s.folder;
  // The rules bite on the real tree: the worker and its one entry are where the checker looks.
  ASSERT_TRUE(files.count("src/worker/worker_main.h") && files.count("src/worker/driver.h"));
  EXPECT_TRUE(files["src/worker/driver.h"].cuda_h);
  const auto& entry = files["tools/ptxforge/cmd_worker.cpp"].includes;
  EXPECT_NE(std::find(entry.begin(), entry.end(), "src/worker/worker_main.h"), entry.end());
  // The engine's one entry, likewise.
  ASSERT_TRUE(files.count("src/emu/emu_main.h") && files.count("tools/ptxforge/cmd_emu_worker.cpp"));
  const auto& emu_entry = files["tools/ptxforge/cmd_emu_worker.cpp"].includes;
  EXPECT_NE(std::find(emu_entry.begin(), emu_entry.end(), "src/emu/emu_main.h"), emu_entry.end());
  auto p = check_layers(root);
  EXPECT_TRUE(p.empty()) << joined(p);
}

}  // namespace
}  // namespace ptxforge
