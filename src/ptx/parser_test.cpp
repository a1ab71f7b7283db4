#include "ptx/parser.h"

#include <gtest/gtest.h>

#include "ptx/printer.h"

namespace ptxforge::ptx {
namespace {

Module parse_ok(const std::string& text) {
  Diagnostics d;
  Module m = parse(text, d);
  EXPECT_TRUE(d.empty()) << render_text(d, SourceText("t.ptx", text));
  return m;
}

void expect_round_trip(const std::string& text) {
  Module m = parse_ok(text);
  std::string printed = print(m);
  Diagnostics d;
  Module again = parse(printed, d);
  EXPECT_TRUE(d.empty()) << printed;
  EXPECT_EQ(again, m) << printed;
  EXPECT_EQ(print(again), printed);  // printing is a fixed point
}

const char* kFull = R"(
.version 8.0
.target sm_90a, debug
.address_size 64
.file 1 "k.cu", 1700000000, 1234
.extern .shared .align 16 .b8 dyn[];
.global .align 4 .u32 table[4] = {1, 2, 3, 4};
.const .f32 pi = 0f40490FDB;
.global .u64 gp = generic(table)+4;
.weak .global .align 8 .b8 w[16];
.extern .func (.param .b32 r) ext(.param .b32 a);
.func (.param .b32 ret0) f(.param .b32 a, .param .align 8 .b8 s[16])
.noreturn
{
  ret;
}
.visible .entry k(.param .u64 .ptr .global .align 16 p, .param .align 64 .b8 tmap[128])
.maxntid 128, 1, 1
.minnctapersm 1
.reqnctapercluster 2, 1, 1
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .v4 .f32 %v;
  .local .align 8 .b8 depot[32];
  .loc 1 10 5
  .loc 1 11 2, function_name $L__info, inlined_at 1 20 3
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1|%p2, %r1, 32;
  @!%p1 bra $L__done;
  { .reg .b32 t; mov.b32 t, 0f3F800000; }
  ld.global.v4.f32 {%r1, %r2, _, %r4}, [%rd1+-16];
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dyn], [tmap, {%r1, %r2}], [dyn+8];
  add.s32 %r3, %r1, (1<<4)+2*3;
  ts: .branchtargets $L__done, $L__other;
  brx.idx %r1, ts;
$L__other:
  call.uni (%r5), f, (%r1, %rd1);
  .pragma "nounroll";
$L__done:
  ret;
}
.section .debug_abbrev
{
  .b8 1, 17, 1
  .b32 .debug_info
}
)";

TEST(Parser, ParsesTheWholeLanguageSample) {
  Module m = parse_ok(kFull);
  EXPECT_EQ(m.version_text(), "8.0");
  EXPECT_EQ(m.target_names(), (std::vector<std::string>{"sm_90a", "debug"}));
  int functions = 0;
  for (auto& it : m.items)
    if (std::holds_alternative<Function>(it.node)) ++functions;
  EXPECT_EQ(functions, 3);
}

TEST(Parser, RoundTripsTheWholeLanguageSample) { expect_round_trip(kFull); }

TEST(Parser, KeepsStructureOfOperands) {
  Module m = parse_ok(".version 8.0\n.target sm_90\n.entry k(){ .reg .b32 %r<2>; ld.shared.v2.u32 {%r0, %r1}, [sym+8]; }");
  auto& f = std::get<Function>(m.items.back().node);
  auto& ins = *f.body->stmts[1].get_if<Instruction>();
  EXPECT_EQ(ins.opcode, "ld");
  EXPECT_EQ(std::vector<std::string>(ins.mods.begin(), ins.mods.end()), (std::vector<std::string>{".shared", ".v2", ".u32"}));
  ASSERT_EQ(ins.operands.size(), 2u);
  EXPECT_EQ(ins.operands[0].kind, Operand::Kind::vector);
  EXPECT_EQ(ins.operands[1].kind, Operand::Kind::address);
  EXPECT_EQ(print(ins.operands[1]), "[sym+8]");
  auto& decl = *f.body->stmts[0].get_if<VarDecl>();
  EXPECT_EQ(decl.names[0].range, 2u);
}

