// libFuzzer target for the whole front end: any bytes through the lexer, parser, validator,
// printer and header rewrites must produce diagnostics, never a crash, a hang or undefined
// behaviour. A module that checks clean must have the header ptxas insists on (.version and
// .target), print to text that parses back to an equal tree, and check clean again; retargeted,
// it must still print and parse back alike.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ptx/front_end.h"
#include "ptx/parser.h"
#include "ptx/printer.h"
#include "ptx/rewrite.h"

namespace {

// Says what broke, shows the printed text and what parsing it reported, and stops the run.
[[noreturn]] void fail(const char* what, const std::string& printed, const ptxforge::Diagnostics& diags = {}) {
  std::string found = ptxforge::render_text(diags, ptxforge::SourceText("printed.ptx", printed));
  std::fprintf(stderr, "check_fuzz: %s\n--- printed ---\n%s--- end ---\n%s", what, printed.c_str(), found.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxforge;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = ptx::check_source(text);
  if (r.diags.has_errors()) return 0;
  std::string printed = ptx::print(r.module);
  if (!r.module.version() || !r.module.target())
    fail("check calls a module without .version/.target ok", printed);
  Diagnostics d;
  auto again = ptx::parse(printed, d);
  if (d.has_errors() || !(again == r.module))
    fail("the printed module does not parse back to an equal tree", printed, d);
  if (auto r2 = ptx::check_source(printed); !r2.ok()) fail("the printed module does not check clean", printed, r2.diags);
  // A header rewrite that succeeds gives a module that prints and parses back like any other.
  ptx::HeaderChange c;
  c.add_header = true;
  c.target = "sm_90a";
  Diagnostics rd;
  if (!ptx::rewrite_header(again, c, rd)) return 0;
  std::string rewritten = ptx::print(again);
  Diagnostics d3;
  auto reparsed = ptx::parse(rewritten, d3);
  if (d3.has_errors() || !(reparsed == again) || ptx::print(reparsed) != rewritten)
    fail("the rewritten module does not print and parse back alike", rewritten, d3);
  return 0;
}
