// The printer's contract, case by case: print(parse(x)) parses back to an equal tree with the
// same comments, and printing that tree again gives the same text. The fuzz target
// fuzz/roundtrip_fuzz.cpp checks the same on any input; the cases it found broken are here, and
// their inputs in fuzz/seeds.
#include "ptx/printer.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "ptx/parser.h"

namespace ptxforge::ptx {
namespace {

std::string round_trip(const std::string& text) {
  Diagnostics d;
  Module m = parse(text, d);
  EXPECT_FALSE(d.has_errors()) << render_text(d, SourceText("t.ptx", text));
  std::string printed = print(m);
  Diagnostics d2;
  Module again = parse(printed, d2);
  EXPECT_FALSE(d2.has_errors()) << render_text(d2, SourceText("printed.ptx", printed));
  EXPECT_EQ(again, m) << printed;
  EXPECT_EQ(print(again), printed);
  EXPECT_EQ(again.comments.size(), m.comments.size()) << printed;
  for (size_t i = 0; i < std::min(again.comments.size(), m.comments.size()); ++i)
    EXPECT_EQ(again.comments[i].text, m.comments[i].text);
  return printed;
}

std::string in_kernel(const std::string& body) {
  return ".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n.reg .b32 %r<4>;\n" + body + "\n}\n";
}

// "a%b" lexes as a and the register %b, for ptxas as for us, so modulo keeps spaces.
TEST(Printer, ModuloKeepsItsRightOperandApart) {
  std::string printed = round_trip(in_kernel("mov.u32 %r1, n % 48;\nst.shared.u16 [r %\t48+-64], %r1;"));
  EXPECT_NE(printed.find("mov.u32 %r1, n % 48;"), std::string::npos) << printed;
  EXPECT_NE(printed.find("[r % 48+-64]"), std::string::npos) << printed;
}

// Whole-line comments stay on lines of their own before the code they preceded, at its
// indentation; comments after code stay at the end of its line; text is never changed.
TEST(Printer, KeepsCommentsInPlace) {
  const char* text =
      "// @launch grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1)\n"
      "// @scratch tmp bytes=1024\n"
      ".version 8.0 // header\n"
      ".target sm_90\n"
      "/* a block\n   comment */\n"
      ".entry k(.param .u32 n) // one parameter\n"
      "{\n"
      "  .reg .b32 %r<4>;   // registers\n"
      "      // indented oddly\n"
      "  ld.param.u32 %r1, [n]; /* block */ // line\n"
      "  @%r1 bra DONE;\n"
      "DONE:  // label\n"
      "  ret;\n"
      "  // last in the body\n"
      "}\n"
      "// the end\n";
  EXPECT_EQ(round_trip(text),
            "// @launch grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1)\n"
            "// @scratch tmp bytes=1024\n"
            ".version 8.0 // header\n"
            ".target sm_90\n"
            "\n"
            "/* a block\n   comment */\n"
            ".entry k(.param .u32 n) // one parameter\n"
            "{\n"
            "\t.reg .b32 %r<4>; // registers\n"
            "\t// indented oddly\n"
            "\tld.param.u32 %r1, [n]; /* block */ // line\n"
            "\t@%r1 bra DONE;\n"
            "DONE: // label\n"
            "\tret;\n"
            "\t// last in the body\n"
            "}\n"
            "// the end\n");
}

// A comment in the middle of a line cannot stay there in canonical form: it moves to the end
// of the line, before any line comment, so that nothing after it is commented out.
TEST(Printer, CommentInsideALineMovesToItsEnd) {
  std::string printed = round_trip(in_kernel("add.s32 %r1, /* x */ %r2, // y\n 1;\nret;"));
  EXPECT_NE(printed.find("\tadd.s32 %r1, %r2, 1; /* x */ // y\n\tret;"), std::string::npos) << printed;
}

// Parameters printed one per line keep their comments; so do debug sections, whose lines are
// kept as text (a comment inside such a line stays part of it).
TEST(Printer, KeepsCommentsInParameterListsAndSections) {
  const char* text =
      ".version 8.0\n.target sm_90\n"
      ".entry k(\n  // the inputs\n  .param .u64 a, // first\n  .param .u64 b  // second\n)\n{\nret;\n}\n"
      ".section .debug_str // strings\n{\n.b8 1 /* one */ 2 // after\n// own line\n.b8 3\n// before the brace\n}\n";
  EXPECT_EQ(round_trip(text),
            ".version 8.0\n.target sm_90\n\n"
            ".entry k(\n\t// the inputs\n\t.param .u64 a, // first\n\t.param .u64 b // second\n)\n{\n\tret;\n}\n\n"
            ".section .debug_str // strings\n{\n\t.b8 1 /* one */ 2 // after\n\t// own line\n\t.b8 3\n"
            "\t// before the brace\n}\n");
}

// Each body line is printed at the start of a line of its own, where `~~~`, `#` or three plain
// words would read as a Markdown fence, a preprocessor line or prose; inside a body they are
// data wherever they stand, so a body that parsed prints to one that parses the same.
TEST(Printer, SectionBodyLinesThatLookLikeTextStayData) {
  const char* text =
      ".version 8.0\n.target sm_90\n.section .debug_str { ~~~e\n"
      "/* x\n */ debug info here\n}\n";
  EXPECT_EQ(round_trip(text),
            ".version 8.0\n.target sm_90\n.section .debug_str\n{\n\t~~~e\n\t/* x\n */\n\tdebug info here\n}\n");
}

// A line comment ends before the '\r's at its end, however many there are: printed, it is
// followed by '\n' alone, and parsing that again must give the same text.
TEST(Printer, ALineCommentLosesEveryCarriageReturnAtItsEnd) {
  EXPECT_EQ(round_trip(".version 8.0\r\n.target sm_90 // t \r\r\r\r\n"), ".version 8.0\n.target sm_90 // t \n");
}

TEST(Printer, AModuleOfOnlyCommentsKeepsThem) {
  EXPECT_EQ(round_trip("// one\n  /* two */ // three\n"), "// one\n/* two */\n// three\n");
}

}  // namespace
}  // namespace ptxforge::ptx
