// The rules about a file as a whole: empty and whitespace-only input, binary input and a
// UTF-8 byte-order mark are errors (ptxas rejects each), reported once and clearly.
#include <gtest/gtest.h>

#include "ptx/front_end.h"

namespace ptxforge::ptx {
namespace {

const std::string kModule = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";

TEST(FrontEnd, EmptyAndWhitespaceOnlyInputAreErrors) {
  for (std::string text : {"", "  \n\t\n", "\n"}) {
    auto r = check_source(text);
    ASSERT_EQ(r.diags.error_count(), 1u) << "'" << text << "'";
    EXPECT_EQ(r.diags.list()[0].check_id, "empty-input");
  }
}

TEST(FrontEnd, AByteOrderMarkIsOneErrorAndTheRestIsStillChecked) {
  auto r = check_source("\xef\xbb\xbf" + kModule);
  ASSERT_EQ(r.diags.list().size(), 1u);
  EXPECT_EQ(r.diags.list()[0].check_id, "byte-order-mark");
  EXPECT_EQ(r.diags.list()[0].loc.line, 1u);
  ASSERT_TRUE(r.diags.list()[0].fixit.has_value());
  EXPECT_EQ(r.diags.list()[0].fixit->length, 3u);
  // A real problem after the mark is still found, on the file's own line.
  auto bad = check_source("\xef\xbb\xbf" + kModule + ".visible .entry j() { mov.u32 %r1, 1; ret; }\n");
  bool undeclared = false;
  for (auto& d : bad.diags.list()) undeclared = undeclared || (d.check_id == "undeclared-reg" && d.loc.line == 5);
  EXPECT_TRUE(undeclared);
}

TEST(FrontEnd, BinaryInputIsOneDiagnostic) {
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 65536; ++i) {
    x = x * 1103515245 + 12345;
    garbage.push_back(static_cast<char>(x >> 16));
  }
  auto r = check_source(garbage);
  ASSERT_EQ(r.diags.list().size(), 1u);
  EXPECT_EQ(r.diags.list()[0].check_id, "binary-input");
  // A NUL byte anywhere: ptxas reads it as the end of the file.
  auto nul = check_source(kModule + std::string("\0", 1));
  ASSERT_EQ(nul.diags.list().size(), 1u);
  EXPECT_EQ(nul.diags.list()[0].check_id, "binary-input");
}

TEST(FrontEnd, ControlBytesInACommentAreAcceptedAsPtxasAcceptsThem) {
  std::string ctl = "// ";
  for (char c = 1; c < 0x1f; ++c)
    if (c != '\n' && c != '\t' && c != '\r' && c != '\f' && c != '\v') ctl.push_back(c);
  auto r = check_source(kModule + ctl + "\n");
  EXPECT_FALSE(r.diags.has_errors()) << (r.diags.list().empty() ? "" : r.diags.list()[0].message);
}

// A borrowed check views the caller's text; one with a byte-order mark parses a copy with the
// mark blanked, so its module never views the short-lived copy's memory after the call.
TEST(FrontEnd, BorrowedSourceIsViewedNotCopied) {
  std::string text = kModule + ".visible .entry j() { mov.u32 %r1, 1; ret; }\n";
  auto lent = check_borrowed_source(text);
  EXPECT_EQ(lent.module.source.data(), text.data());
  auto copied = check_source(text);
  EXPECT_NE(copied.module.source.data(), text.data());
  ASSERT_EQ(lent.diags.list().size(), copied.diags.list().size());
  for (size_t i = 0; i < lent.diags.list().size(); ++i)
    EXPECT_EQ(lent.diags.list()[i].message, copied.diags.list()[i].message);
  EXPECT_TRUE(lent.module == copied.module);

  std::string marked = "\xef\xbb\xbf" + text;
  auto r = check_borrowed_source(marked);
  EXPECT_NE(r.module.source.data(), marked.data());
  EXPECT_EQ(r.module.source.substr(0, 3), "   ");
  EXPECT_EQ(r.module.source.substr(3), text);
}

}  // namespace
}  // namespace ptxforge::ptx
