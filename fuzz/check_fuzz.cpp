// libFuzzer target: any bytes through the lexer, parser, validator, printer and header
// rewrites must produce diagnostics, never a crash, a hang or undefined behaviour; a module
// that checks clean must print to text that parses back to an equal tree.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ptx/front_end.h"
#include "ptx/parser.h"
#include "ptx/printer.h"
#include "ptx/rewrite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = ptxforge::ptx::check_source(text);
  if (r.diags.has_errors()) return 0;
  std::string printed = ptxforge::ptx::print(r.module);
  ptxforge::Diagnostics d;
  auto again = ptxforge::ptx::parse(printed, d);
  if (d.has_errors() || !(again == r.module)) std::abort();
  ptxforge::ptx::HeaderChange c;
  c.add_header = true;
  ptxforge::Diagnostics rd;
  (void)ptxforge::ptx::rewrite_header(again, c, rd);
  return 0;
}
