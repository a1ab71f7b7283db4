// The include policy (cuda_includes.h). It reads the source the way the preprocessor finds
// directives, but errs towards seeing one: a line whose directive sits behind the end of a
// block comment is examined from there as well, and lines inside comments and `#if 0` blocks
// are examined too (a refused include in dead code is refused; deleting it is cheap, and a
// scanner that tries to know what is dead is a scanner that can be fooled about it).
#include "toolchain/cuda_includes.h"

#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <optional>

#include "util/paths.h"

namespace ptxforge::toolchain {

namespace fs = std::filesystem;

namespace {

constexpr size_t npos = std::string_view::npos;

// A line after line splicing (backslash-newline, and the trigraph ??/ before a newline).
struct LogicalLine {
  std::string text;
  uint32_t line = 1;       // its first physical line
  uint32_t physical = 1;   // how many physical lines it joins
};

std::vector<LogicalLine> logical_lines(std::string_view src) {
  std::vector<LogicalLine> out;
  LogicalLine cur;
  bool continuing = false;
  uint32_t line_no = 0;
  size_t pos = 0;
  while (pos <= src.size()) {
    size_t nl = src.find('\n', pos);
    std::string_view phys = src.substr(pos, nl == npos ? npos : nl - pos);
    ++line_no;
    if (!phys.empty() && phys.back() == '\r') phys.remove_suffix(1);
    if (!continuing) cur = LogicalLine{"", line_no, 1};
    else ++cur.physical;
    // Compilers accept blanks between the backslash and the newline (with a warning).
    std::string_view body = phys;
    while (!body.empty() && (body.back() == ' ' || body.back() == '\t')) body.remove_suffix(1);
    bool splice = false;
    if (!body.empty() && body.back() == '\\') {
      body.remove_suffix(1);
      splice = true;
    } else if (body.size() >= 3 && body.substr(body.size() - 3) == "?\?/") {
      body.remove_suffix(3);
      splice = true;
    }
    cur.text += splice ? body : phys;
    continuing = splice && nl != npos;
    if (!continuing) out.push_back(cur);
    if (nl == npos) break;
    pos = nl + 1;
  }
  return out;
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }

// Past blanks and complete /* */ comments; npos when a comment runs past the end of the line.
size_t skip_space(std::string_view s, size_t i) {
  for (;;) {
    while (i < s.size() && blank(s[i])) ++i;
    if (s.substr(i, 2) == "/*") {
      size_t e = s.find("*/", i + 2);
      if (e == npos) return npos;
      i = e + 2;
      continue;
    }
    return i;
  }
}

std::string lower(std::string_view s) {
  std::string l(s);
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l;
}

struct Finding {
  size_t col = 0;  // 0-based in the logical line
  std::string id, message, hint;
};

// The C and C++ standard headers a kernel plausibly names. Each resolves, by name, in the
// host compiler's own include folders (public files, the same on every machine of a
// distribution); names with a folder (bits/, sys/) are not on it, and neither is anything
// that only makes sense on the host (threads, files, locales).
const std::vector<std::string_view> kStandardHeaders = {
    // C, and their C++ spellings
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h", "stdarg.h", "stdbool.h",
    "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h",
    "cassert", "cctype", "cerrno", "cfloat", "cinttypes", "climits", "cmath", "cstdarg", "cstddef", "cstdint",
    "cstdio", "cstdlib", "cstring",
    // C++
    "algorithm", "array", "bit", "complex", "functional", "initializer_list", "limits", "new",
    "numeric", "tuple", "type_traits", "utility"};

// What a header name needs to be: a relative path of plain components.
std::optional<Finding> check_name(std::string_view name, const std::vector<std::string>& dirs) {
  std::string shown = fmt::format("<{}>", name);
  if (name.empty()) return Finding{0, "include-computed", "an empty #include <> is refused", ""};
  if (name.front() == '/')
    return Finding{0, "include-path", fmt::format("#include {} names an absolute path; only CUDA toolkit headers may be included", shown),
                   "a candidate is one file: write what it needs in it"};
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '+' || c == '/'))
      return Finding{0, "include-path", fmt::format("#include {} has a character a toolkit header name does not ('{}')", shown, c), ""};
  for (size_t b = 0; b <= name.size();) {
    size_t e = name.find('/', b);
    std::string_view part = name.substr(b, e == npos ? npos : e - b);
    if (part.empty() || part == "." || part == "..")
      return Finding{0, "include-path", fmt::format("#include {} leaves the toolkit's include folder ('{}' in the path)", shown,
                                                    part.empty() ? "//" : part),
                     "a candidate is one file: write what it needs in it"};
    if (e == npos) break;
    b = e + 1;
  }
  if (is_standard_header(name)) return std::nullopt;
  for (auto& d : dirs) {
    std::error_code ec;
    fs::path p = fs::path(d) / fs::path(name);
    if (!fs::is_regular_file(p, ec)) continue;
    // A symlink inside the toolkit that points out of it does not count as a toolkit header.
    std::string real = fs::canonical(p, ec).string(), root = fs::canonical(d, ec).string() + "/";
    if (!ec && real.compare(0, root.size(), root) == 0) return std::nullopt;
  }
  std::string hint =
      "a candidate includes CUDA toolkit headers, and C/C++ standard headers by name from a fixed list (<stdint.h>, <cmath>, "
      "<type_traits>, ...: docs/security.md); libcu++ has more as <cuda/std/...>";
  std::string looked;
  for (auto& d : dirs) looked += (looked.empty() ? "" : " and ") + d;
  return Finding{0, "include-missing",
                 fmt::format("{} is neither a header of the CUDA toolkit (looked in {}) nor a C/C++ standard header a candidate may "
                             "include",
                             shown, looked.empty() ? "no include folder: the toolkit was not found" : looked),
                 hint};
}