// Debug sections take whole plain lines at once; other lines go token by token. Both must
// give the same line texts, and the line count must stay right after either.
TEST(Parser, SectionLinesKeepTheirTextWhicheverWayTheyAreRead) {
  const char* text =
      ".version 8.0\n.target sm_90\n"
      ".section .debug_info\n{\n"
      ".b32 2231\n"
      ".b8 2,0 // a comment ends the line's text\n"
      "\n"
      "$L__info_string0:\n"
      ".b8 0x1F, 108,103\n"
      ".b64 $L__func_begin0+12\n"
      "\t.b8 \"str\"\n"
      "}\n";
  Module m = parse_ok(text);
  auto& d = std::get<Directive>(m.items.back().node);
  std::vector<Text> found = section_lines(d);
  std::vector<std::string> lines(found.begin(), found.end());
  EXPECT_EQ(lines, (std::vector<std::string>{".b32 2231", ".b8 2,0", "$L__info_string0:", ".b8 0x1F, 108,103",
                                             ".b64 $L__func_begin0+12", ".b8 \"str\""}));
}

// A line that begins with a lone carriage return (old Mac line ends) keeps the text from its
// first token, as it does when read token by token; before, the plain-line path kept the \r and
// the printed module parsed back to a different line.
TEST(Parser, SectionLineAfterACarriageReturnStartsAtItsFirstToken) {
  const char* text = ".version 8.0\n.target sm_90\n.section .debug_info\n{\n.b8 1\n\r.b8 2\n}\n";
  Module m = parse_ok(text);
  auto& d = std::get<Directive>(m.items.back().node);
  std::vector<Text> found = section_lines(d);
  std::vector<std::string> lines(found.begin(), found.end());
  EXPECT_EQ(lines, (std::vector<std::string>{".b8 1", ".b8 2"}));
  expect_round_trip(text);
}

// An @@DWARF line runs to the end of its line, so inside a directive's words it would swallow
// the words after it when printed; ptxas calls it a syntax error there.
TEST(Parser, DwarfLineInsideADirectiveIsAnError) {
  for (const char* text : {".section .debug_str @@DWARF x\n y {\n}\n", ".pragma @@DWARF x\n;\n",
                           ".global .attribute(\n@@DWARF x\n) .b32 v;\n"}) {
    Diagnostics d;
    parse(text, d);
    ASSERT_EQ(d.error_count(), 1u) << text;
    EXPECT_EQ(d.list()[0].message, "unexpected @@DWARF line inside a directive");
  }
  expect_round_trip("@@DWARF .byte 1, 2\n.version 8.0\n");  // at module level it stays a line of its own
}

// ptxas takes `.loc f l c` or `.loc f l c, function_name L[+n], inlined_at f l c`, nothing
// between (each form below was tried with ptxas 13.0). .loc has no ';', so a lenient parse
// would read the next line's first word as a name and print something that parses otherwise.
TEST(Parser, LocTakesOnlyTheFormsPtxasTakes) {
  expect_round_trip(".version 8.0\n.target sm_90\n.entry k()\n{\n\t.loc 1 5 0, function_name $L__info+2, inlined_at 1 2 3\n"
                    "$L__tmp14:\n\t.loc 1 6 0\n\tret;\n}\n");
  for (const char* tail : {", %r3", ", function_name", ", function_name foo", ", inlined_at 1 2 3",
                           ", function_name foo, inlined_at 1 2", ", function_name foo inlined_at 1 2 3"}) {
    std::string text = std::string(".version 8.0\n.target sm_90\n.entry k()\n{\n\t.loc 1 5 0") + tail + "\n\tret;\n}\n";
    Diagnostics d;
    parse(text, d);
    ASSERT_GE(d.error_count(), 1u) << tail;
    // At the .loc, or (as ptxas reports it) at the token after it where a clause is cut short.
    EXPECT_TRUE(d.list()[0].loc.line == 5u || d.list()[0].loc.line == 6u) << tail;
    EXPECT_NE(d.list()[0].hint.find("function_name <label>"), std::string::npos) << tail;
  }
}

// ptxas 13.0 rejects each of these with "Parsing error near ';'".
TEST(Parser, AStraySemicolonIsAnError) {
  for (const char* text : {".version 8.0\n.target sm_90\n.entry k()\n{\n\tret;;\n}\n",
                           ".version 8.0\n.target sm_90\n.entry k()\n{\n\t.loc 1 6 0;\n\tret;\n}\n",
                           ".version 8.0\n.target sm_90\n.entry k()\n{\n\t{ ret; };\n}\n",
                           ".version 8.0\n.target sm_90\n.global .u32 g;;\n", ".version 8.0\n.target sm_90\n.file 1 \"a.cu\";\n"}) {
    Diagnostics d;
    parse(text, d);
    ASSERT_EQ(d.error_count(), 1u) << text;
    EXPECT_EQ(d.list()[0].message, "stray ';': PTX has no empty statement") << text;
  }
}

