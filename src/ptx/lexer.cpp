#include "ptx/lexer.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>

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
  if (src_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = line_start_ = 3;
}

void Lexer::advance_to(size_t pos) {
  pos = std::min(pos, src_.size());
  while (const void* nl = std::memchr(src_.data() + pos_, '\n', pos - pos_)) {
    ++line_;
    pos_ = line_start_ = static_cast<size_t>(static_cast<const char*>(nl) - src_.data()) + 1;
  }
  pos_ = pos;
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
    pos_ += line.size();
    return true;
  }
  if (line[0] == '#') {
    report(loc, len, "preprocessor directive in PTX", "preprocessor",
           "ptxas runs no preprocessor: expand #define/#include/#if before assembling");
    pos_ += line.size();
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
  pos_ += line.size();
  return true;
}

namespace {
// What a byte means to the whitespace skipper: most token starts are `token` and end the skip
// at once; `special` bytes may begin a comment or a line of non-PTX text.
enum SkipClass : uint8_t { kToken, kBlank, kNewline, kSpecial, kAlpha };
struct SkipTable {
  SkipClass v[256] = {};
  constexpr SkipTable() {
    v[int(' ')] = v[int('\t')] = v[int('\r')] = v[int('\f')] = v[int('\v')] = kBlank;
    v[int('\n')] = kNewline;
    v[int('/')] = v[int('`')] = v[int('~')] = v[int('#')] = kSpecial;
    for (int c = 'a'; c <= 'z'; ++c) v[c] = kAlpha;
    for (int c = 'A'; c <= 'Z'; ++c) v[c] = kAlpha;
  }
};
constexpr SkipTable kSkip{};

// A number running into letters. C's float suffix (1.0f) is the common case in model output.
std::string malformed_number_hint(std::string_view text, std::string_view number) {
  std::string_view rest = text.substr(number.size());
  bool looks_float = number.find_first_of(".eE") != std::string_view::npos;
  if ((rest == "f" || rest == "F") && looks_float && number.size() < 64) {
    float v = std::strtof(std::string(number).c_str(), nullptr);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return fmt::format("PTX float literals take no 'f' suffix: write {} (or its .f32 bit pattern 0f{:08X})", number,
                       bits);
  }
  if (rest == "f" || rest == "F" || rest == "ll" || rest == "LL" || rest == "l" || rest == "L" || rest == "ul" ||
      rest == "UL" || rest == "ull" || rest == "ULL")
    return fmt::format("PTX numbers take no C suffix '{}': write {}", rest, number);
  return "identifiers cannot start with a digit";
}
}  // namespace

// Called with pos_ still at the comment, or (for a block comment) after it on a later line:
// own_line is decided from the bytes before `start`.
void Lexer::record_comment(size_t start, size_t end, SourceLoc loc) {
  size_t i = start;
  while (i > 0 && (src_[i - 1] == ' ' || src_[i - 1] == '\t' || src_[i - 1] == '\r' || src_[i - 1] == '\f' ||
                   src_[i - 1] == '\v'))
    --i;
  bool own_line = i == 0 || src_[i - 1] == '\n';
  comments_->push_back(Comment{src_.substr(start, end - start), loc, own_line});
}

// At a '/', '`', '~', '#' or a letter in column 1: skips a comment or a non-PTX line and
// returns true, or returns false at the start of a token.
bool Lexer::skip_comment_or_text() {
  const char* s = src_.data();
  const size_t n = src_.size();
  char c = s[pos_];
  if (c == '/' && at(pos_ + 1) == '/') {
    const void* nl = std::memchr(s + pos_, '\n', n - pos_);
    size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - s) : n;
    if (comments_) {
      size_t text_end = end;  // a CRLF file's '\r' (any run of them) is not part of the comment
      while (text_end > pos_ + 2 && s[text_end - 1] == '\r') --text_end;
      record_comment(pos_, text_end, here());
    }
    pos_ = end;
    return true;
  }
  if (c == '/' && at(pos_ + 1) == '*') {
    SourceLoc loc = here();
    size_t start = pos_;
    size_t end = src_.find("*/", pos_ + 2);
    if (end == std::string_view::npos) {
      report(loc, 2, "unterminated /* comment", "unterminated-comment", "close it with */");
      advance_to(n);
    } else {
      advance_to(end + 2);
      if (comments_) record_comment(start, end + 2, loc);
    }
    return true;
  }
  if (c == '/' || data_lines_ || !at_line_start()) return false;
  return skip_text_line_if_not_ptx();
}

