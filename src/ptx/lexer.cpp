#include "ptx/lexer.h"

#include <fmt/format.h>

namespace ptxforge::ptx {

namespace {
constexpr size_t kMaxLexerReports = 200;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
}  // namespace

Lexer::Lexer(std::string_view text, Diagnostics& diags) : src_(text), diags_(diags) {
  // A UTF-8 byte order mark is harmless; skip it rather than call it garbage.
  if (src_.substr(0, 3) == "\xEF\xBB\xBF") advance(3), col_ = 1;
}

void Lexer::bump(size_t n) {
  pos_ += n;
  col_ += static_cast<uint32_t>(n);
}

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < src_.size(); ++i, ++pos_) {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
  }
}

void Lexer::report(SourceLoc loc, uint32_t len, std::string msg, std::string id, std::string hint) {
  if (reported_++ >= kMaxLexerReports) return;
  auto& d = diags_.error(loc, std::move(msg), std::move(id));
  d.length = len;
  d.hint = std::move(hint);
}

bool Lexer::at_line_start() const {
  for (size_t i = pos_; i > 0; --i) {
    char c = src_[i - 1];
    if (c == '\n') return true;
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

// Models wrap PTX in ```ptx fences and explain it in prose. ptxas rejects both with an
// unhelpful "syntax error"; we say what they are and skip the line.
bool Lexer::skip_text_line_if_not_ptx() {
  size_t end = src_.find('\n', pos_);
  if (end == std::string_view::npos) end = src_.size();
  std::string_view line = src_.substr(pos_, end - pos_);
  SourceLoc loc = here();
  uint32_t len = static_cast<uint32_t>(line.size());
  if (line.substr(0, 3) == "```" || line.substr(0, 3) == "~~~") {
    report(loc, len, "Markdown code fence left in the PTX", "markdown-fence",
           "remove the ``` lines; the file must contain only PTX");
    advance(line.size());
    return true;
  }
  if (line[0] == '#') {
    report(loc, len, "preprocessor directive in PTX", "preprocessor",
           "ptxas runs no preprocessor: expand #define/#include/#if before assembling");
    advance(line.size());
    return true;
  }
  // Prose: three or more plain words, no PTX punctuation at all.
  if (!is_alpha(line[0])) return false;
  int words = 0;
  bool in_word = false;
  for (char c : line) {
    if (c == ';' || c == '{' || c == '}' || c == '%' || c == '[' || c == '@' || c == '"' || c == '=' || c == '<' ||
        c == '/' || c == '_' || c == '$')
      return false;
    bool word_char = is_alpha(c) || c == '\'' || c == '-' || c == '(' || c == ')' || c == ',' || c == '.' ||
                     c == '!' || c == '?' || c == ':' || is_digit(c);
    if (c == ' ' || c == '\t' || c == '\r') {
      in_word = false;
    } else if (!word_char) {
      return false;
    } else if (!in_word) {
      in_word = true;
      ++words;
    }
  }
  if (words < 3) return false;
  // A label followed by an instruction on one line ("done: ret") has a colon in the first word.
  size_t first_space = line.find_first_of(" \t");
  if (line.substr(0, first_space).find_first_of(":.") != std::string_view::npos) return false;
  report(loc, len, "prose left in the PTX", "prose-in-ptx",
         "remove the explanation, or make it a // comment");
  advance(line.size());
  return true;
}

void Lexer::skip_space_and_comments() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == '\n') {
      ++pos_;
      ++line_;
      col_ = 1;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      bump(1);
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
      size_t end = src_.find('\n', pos_);
      advance((end == std::string_view::npos ? src_.size() : end) - pos_);
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '*') {
      SourceLoc loc = here();
      size_t end = src_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) {
        report(loc, 2, "unterminated /* comment", "unterminated-comment", "close it with */");
        advance(src_.size() - pos_);
      } else {
        advance(end + 2 - pos_);
      }
    } else if ((c == '`' || c == '~' || c == '#' || (is_alpha(c) && col_ == 1)) && at_line_start()) {
      // Prose is looked for only in lines that start at column 1, as a reply's text does;
      // indented lines are code, and skipping them keeps the lexer fast.
      if (!skip_text_line_if_not_ptx()) return;
    } else {
      return;
    }
  }
}

Token Lexer::make(Tok kind, size_t start, SourceLoc loc) {
  return Token{kind, 0, src_.substr(start, pos_ - start), loc};
}

