#include "ptx/front_end.h"

#include <optional>

#include <fmt/format.h>

#include "ptx/parser.h"

namespace ptxforge::ptx {

namespace {

constexpr std::string_view kBom = "\xef\xbb\xbf";

bool only_whitespace(std::string_view text) {
  for (char c : text)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') return false;
  return true;
}

// Binary input (a cubin, an object file, random bytes) would give one finding per line, each
// echoing unreadable bytes; one finding says all there is to say. ptxas rejects a NUL byte
// anywhere (it reads it as the end of the file), so a NUL alone makes the input binary. Other
// control bytes are accepted in comments, so they count only when the input has errors
// anyway: then over 1% of them in the first 4 KiB means the errors come from binary data.
std::optional<size_t> nul_offset(std::string_view text) {
  size_t nul = text.find('\0');
  return nul == std::string_view::npos ? std::nullopt : std::optional<size_t>(nul);
}

std::optional<size_t> control_bytes_offset(std::string_view text) {
  std::string_view head = text.substr(0, 4096);
  size_t control = 0, first = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(head[i]);
    if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r' && c != '\f' && c != '\v') || c == 0x7f) {
      if (control++ == 0) first = i;
    }
  }
  if (control >= 4 && control * 100 > head.size()) return first;
  return std::nullopt;
}

void report_binary(std::string_view text, size_t at, Diagnostics& diags) {
  diags = Diagnostics{};
  auto& d = diags.error({}, fmt::format("the input is not text (byte 0x{:02x} at offset {})",
                                        static_cast<unsigned char>(text[at]), at),
                        "binary-input");
  d.hint = "PTX is plain ASCII text; was a cubin or an object file given instead?";
}

// The rules about the file as a whole, before any token: empty, NUL bytes, a byte-order mark.
// Returns false when there is nothing worth parsing.
bool check_input(std::string_view text, Diagnostics& diags) {
  if (only_whitespace(text)) {
    auto& d = diags.error({}, text.empty() ? "the input is empty" : "the input holds only whitespace", "empty-input");
    d.hint = "a PTX module starts with '.version', '.target' and '.address_size' (ptxas rejects an empty file)";
    return false;
  }
  if (auto at = nul_offset(text)) {
    report_binary(text, *at, diags);
    return false;
  }
  if (text.substr(0, 3) == kBom) {
    auto& d = diags.error({1, 1}, "the input starts with a UTF-8 byte-order mark, which ptxas rejects", "byte-order-mark");
    d.length = 1;
    d.hint = "save the file as plain ASCII, without a byte-order mark";
    d.fixit = FixIt{{1, 1}, 3, ""};
  }
  return true;
}

CheckResult check(std::string_view text, const ValidateOptions& opts, bool borrow) {
  CheckResult r;
  if (!check_input(text, r.diags)) return r;
  // A byte-order mark is reported once above; the rest of the module is still worth checking,
  // so the mark is read as spaces (lines and columns stay the file's own) in a copy.
  std::string without_bom;
  ParseOptions popts;
  popts.borrow_text = borrow;
  if (text.substr(0, 3) == kBom) {
    without_bom = "   " + std::string(text.substr(3));
    text = without_bom;
    popts.borrow_text = false;
  }
  r.module = parse(text, r.diags, popts);
  // Fences and prose lines were skipped by the lexer, so the PTX around them is still worth
  // checking; after a real syntax error the tree is partial and checks would only add noise.
  bool syntax_errors = false;
  for (auto& d : r.diags.list())
    if (d.severity == Severity::error && d.check_id != "markdown-fence" && d.check_id != "prose-in-ptx" &&
        d.check_id != "preprocessor" && d.check_id != "byte-order-mark")
      syntax_errors = true;
  if (!syntax_errors) validate(r.module, r.diags, opts);
  if (r.diags.has_errors())
    if (auto at = control_bytes_offset(text)) report_binary(text, *at, r.diags);
  r.diags.sort_by_location();
  r.diags.cap(200);
  return r;
}
}  // namespace

CheckResult check_source(std::string_view text, const ValidateOptions& opts) { return check(text, opts, false); }

CheckResult check_borrowed_source(std::string_view text, const ValidateOptions& opts) {
  return check(text, opts, true);
}

}  // namespace ptxforge::ptx