TEST(Parser, ErrorsInsideASectionAreReportedOnTheirLine) {
  Diagnostics d;
  parse(".version 8.0\n.target sm_90\n.section .debug_info\n{\n.b8 1,2\n.b8 3,4\n.b8 5,1abc\n.b8 6 \xff\n}\n", d);
  ASSERT_EQ(d.error_count(), 2u);
  EXPECT_EQ(d.list()[0].check_id, "bad-literal");
  EXPECT_EQ(d.list()[0].loc.line, 7u);
  EXPECT_EQ(d.list()[0].loc.col, 7u);
  EXPECT_EQ(d.list()[1].check_id, "bad-char");
  EXPECT_EQ(d.list()[1].loc.line, 8u);
  EXPECT_EQ(d.list()[1].loc.col, 7u);
}

TEST(Parser, AModuleOwnsItsTextAndCanBeMoved) {
  Module moved;
  std::string printed;
  {
    std::string text = ".version 8.0\n.target sm_90\n.visible .entry kernel_name(.param .u64 p)\n{\n ret;\n}\n";
    Diagnostics d;
    Module m = parse(text, d);
    printed = print(m);
    moved = std::move(m);
    text.assign(text.size(), '#');  // the source is gone; the tree must not care
  }
  EXPECT_EQ(print(moved), printed);
  EXPECT_EQ(std::get<Function>(moved.items.back().node).name, "kernel_name");
}

TEST(Parser, CollectsEveryErrorAndResynchronises) {
  Diagnostics d;
  parse(".version 8.0\n.target sm_90\n.entry k(){\n add.s32 %r1 %r2;\n mov.u32 %r1, ;\n ret;\n}\n", d);
  ASSERT_EQ(d.error_count(), 2u);
  EXPECT_EQ(d.list()[0].loc.line, 4u);
  EXPECT_EQ(d.list()[1].loc.line, 5u);
}

TEST(Parser, MissingSemicolonPointsAtThePreviousLine) {
  Diagnostics d;
  parse(".version 8.0\n.target sm_90\n.entry k(){\n ret\n exit;\n}\n", d);
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_EQ(d.list()[0].loc.line, 4u);
  EXPECT_EQ(d.list()[0].loc.col, 5u);
  ASSERT_TRUE(d.list()[0].fixit);
  EXPECT_EQ(d.list()[0].fixit->replacement, ";");
}

TEST(Parser, InstructionAtModuleLevelHasAHint) {
  Diagnostics d;
  parse("add.s32 %r1, %r2, %r3;", d);
  ASSERT_EQ(d.error_count(), 1u);
  EXPECT_NE(d.list()[0].hint.find("inside an .entry"), std::string::npos);
}

TEST(Parser, EmptyInputIsAnEmptyModule) {
  Diagnostics d;
  Module m = parse("", d);
  EXPECT_TRUE(d.empty());
  EXPECT_TRUE(m.items.empty());
}

TEST(Parser, DeepBracesAreRefusedWithoutCrashing) {
  std::string text = ".version 8.0\n.target sm_90\n.entry k()" + std::string(10000, '{') + std::string(10000, '}');
  Diagnostics d;
  parse(text, d);
  ASSERT_GE(d.error_count(), 1u);
  EXPECT_NE(d.list()[0].message.find("nested more than"), std::string::npos);
}

TEST(Parser, DeepExpressionsAreRefusedWithoutCrashing) {
  std::string text = ".version 8.0\n.target sm_90\n.entry k(){ add.s32 %r1, %r2, " + std::string(5000, '(') + "1" +
                     std::string(5000, ')') + "; ret; }";
  Diagnostics d;
  parse(text, d);
  ASSERT_GE(d.error_count(), 1u);
}

TEST(Parser, ManyErrorsStopWithANote) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "} }\n";
  Diagnostics d;
  parse(text, d);
  EXPECT_LE(d.list().size(), 502u);
  EXPECT_EQ(d.list().back().check_id, "too-many-errors");
}

}  // namespace
}  // namespace ptxforge::ptx