Token Lexer::lex_number(size_t start, SourceLoc loc) {
  auto peek = [&](size_t k) { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; };
  if (peek(0) == '0' && (peek(1) == 'f' || peek(1) == 'F' || peek(1) == 'd' || peek(1) == 'D') && is_hex(peek(2))) {
    size_t want = (peek(1) == 'f' || peek(1) == 'F') ? 8 : 16;
    bump(2);
    size_t n = 0;
    while (is_hex(peek(0))) bump(1), ++n;
    Token t = make(Tok::floating, start, loc);
    if (n != want) {
      report(loc, static_cast<uint32_t>(t.text.size()),
             fmt::format("hexadecimal float '{}' must have exactly {} hex digits", t.text, want), "bad-literal",
             want == 8 ? "0f literals are 32-bit IEEE bit patterns, e.g. 0f3F800000 for 1.0"
                       : "0d literals are 64-bit IEEE bit patterns, e.g. 0d3FF0000000000000 for 1.0");
    }
    return t;
  }
  if (peek(0) == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
    bump(2);
    while (is_hex(peek(0))) bump(1);
    if (peek(0) == 'U' || peek(0) == 'u') bump(1);
    return make(Tok::integer, start, loc);
  }
  if (peek(0) == '0' && (peek(1) == 'b' || peek(1) == 'B') && (peek(2) == '0' || peek(2) == '1')) {
    bump(2);
    while (peek(0) == '0' || peek(0) == '1') bump(1);
    if (peek(0) == 'U' || peek(0) == 'u') bump(1);
    return make(Tok::integer, start, loc);
  }
  while (is_digit(peek(0))) bump(1);
  bool is_float = false;
  if (peek(0) == '.' && is_digit(peek(1))) {
    is_float = true;
    bump(1);
    while (is_digit(peek(0))) bump(1);
  } else if (peek(0) == '.' && !is_ident_char(peek(1))) {
    is_float = true;  // "1." is a float
    bump(1);
  }
  if ((peek(0) == 'e' || peek(0) == 'E') &&
      (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
    is_float = true;
    bump(2);
    while (is_digit(peek(0))) bump(1);
  }
  if (!is_float && (peek(0) == 'U' || peek(0) == 'u')) bump(1);
  Token t = make(is_float ? Tok::floating : Tok::integer, start, loc);
  if (is_ident_char(peek(0))) {
    while (pos_ < src_.size() && is_ident_char(src_[pos_])) bump(1);
    report(loc, static_cast<uint32_t>(pos_ - start),
           fmt::format("malformed number '{}'", src_.substr(start, pos_ - start)), "bad-literal",
           "identifiers cannot start with a digit");
    return make(Tok::bad, start, loc);
  }
  return t;
}

Token Lexer::next() {
  skip_space_and_comments();
  SourceLoc loc = here();
  size_t start = pos_;
  if (pos_ >= src_.size()) return Token{Tok::eof, 0, {}, loc};
  char c = src_[pos_];
  auto peek = [&](size_t k) { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; };

  if (is_alpha(c) || ((c == '_' || c == '$' || c == '%') && is_ident_char(peek(1)))) {
    size_t e = pos_ + 1;
    while (e < src_.size() && is_ident_char(src_[e])) ++e;
    bump(e - pos_);
    return make(Tok::ident, start, loc);
  }
  if (c == '_') {  // the sink operand "_"
    bump(1);
    return make(Tok::ident, start, loc);
  }
  if (c == '.' && (is_ident_char(peek(1)))) {
    size_t e = pos_ + 1;
    while (e < src_.size()) {
      if (is_ident_char(src_[e])) {
        ++e;
      } else if (src_[e] == ':' && e + 2 < src_.size() && src_[e + 1] == ':' && is_ident_char(src_[e + 2])) {
        e += 2;  // .shared::cta, .L2::cache_hint
      } else {
        break;
      }
    }
    bump(e - pos_);
    return make(Tok::directive, start, loc);
  }
  if (is_digit(c)) return lex_number(start, loc);
  if (c == '"') {
    advance(1);
    while (pos_ < src_.size() && src_[pos_] != '"' && src_[pos_] != '\n') {
      if (src_[pos_] == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] != '\n') advance(1);
      advance(1);
    }
    if (pos_ >= src_.size() || src_[pos_] != '"') {
      report(loc, 1, "unterminated string literal", "unterminated-string", "close it with \" on the same line");
      return make(Tok::bad, start, loc);
    }
    advance(1);
    return make(Tok::string, start, loc);
  }
  if (c == '@' && peek(1) == '@') {  // @@DWARF lines in old debug sections
    size_t end = src_.find('\n', pos_);
    advance((end == std::string_view::npos ? src_.size() : end) - pos_);
    return make(Tok::raw, start, loc);
  }
  char two = 0;
  switch (c) {
    case '<': two = peek(1) == '<' ? kShl : peek(1) == '=' ? kLe : 0; break;
    case '>': two = peek(1) == '>' ? kShr : peek(1) == '=' ? kGe : 0; break;
    case '&': two = peek(1) == '&' ? kAndAnd : 0; break;
    case '|': two = peek(1) == '|' ? kOrOr : 0; break;
    case '=': two = peek(1) == '=' ? kEq : 0; break;
    case '!': two = peek(1) == '=' ? kNe : 0; break;
    default: break;
  }
  if (two) {
    bump(2);
    Token t = make(Tok::punct, start, loc);
    t.punct = two;
    return t;
  }
  switch (c) {
    case ',': case ';': case ':': case '{': case '}': case '[': case ']': case '(': case ')': case '<': case '>':
    case '+': case '-': case '*': case '/': case '%': case '!': case '~': case '&': case '|': case '^': case '=':
    case '?': case '@': {
      bump(1);
      Token t = make(Tok::punct, start, loc);
      t.punct = c;
      return t;
    }
    default: break;
  }
  // Anything else: a run of bytes that cannot start a token. One diagnostic per line.
  while (pos_ < src_.size()) {
    char b = src_[pos_];
    if (b == '\n' || b == ' ' || b == '\t' || b == ';') break;
    unsigned char u = static_cast<unsigned char>(b);
    bool could_start = u < 0x80 && (is_ident_char(b) || std::string_view(",;:{}[]()<>+-*/%!~&|^=?@.\"").find(b) !=
                                                            std::string_view::npos);
    if (could_start && pos_ > start) break;
    advance(1);
  }
  if (loc.line != last_reported_line_) {
    last_reported_line_ = loc.line;
    unsigned char first = static_cast<unsigned char>(c);
    std::string what = first >= 0x80 ? "non-ASCII bytes" : first < 0x20 || first == 0x7f ? "control characters"
                                                                                         : fmt::format("character '{}'", c);
    report(loc, static_cast<uint32_t>(pos_ - start), fmt::format("unexpected {} in PTX source", what), "bad-char",
           first >= 0x80 ? "PTX is plain ASCII; non-ASCII text may only appear inside comments" : "");
  }
  return make(Tok::bad, start, loc);
}

}  // namespace ptxforge::ptx