Token Lexer::lex_number(size_t start, SourceLoc loc) {
  // The common case first: decimal digits ending at a character that cannot continue a number.
  size_t e = start + 1;
  while (e < src_.size() && is_digit(src_[e])) ++e;
  char after = at(e);
  if (!is_ident_char(after) && after != '.') {
    pos_ = e;
    return make(Tok::integer, start, loc);
  }
  auto peek = [&](size_t k) { return at(pos_ + k); };
  auto bump = [&](size_t k) { pos_ += k; };
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
    std::string_view text = src_.substr(start, pos_ - start);
    report(loc, static_cast<uint32_t>(pos_ - start), fmt::format("malformed number '{}'", text), "bad-literal",
           malformed_number_hint(text, t.text));
    return make(Tok::bad, start, loc);
  }
  return t;
}

namespace {
// Byte classes of a plain line (see take_plain_lines).
enum PlainClass : uint8_t { kNotPlain, kPlainBlank, kPlainDigit, kPlainWord, kPlainSigil, kPlainPunct, kPlainEnd };
struct PlainTable {
  PlainClass v[256] = {};
  constexpr PlainTable() {
    v[int(' ')] = v[int('\t')] = v[int('\r')] = kPlainBlank;
    for (int c = '0'; c <= '9'; ++c) v[c] = kPlainDigit;
    for (int c = 'a'; c <= 'z'; ++c) v[c] = kPlainWord;
    for (int c = 'A'; c <= 'Z'; ++c) v[c] = kPlainWord;
    v[int('_')] = kPlainWord;
    v[int('.')] = v[int('%')] = v[int('$')] = kPlainSigil;  // must be followed by a name character
    v[int(',')] = v[int(':')] = v[int('+')] = v[int('-')] = kPlainPunct;
    v[int('\n')] = kPlainEnd;
  }
};
constexpr PlainTable kPlain{};
}  // namespace

namespace {
// How a token starts, for the common cases; the rest are sorted out one by one in next().
enum StartClass : uint8_t { kStartOther, kStartWord, kStartSigil, kStartDot, kStartDigit, kStartPunct };
struct StartTable {
  StartClass v[256] = {};
  constexpr StartTable() {
    for (int c = 'a'; c <= 'z'; ++c) v[c] = kStartWord;
    for (int c = 'A'; c <= 'Z'; ++c) v[c] = kStartWord;
    v[int('_')] = kStartWord;
    v[int('%')] = v[int('$')] = kStartSigil;
    v[int('.')] = kStartDot;
    for (int c = '0'; c <= '9'; ++c) v[c] = kStartDigit;
    // Punctuation that never begins a two-character operator.
    for (char c : {',', ';', ':', '{', '}', '[', ']', '(', ')', '+', '-', '*', '/', '~', '^', '?'})
      v[static_cast<unsigned char>(c)] = kStartPunct;
  }
};
constexpr StartTable kStart{};
}  // namespace

const char* Lexer::take_plain_lines(const char* from) {
  const char* s = src_.data();
  const size_t n = src_.size();
  size_t p = static_cast<size_t>(from - s);
  assert(p >= line_start_ && p <= pos_ && pos_ <= n);
  const char* taken = nullptr;
  while (true) {
    size_t first = p, last_end = p;
    // One line: every token must be one the lexer would accept without a word.
    while (true) {
      if (p >= n) break;
      PlainClass k = kPlain.v[static_cast<unsigned char>(s[p])];
      if (k == kPlainBlank) {
        ++p;
        continue;
      }
      if (k == kPlainEnd) break;
      if (k == kPlainDigit) {
        do ++p;
        while (p < n && is_digit(s[p]));
        if (p < n && (is_ident_char(s[p]) || s[p] == '.')) return taken;  // hex, floats, suffixes
      } else if (k == kPlainWord || (k == kPlainSigil && p + 1 < n && is_ident_char(s[p + 1]))) {
        ++p;
        while (p < n && is_ident_char(s[p])) ++p;
      } else if (k == kPlainPunct) {
        ++p;
      } else {
        return taken;  // comments, strings, braces, stray bytes: token by token
      }
      last_end = p;
    }
    if (last_end == first) return taken;  // an empty line
    taken = s + last_end;
    pos_ = last_end;
    if (p >= n) return taken;
    // The next line: its first token must begin where the lexer would begin it.
    ++line_;
    pos_ = line_start_ = ++p;
    while (p < n && (s[p] == ' ' || s[p] == '\t' || s[p] == '\r')) ++p;  // the line's text starts at its first token
    if (p < n && (is_alpha(s[p]) && p == line_start_)) return taken;  // maybe prose: the lexer decides
  }
}