std::optional<Finding> check_include(std::string_view rest, const std::vector<std::string>& dirs) {
  size_t i = skip_space(rest, 0);
  if (i == npos || i >= rest.size()) return Finding{0, "include-computed", "#include without a header name", ""};
  if (rest[i] == '"')
    return Finding{i, "include-quoted",
                   "a quoted #include is refused: a candidate is one file, and only CUDA toolkit headers may be included, as #include <name>",
                   ""};
  if (rest[i] != '<')
    return Finding{i, "include-computed",
                   "a computed #include (a macro or anything but <name>) is refused: name a CUDA toolkit header as #include <name>", ""};
  size_t close = rest.find('>', i + 1);
  if (close == npos) return Finding{i, "include-computed", "#include < without its closing '>'", ""};
  size_t after = skip_space(rest, close + 1);
  if (after != npos && after < rest.size() && rest.substr(after, 2) != "//")
    return Finding{after, "include-computed", "text after the header name of an #include is refused", ""};
  if (auto f = check_name(rest.substr(i + 1, close - i - 1), dirs)) {
    f->col = i;
    return f;
  }
  return std::nullopt;
}

// The directive that starts at `at` in a logical line, when one does and is refused.
std::optional<Finding> check_directive(const LogicalLine& ll, size_t at, const std::vector<std::string>& dirs) {
  std::string_view s = ll.text;
  size_t p = skip_space(s, at);
  if (p == npos || p >= s.size()) return std::nullopt;
  size_t intro = 0;
  if (s[p] == '#') intro = 1;
  else if (s.substr(p, 2) == "%:") intro = 2;
  else if (s.substr(p, 3) == "?\?=") intro = 3;
  if (!intro) return std::nullopt;
  if (intro > 1)
    return Finding{p, "include-digraph",
                   fmt::format("a directive spelt '{}' (a {}) is refused: write '#'", s.substr(p, intro), intro == 2 ? "digraph" : "trigraph"),
                   ""};
  size_t q = skip_space(s, p + 1);
  if (q == npos || q >= s.size()) return std::nullopt;  // a null directive
  size_t e = q;
  while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) ++e;
  std::string_view name = s.substr(q, e - q);
  std::string_view rest = s.substr(e);
  if (e < s.size() && s[e] == '\\')
    return Finding{q, "include-directive", "a directive name spelt with an escape is refused", ""};
  if (name == "include" || name == "include_next" || name == "import" || name == "embed") {
    if (name != "include")
      return Finding{p, "include-directive",
                     fmt::format("#{} is refused: a candidate names CUDA toolkit headers with #include <name> only", name), ""};
    if (ll.physical > 1)
      return Finding{p, "include-continuation", "an #include split over lines with a backslash-newline is refused: write it on one line", ""};
    auto f = check_include(rest, dirs);
    if (f) f->col += e;
    return f;
  }
  // `#line N "file"` (and GNU's `# N "file"`) renames the file the compiler's messages name;
  // the filter that keeps only the candidate's messages (compiler_log.h) relies on those names.
  bool linemarker = !name.empty() && std::isdigit(static_cast<unsigned char>(name.front()));
  if ((name == "line" || linemarker) && s.find('"', q) != npos)
    return Finding{p, "include-line-file", "a #line directive with a file name is refused: it renames the file the compiler's messages point at", ""};
  if (name == "pragma") {
    std::string l = lower(rest);
    for (const char* w : {"include", "dependency", "embed"})
      if (l.find(w) != npos)
        return Finding{p, "include-pragma", fmt::format("a #pragma that mentions '{}' is refused: it may make the compiler open a file", w), ""};
  }
  return std::nullopt;
}

}  // namespace

bool is_standard_header(std::string_view name) {
  for (auto h : kStandardHeaders)
    if (h == name) return true;
  return false;
}

const std::vector<std::string_view>& standard_headers() { return kStandardHeaders; }

std::vector<std::string> toolkit_include_dirs() {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const char* sub : {"/include", "/include/cccl"}) {
    std::string d = cuda_home() + sub;
    if (fs::is_directory(d, ec)) dirs.push_back(d);
  }
  return dirs;
}

Diagnostics check_cuda_includes(std::string_view source, const std::vector<std::string>& include_dirs) {
  Diagnostics diags;
  for (const LogicalLine& ll : logical_lines(source)) {
    std::optional<Finding> f;
    // Where a directive could start: the line's start, or the end of a comment that began on
    // an earlier line (`*/ #include "x"` is a directive when the comment held a newline).
    std::vector<size_t> starts = {0};
    for (size_t at = ll.text.find("*/"); at != npos; at = ll.text.find("*/", at + 2)) starts.push_back(at + 2);
    for (size_t at : starts)
      if ((f = check_directive(ll, at, include_dirs))) break;
    std::string l = lower(ll.text);
    if (!f && l.find("has_include") != npos)
      f = Finding{l.find("has_include"), "include-has-include",
                  "__has_include is refused: it asks whether a file exists; a candidate includes CUDA toolkit headers only", ""};
    if (!f)
      if (size_t at = ll.text.find("_Pragma"); at != npos)
        for (const char* w : {"include", "dependency", "embed"})
          if (l.find(w, at) != npos) {
            f = Finding{at, "include-pragma", fmt::format("a _Pragma that mentions '{}' is refused: it may make the compiler open a file", w), ""};
            break;
          }
    if (!f) continue;
    auto& d = diags.error(SourceLoc{ll.line, static_cast<uint32_t>(f->col + 1)}, f->message, f->id);
    d.hint = f->hint;
  }
  return diags;
}

}  // namespace ptxforge::toolchain
