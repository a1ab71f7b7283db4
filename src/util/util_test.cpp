#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include <sys/stat.h>

#include "util/paths.h"

#include "util/diagnostic.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge {
namespace {

TEST(Text, ClosestMatch) {
  EXPECT_EQ(closest_match("chek", {"check", "assemble", "fmt"}), "check");
  EXPECT_EQ(closest_match("zzzzzz", {"check", "assemble"}), "");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Diagnostic, RendersLineCaretHintAndNote) {
  std::string text = "line one\n  add.s32 %r1, %r9;\n";
  SourceText src("k.ptx", text);
  Diagnostics ds;
  auto& d = ds.error({2, 16}, "register '%r9' is not declared", "undeclared-reg");
  d.length = 3;
  d.hint = "declare it";
  d.notes.push_back({{1, 1}, "something here"});
  std::string out = render_text(ds, src);
  EXPECT_EQ(out,
            "k.ptx:2:16: error: register '%r9' is not declared [undeclared-reg]\n"
            "    add.s32 %r1, %r9;\n"
            "                 ^~~\n"
            "  hint: declare it\n"
            "k.ptx:1:1: note: something here\n"
            "  line one\n"
            "  ^\n"
            "k.ptx: 1 error, 0 warnings\n");
}

TEST(Diagnostic, JsonEscapesAndCarriesEverything) {
  std::string text = "a \"q\"\n";
  SourceText src("k.ptx", text);
  Diagnostics ds;
  ds.warning({1, 3}, "say \"hi\"\tnow", "x").fixit = FixIt{{1, 3}, 1, ";"};
  std::string j = render_json(ds, src);
  EXPECT_NE(j.find("\"message\":\"say \\\"hi\\\"\\tnow\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"source_line\":\"a \\\"q\\\"\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"replacement\":\";\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"warnings\":1"), std::string::npos);
}

TEST(Diagnostic, GarbageBytesAreNotEchoedRaw) {
  std::string text = "\x1b[31mred\xff\n";
  SourceText src("k.ptx", text);
  Diagnostics ds;
  ds.error({1, 1}, "bad", "bad-char");
  std::string out = render_text(ds, src);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\xff'), std::string::npos);
}

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(10));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(Subprocess, TimeoutKillsTheProcessGroup) {
  auto r = run_process({"sh", "-c", "sleep 30 & sleep 30"}, std::chrono::milliseconds(300));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->seconds, 5.0);
}

TEST(Subprocess, MissingProgramIsAnError) {
  auto r = run_process({"/nonexistent/tool"}, std::chrono::seconds(1));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cannot run"), std::string::npos);
}

// The descriptors open in this process now, each with what it points at.
std::set<std::string> open_fds() {
  std::set<std::string> out;
  for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) out.insert(e.path().filename().string());
  return out;
}

// Two threads start children at once: one feeds input to `cat`, the other's children list
// their own descriptors. A child must hold no pipe it was not given (another child's output
// pipe kept open would make that child's reader wait for the wrong process), and every start
// must finish (a child that allocates between fork and exec can deadlock on a lock another
// thread held at fork time, and its parent with it).
TEST(Subprocess, ChildrenStartedFromTwoThreadsAtOnceShareNoPipes) {
  auto before = open_fds();
  std::atomic<bool> stop{false};
  std::atomic<int> feeds{0};
  std::thread feeder([&] {
    ProcessOptions o;
    o.input = std::string(4096, 'x');
    while (!stop) {
      auto r = run_process({"cat"}, std::chrono::seconds(60), o);
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r->out.size(), 4096u);
      ++feeds;
    }
  });
  std::vector<std::string> leaks;
  for (int i = 0; i < 150; ++i) {
    // ls lists its own descriptors: "lr-x------ 1 u g 64 date 0 -> /dev/null".
    auto r = run_process({"ls", "-l", "/proc/self/fd"}, std::chrono::seconds(60));
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (auto line : split(r->out, '\n')) {
      auto arrow = line.find(" -> ");
      if (arrow == std::string_view::npos) continue;
      auto name = line.substr(0, arrow);
      std::string fd(name.substr(name.rfind(' ') + 1));
      if (fd == "1" || fd == "2" || before.count(fd)) continue;
      if (line.find("pipe:", arrow) != std::string_view::npos) leaks.emplace_back(line);
    }
  }
  stop = true;
  feeder.join();
  EXPECT_GT(feeds.load(), 0);
  EXPECT_TRUE(leaks.empty()) << leaks.size() << " inherited pipes, first: " << leaks.front();
}

TEST(Paths, DataDirIsFoundRelativeToTheBinary) {
  unsetenv("PTXFORGE_DATA_DIR");
  auto d = data_dir();  // from build/tests/ the walk up reaches the source tree
  ASSERT_TRUE(d);
  EXPECT_EQ(std::filesystem::weakly_canonical(*d), std::filesystem::weakly_canonical(PTXFORGE_SOURCE_DIR));
  setenv("PTXFORGE_DATA_DIR", "/somewhere", 1);
  EXPECT_EQ(data_dir(), std::optional<std::string>("/somewhere"));
  unsetenv("PTXFORGE_DATA_DIR");
}

TEST(TempDir, IsRemoved) {
  std::string path;
  {
    auto d = TempDir::create("ptxforge-test");
    ASSERT_TRUE(d);
    path = d->path();
    ASSERT_TRUE(write_file(path + "/x", "y"));
  }
  EXPECT_FALSE(read_file(path + "/x"));
}

// Whole files come back byte for byte: empty, with NULs and CRs, and larger than a read chunk;
// so do pipes, which have no size to read up front.
TEST(ReadFile, ReturnsEveryByteOfFilesAndPipes) {
  auto d = TempDir::create("ptxforge-test");
  ASSERT_TRUE(d);
  std::string big;
  for (int i = 0; i < 300000; ++i) big += static_cast<char>(i % 251);
  for (const std::string& text : {std::string(), std::string("a\0b\r\n", 5), big}) {
    ASSERT_TRUE(write_file(d->path() + "/f", text));
    auto back = read_file(d->path() + "/f");
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, text);
  }
  std::string fifo = d->path() + "/p";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { write_file(fifo, big); });
  auto piped = read_file(fifo);
  writer.join();
  ASSERT_TRUE(piped);
  EXPECT_EQ(*piped, big);
}

}  // namespace
}  // namespace ptxforge
