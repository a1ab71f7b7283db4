#include <gtest/gtest.h>

#include <filesystem>

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

}  // namespace
}  // namespace ptxforge
