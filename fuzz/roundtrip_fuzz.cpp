// libFuzzer target for the printer: every input the parser accepts without errors, valid PTX
// or not, must print to text that parses back without errors to an equal tree with the same
// comments in the same order, and printing that tree again must give the same text. `fmt`
// relies on this for whatever a model writes; the corpus test only covers what nvcc writes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ptx/parser.h"
#include "ptx/printer.h"

namespace {

// Says what broke, shows the input, the printed text and what parsing it reported, and stops
// the run. The input goes first, escaped, so that a CI log's tail is enough to reproduce it.
[[noreturn]] void fail(const char* what, std::string_view input, const std::string& printed,
                       const ptxforge::Diagnostics& diags = {}) {
  std::string escaped;
  for (unsigned char c : input) {
    if (c == '\\') escaped += "\\\\";
    else if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) escaped += static_cast<char>(c);
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      escaped += buf;
    }
  }
  std::string found = ptxforge::render_text(diags, ptxforge::SourceText("printed.ptx", printed));
  std::fprintf(stderr, "roundtrip_fuzz: %s\n--- input (\\xNN: a byte, \\\\: a backslash) ---\n%s\n--- printed ---\n%s--- end ---\n%s",
               what, escaped.c_str(), printed.c_str(), found.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxforge;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Diagnostics d;
  ptx::Module m = ptx::parse(text, d);
  if (d.has_errors()) return 0;
  std::string printed = ptx::print(m);
  Diagnostics d2;
  ptx::Module again = ptx::parse(printed, d2);
  if (d2.has_errors()) fail("the printed module does not parse", text, printed, d2);
  if (!(again == m))
    fail("the printed module parses to a different tree", text, printed + "--- printed again ---\n" + ptx::print(again));
  if (ptx::print(again) != printed) fail("printing the reparsed module gives different text", text, printed + "--- printed again ---\n" + ptx::print(again));
  bool same_comments = again.comments.size() == m.comments.size();
  for (size_t i = 0; same_comments && i < m.comments.size(); ++i)
    same_comments = again.comments[i].text == m.comments[i].text;
  if (!same_comments) fail("the printed module's comments differ from the input's", text, printed);
  return 0;
}
