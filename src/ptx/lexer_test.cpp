#include "ptx/lexer.h"

#include <gtest/gtest.h>

namespace ptxforge::ptx {
namespace {

std::vector<Token> lex_all(std::string_view text, Diagnostics& d) {
  Lexer lx(text, d);
  std::vector<Token> out;
  for (Token t = lx.next(); t.kind != Tok::eof; t = lx.next()) out.push_back(t);
  return out;
}

TEST(Lexer, SplitsOpcodeModifiersAndOperands) {
  Diagnostics d;
  auto t = lex_all("ld.global.v4.f32 {%f1, _}, [%rd1+-8];", d);
  ASSERT_EQ(t.size(), 17u);
  EXPECT_EQ(t[0].kind, Tok::ident);
  EXPECT_EQ(t[0].text, "ld");
  EXPECT_EQ(t[1].text, ".global");
  EXPECT_EQ(t[3].kind, Tok::directive);
  EXPECT_EQ(t[5].text, "%f1");
  EXPECT_EQ(t[7].text, "_");
  EXPECT_EQ(t[14].text, "8");
  EXPECT_TRUE(d.empty());
}

TEST(Lexer, ScopedModifiersAndHexFloats) {
  Diagnostics d;
  auto t = lex_all("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes 0f3F800000 0d3FF0000000000000 1.5e-3 0x1FU", d);
  EXPECT_EQ(t[3].text, ".shared::cluster");
  EXPECT_EQ(t[5].text, ".mbarrier::complete_tx::bytes");
  EXPECT_EQ(t[6].kind, Tok::floating);
  EXPECT_EQ(t[7].kind, Tok::floating);
  EXPECT_EQ(t[8].kind, Tok::floating);
  EXPECT_EQ(t[9].kind, Tok::integer);
  EXPECT_TRUE(d.empty());
}

TEST(Lexer, TracksLinesAndColumns) {
  Diagnostics d;
  auto t = lex_all("// c\n  add /* x\n y */ %r1;", d);
  EXPECT_EQ(t[0].loc.line, 2u);
  EXPECT_EQ(t[0].loc.col, 3u);
  EXPECT_EQ(t[1].loc.line, 3u);
  EXPECT_EQ(t[1].loc.col, 7u);
}

TEST(Lexer, ShortHexFloatIsAnError) {
  Diagnostics d;
  lex_all("0f3F80", d);
  ASSERT_EQ(d.list().size(), 1u);
  EXPECT_EQ(d.list()[0].check_id, "bad-literal");
}

TEST(Lexer, UnterminatedStringAndComment) {
  Diagnostics d;
  lex_all(".pragma \"nounroll;\n/* never closed", d);
  ASSERT_EQ(d.list().size(), 2u);
  EXPECT_EQ(d.list()[0].check_id, "unterminated-string");
  EXPECT_EQ(d.list()[1].check_id, "unterminated-comment");
}

TEST(Lexer, MarkdownFenceAndProseAreReportedAndSkipped) {
  Diagnostics d;
  auto t = lex_all("```ptx\nHere is the kernel you asked for.\nret;\n```\n", d);
  ASSERT_EQ(d.list().size(), 3u);
  EXPECT_EQ(d.list()[0].check_id, "markdown-fence");
  EXPECT_EQ(d.list()[1].check_id, "prose-in-ptx");
  EXPECT_EQ(d.list()[1].loc.line, 2u);
  ASSERT_EQ(t.size(), 2u);  // ret ;
  EXPECT_EQ(t[0].text, "ret");
}

TEST(Lexer, PreprocessorLinesAreReportedAndSkipped) {
  Diagnostics d;
  auto t = lex_all("#define N 4\n  #include \"x.h\"\nret;\n", d);
  ASSERT_EQ(d.list().size(), 2u);
  EXPECT_EQ(d.list()[0].check_id, "preprocessor");
  EXPECT_EQ(d.list()[1].loc.line, 2u);
  ASSERT_EQ(t.size(), 2u);  // ret ;
}

TEST(Lexer, LabelLineWithInstructionIsNotProse) {
  Diagnostics d;
  lex_all("done: ret;\nbar.sync 0;\nexit;", d);
  EXPECT_TRUE(d.empty());
}

TEST(Lexer, BinaryGarbageGivesOneErrorPerLine) {
  Diagnostics d;
  std::string garbage = "\x01\x02\xff\xfe abc\n\x80\x81\n";
  lex_all(garbage, d);
  ASSERT_EQ(d.list().size(), 2u);
  EXPECT_EQ(d.list()[0].check_id, "bad-char");
  EXPECT_NE(d.list()[1].message.find("non-ASCII"), std::string::npos);
}

// Comments are skipped like blanks, and recorded on the side when asked: their text as written
// (a line comment without the \r of a CRLF line end), where they start, and whether code came
// before them on their line.
TEST(Lexer, RecordsCommentsOnTheSide) {
  Diagnostics d;
  std::vector<Comment> comments;
  Lexer lx("// @launch grid=(1,1,1)\r\n\tret; /* a\nb */ exit; // end", d);
  lx.record_comments(&comments);
  std::vector<std::string_view> tokens;
  for (Token t = lx.next(); t.kind != Tok::eof; t = lx.next()) tokens.push_back(t.text);
  EXPECT_EQ(tokens, (std::vector<std::string_view>{"ret", ";", "exit", ";"}));
  ASSERT_EQ(comments.size(), 3u);
  EXPECT_EQ(comments[0].text, "// @launch grid=(1,1,1)");
  EXPECT_TRUE(comments[0].own_line);
  EXPECT_EQ(comments[1].text, "/* a\nb */");
  EXPECT_FALSE(comments[1].own_line);
  EXPECT_EQ(comments[1].loc.line, 2u);
  EXPECT_EQ(comments[1].loc.col, 7u);
  EXPECT_EQ(comments[2].text, "// end");
  EXPECT_EQ(comments[2].loc.line, 3u);
  EXPECT_FALSE(comments[2].own_line);
  EXPECT_TRUE(d.empty());
}

}  // namespace
}  // namespace ptxforge::ptx
