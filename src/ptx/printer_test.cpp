// The printer's contract, case by case: print(parse(x)) parses back to an equal tree and
// printing that tree again gives the same text. Each case here is one the round-trip fuzz
// target (fuzz/roundtrip_fuzz.cpp) found broken; its input is kept in fuzz/seeds too.
#include "ptx/printer.h"

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

}  // namespace
}  // namespace ptxforge::ptx