Token Lexer::next() {
  const char* s = src_.data();
  const size_t n = src_.size();
  // Whitespace is skipped here, in line; comments and possible non-PTX lines out of line.
  while (pos_ < n) {
    SkipClass k = kSkip.v[static_cast<unsigned char>(s[pos_])];
    if (k == kBlank) {
      ++pos_;
    } else if (k == kNewline) {
      ++line_;
      line_start_ = ++pos_;
    } else if (k == kToken || (k == kAlpha && pos_ != line_start_) || !skip_comment_or_text()) {
      // Prose is looked for only in lines that start at column 1, as a reply's text does;
      // indented lines are code, and skipping them keeps the lexer fast.
      break;
    }
  }
  SourceLoc loc = here();
  size_t start = pos_;
  if (pos_ >= n) return Token{Tok::eof, 0, {}, loc};
  char c = s[pos_];
  auto peek = [&](size_t k) { return pos_ + k < n ? s[pos_ + k] : '\0'; };

  switch (kStart.v[static_cast<unsigned char>(c)]) {
    case kStartSigil:  // %r1, $L__BB0_1; a lone '%' is the operator, a lone '$' is not PTX
      if (!is_ident_char(peek(1))) break;
      [[fallthrough]];
    case kStartWord: {  // add, _Z3fooPf, and the sink "_"
      size_t e = pos_ + 1;
      while (e < n && is_ident_char(s[e])) ++e;
      pos_ = e;
      return make(Tok::ident, start, loc);
    }
    case kStartPunct: {
      ++pos_;
      Token t = make(Tok::punct, start, loc);
      t.punct = c;
      return t;
    }
    case kStartDot: {  // .reg, .shared::cta, .L2::cache_hint
      if (!is_ident_char(peek(1))) break;
      size_t e = pos_ + 1;
      while (e < n) {
        if (is_ident_char(s[e])) {
          ++e;
        } else if (s[e] == ':' && e + 2 < n && s[e + 1] == ':' && is_ident_char(s[e + 2])) {
          e += 2;
        } else {
          break;
        }
      }
      pos_ = e;
      return make(Tok::directive, start, loc);
    }
    case kStartDigit: return lex_number(start, loc);
    default: break;
  }
  if (c == '"') {
    ++pos_;
    while (pos_ < src_.size() && src_[pos_] != '"' && src_[pos_] != '\n') {
      if (src_[pos_] == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] != '\n') ++pos_;
      ++pos_;
    }
    if (pos_ >= src_.size() || src_[pos_] != '"') {
      report(loc, 1, "unterminated string literal", "unterminated-string", "close it with \" on the same line");
      return make(Tok::bad, start, loc);
    }
    ++pos_;
    return make(Tok::string, start, loc);
  }
  if (c == '@' && peek(1) == '@') {  // @@DWARF lines in old debug sections
    size_t end = src_.find('\n', pos_);
    pos_ = end == std::string_view::npos ? src_.size() : end;
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
    pos_ += 2;
    Token t = make(Tok::punct, start, loc);
    t.punct = two;
    return t;
  }
  switch (c) {
    case ',': case ';': case ':': case '{': case '}': case '[': case ']': case '(': case ')': case '<': case '>':
    case '+': case '-': case '*': case '/': case '%': case '!': case '~': case '&': case '|': case '^': case '=':
    case '?': case '@': {
      ++pos_;
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
    ++pos_;
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
