// The PTX lexer: turns source text into tokens on demand (a 100 MB module never becomes a
// token vector). Text-level mistakes that models make — Markdown fences and prose left in the
// file, stray non-ASCII bytes, unterminated strings and comments — are reported here, once per
// line, and the offending text is skipped so the parser sees the PTX around it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ptx/ast.h"
#include "util/diagnostic.h"

namespace ptxforge::ptx {

enum class Tok : uint8_t {
  eof,
  ident,      // add, %r1, $L__BB0_1, _Z3fooPf, %tid
  directive,  // .reg, .global, .u32, .shared::cta (also every opcode modifier)
  integer,    // 42, 0x2A, 052, 0b101, 42U
  floating,   // 1.5, 1e-3, 0f3F800000, 0d3FF0000000000000
  string,     // "text" (quotes included)
  punct,      // , ; : { } [ ] ( ) < > + - * / % ! ~ & | ^ = ? @ << >> && || == != <= >=
  raw,        // an @@DWARF line, kept verbatim
  bad,        // a byte sequence that is not PTX (already reported)
};

// Punctuation codes for the two-character operators (single characters stand for themselves).
enum PunctCode : char { kShl = 'L', kShr = 'R', kAndAnd = 'A', kOrOr = 'O', kEq = 'E', kNe = 'N', kLe = 'l', kGe = 'g' };

struct Token {
  Tok kind = Tok::eof;
  char punct = 0;  // for Tok::punct: the character, or a PunctCode for two-character operators
  std::string_view text;
  SourceLoc loc;
  bool is(char c) const { return kind == Tok::punct && punct == c; }
  bool is(std::string_view p) const { return kind == Tok::punct && text == p; }
  bool is_dir(std::string_view d) const { return kind == Tok::directive && text == d; }
};

class Lexer {
 public:
  Lexer(std::string_view text, Diagnostics& diags);
  Token next();
  // Comments are skipped like blanks; given a list, the lexer also appends each one to it, in
  // source order (their texts are views into the text being lexed).
  void record_comments(std::vector<Comment>* out) { comments_ = out; }

  // For bodies kept as text (.section): from `from`, the start of the token just lexed,
  // takes whole lines that hold only names, decimal numbers, ',', ':', '+' and '-' (a debug
  // section's ".b8 1,2,3"). Stops before the first other line (a '}', a comment, anything the
  // lexer must look at), so next() goes on from there. Returns the end of the last token of
  // the last line taken, or nullptr when no line was.
  const char* take_plain_lines(const char* from);
  // Inside a .section body every line is data: a line that starts with ~~~, # or three plain
  // words is not taken for a Markdown fence, a preprocessor line or prose there. (The printer
  // starts each body line on a line of its own, so without this a body that ptxforge accepted
  // could print as one it rejects.)
  void set_data_lines(bool on) { data_lines_ = on; }

 private:
  [[gnu::noinline]] bool skip_comment_or_text();
  bool at_line_start() const;
  bool skip_text_line_if_not_ptx();  // fences and prose
  Token make(Tok kind, size_t start, SourceLoc loc) const {
    return Token{kind, 0, std::string_view(src_.data() + start, pos_ - start), loc};
  }
  Token lex_number(size_t start, SourceLoc loc);
  void advance_to(size_t pos);  // may cross newlines
  // Columns are byte offsets from the line start, so only newlines need bookkeeping.
  SourceLoc here() const { return SourceLoc{line_, static_cast<uint32_t>(pos_ - line_start_ + 1)}; }
  char at(size_t k) const { return k < src_.size() ? src_[k] : '\0'; }
  void report(SourceLoc loc, uint32_t len, std::string msg, std::string id, std::string hint = {});
  void record_comment(size_t start, size_t end, SourceLoc loc);

  std::string_view src_;
  Diagnostics& diags_;
  std::vector<Comment>* comments_ = nullptr;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  uint32_t line_ = 1;
  uint32_t last_reported_line_ = 0;
  bool data_lines_ = false;
  size_t reported_ = 0;
};

// Identifier characters per the PTX ISA ("followsym": [a-zA-Z0-9_$]), by table lookup.
struct IdentCharTable {
  bool v[256] = {};
  constexpr IdentCharTable() {
    for (int c = 'a'; c <= 'z'; ++c) v[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) v[c] = true;
    for (int c = '0'; c <= '9'; ++c) v[c] = true;
    v[int('_')] = v[int('$')] = true;
  }
};
inline constexpr IdentCharTable kIdentChars{};
inline bool is_ident_char(char c) { return kIdentChars.v[static_cast<unsigned char>(c)]; }

}  // namespace ptxforge::ptx
