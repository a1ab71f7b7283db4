#include "ptx/parser.h"

#include <charconv>

#include <fmt/format.h>

#include "ptx/isa.h"
#include "ptx/lexer.h"

namespace ptxforge::ptx {

namespace {

bool is_linkage(std::string_view d) {
  return d == ".visible" || d == ".extern" || d == ".weak" || d == ".common";
}

bool is_state_space(std::string_view d) {
  return d == ".reg" || d == ".global" || d == ".shared" || d == ".const" || d == ".local" || d == ".param" ||
         d == ".tex" || d == ".sreg";
}

bool is_perf_directive(std::string_view d) {
  return d == ".maxntid" || d == ".reqntid" || d == ".minnctapersm" || d == ".maxnctapersm" || d == ".maxnreg" ||
         d == ".noreturn" || d == ".reqnctapercluster" || d == ".explicitcluster" || d == ".maxclusterrank" ||
         d == ".blocksareclusters" || d == ".pragma" || d == ".abi_preserve" || d == ".abi_preserve_control";
}

struct Resync {};  // unwinds to the enclosing statement after an operand error was reported

class Parser {
 public:
  Parser(std::string_view text, Diagnostics& diags, const ParseOptions& opts)
      : lex_(text, diags), diags_(diags), opts_(opts) {}

  Module run();

 private:
  // Token access with a little lookahead.
  // The common case (the next token is already lexed) stays inline; filling is out of line.
  const Token& peek() {
    if (count_ == 0) fill(0);
    return buf_[head_];
  }
  const Token& peek(unsigned k) {
    if (count_ <= k) fill(k);
    return buf_[(head_ + k) & (kLook - 1)];
  }
  [[gnu::noinline]] void fill(unsigned k) {
    while (count_ <= k) buf_[(head_ + count_++) & (kLook - 1)] = lex_.next();
  }
  Token take() {
    if (count_ == 0) fill(0);
    last_ = buf_[head_];
    head_ = (head_ + 1) & (kLook - 1);
    --count_;
    return last_;
  }
  bool accept(char c) {
    if (peek().is(c)) return take(), true;
    return false;
  }
  bool expect(char c, std::string_view context);
  bool at_eof() { return peek().kind == Tok::eof; }

  void error(SourceLoc loc, std::string msg, std::string hint = {}, uint32_t len = 1);
  void error_at(const Token& t, std::string msg, std::string hint = {});
  bool stopped() const { return stopped_; }
  void skip_statement();  // to after ';' or before '}' / eof
  std::string unexpected(const Token& t);

  void parse_top_item(Module& m);
  Directive parse_header_directive();
  Directive parse_words_until_semicolon(Token name);
  Directive parse_loc(Token name);
  Directive parse_file(Token name);
  Directive parse_section(Token name);
  Directive parse_perf_directive(Token name);
  void parse_function(Module& m, std::vector<std::string> linkage);
  std::vector<VarDecl> parse_param_list();
  bool parse_decl_specs(VarDecl& d, bool in_param);
  bool parse_declarator(Declarator& out, bool allow_init);
  VarDecl parse_var_decl(std::vector<std::string> linkage, SourceLoc loc);
  std::vector<std::string> parse_attribute_words();
  Block parse_block(int depth);
  void skip_balanced_braces();
  bool parse_statement(Block& b, int depth);
  void parse_instruction(Instruction& ins, std::optional<Guard> guard);
  Operand parse_operand(bool in_call, int depth);
  Expr parse_expr(int depth, int min_prec = 0);
  Expr parse_unary(int depth);
  Expr parse_primary(int depth);
  std::optional<uint64_t> parse_uint(std::string_view what);

  static constexpr unsigned kLook = 4;  // a power of two
  Lexer lex_;
  Diagnostics& diags_;
  const ParseOptions& opts_;
  Token buf_[kLook];
  unsigned head_ = 0, count_ = 0;
  Token last_;
  size_t errors_ = 0;
  bool stopped_ = false;
};

void Parser::error(SourceLoc loc, std::string msg, std::string hint, uint32_t len) {
  if (stopped_) return;
  if (++errors_ > opts_.max_errors) {
    stopped_ = true;
    Diagnostic d;
    d.severity = Severity::note;
    d.loc = loc;
    d.message = "too many errors; stopped parsing here";
    d.check_id = "too-many-errors";
    diags_.add(std::move(d));
    return;
  }
  auto& d = diags_.error(loc, std::move(msg), "syntax");
  d.hint = std::move(hint);
  d.length = len;
}

std::string Parser::unexpected(const Token& t) {
  switch (t.kind) {
    case Tok::eof: return "end of file";
    case Tok::string: return "string " + std::string(t.text.substr(0, 40));
    default: return fmt::format("'{}'", t.text.substr(0, 40));
  }
}

void Parser::error_at(const Token& t, std::string msg, std::string hint) {
  if (t.kind == Tok::bad) {  // the lexer already said what is wrong with these bytes
    return;
  }
  error(t.loc, std::move(msg), std::move(hint), std::max<uint32_t>(1, static_cast<uint32_t>(t.text.size())));
}

bool Parser::expect(char c, std::string_view context) {
  if (accept(c)) return true;
  const Token& t = peek();
  if (c == ';') {
    // The classic: a missing ';' is noticed on the next line. Point at the end of the
    // previous token instead, where the ';' belongs.
    if (last_.loc.line != 0 && t.loc.line > last_.loc.line) {
      SourceLoc at{last_.loc.line, last_.loc.col + static_cast<uint32_t>(last_.text.size())};
      if (stopped_) return false;
      if (++errors_ > opts_.max_errors) { stopped_ = true; return false; }
      auto& d = diags_.error(at, fmt::format("expected ';' after {}", context), "syntax");
      d.fixit = FixIt{at, 0, ";"};
      d.hint = "every PTX statement ends with ';'";
      return false;
    }
  }
  error_at(t, fmt::format("expected '{}' {}, found {}", c, context, unexpected(t)));
  return false;
}

void Parser::skip_statement() {
  int depth = 0;
  while (!at_eof()) {
    const Token& t = peek();
    if (t.is('{')) ++depth;
    if (t.is('}')) {
      if (depth == 0) return;
      --depth;
    }
    if (t.is(';') && depth == 0) {
      take();
      return;
    }
    take();
  }
}

std::optional<uint64_t> Parser::parse_uint(std::string_view what) {
  const Token& t = peek();
  if (t.kind != Tok::integer) {
    error_at(t, fmt::format("expected {} (an integer), found {}", what, unexpected(t)));
    return std::nullopt;
  }
  Token tok = take();
  std::string_view s = tok.text;
  if (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.remove_suffix(1);
  int base = 10;
  if (s.size() > 2 && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  else if (s.size() > 2 && (s[1] == 'b' || s[1] == 'B')) base = 2, s.remove_prefix(2);
  else if (s.size() > 1 && s[0] == '0') base = 8, s.remove_prefix(1);
  uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
    error_at(tok, fmt::format("{} '{}' is not a valid 64-bit integer", what, tok.text));
    return std::nullopt;
  }
  return v;
}

Module Parser::run() {
  Module m;
  while (!at_eof() && !stopped_) parse_top_item(m);
  return m;
}

void Parser::parse_top_item(Module& m) {
  const Token& t = peek();
  SourceLoc loc = t.loc;
  if (t.kind == Tok::raw) {
    Token r = take();
    m.items.push_back({Directive{"@@DWARF", {std::string(r.text)}, {}, loc}});
    return;
  }
  if (t.kind == Tok::bad) {
    take();
    return;
  }
  if (t.is(';')) {
    take();
    return;
  }
  if (t.kind != Tok::directive) {
    std::string hint;
    if (t.kind == Tok::ident)
      hint = "instructions belong inside an .entry or .func body; module level holds directives and declarations";
    error_at(t, fmt::format("expected a directive, declaration or function at module level, found {}", unexpected(t)),
             hint);
    take();
    skip_statement();
    return;
  }
  std::string_view d = t.text;
  if (d == ".version" || d == ".target" || d == ".address_size") {
    m.items.push_back({parse_header_directive()});
    return;
  }
  if (d == ".file") return m.items.push_back({parse_file(take())});
  if (d == ".section") return m.items.push_back({parse_section(take())});
  if (d == ".pragma" || d == ".alias") return m.items.push_back({parse_words_until_semicolon(take())});
  if (d == ".loc") return m.items.push_back({parse_loc(take())});
  std::vector<std::string> linkage;
  while (peek().kind == Tok::directive && is_linkage(peek().text)) linkage.emplace_back(take().text);
  const Token& n = peek();
  if (n.is_dir(".entry") || n.is_dir(".func")) return parse_function(m, std::move(linkage));
  if (n.kind == Tok::directive && (is_state_space(n.text))) {
    m.items.push_back({parse_var_decl(std::move(linkage), loc)});
    return;
  }
  error_at(n, fmt::format("unknown module-level directive {}", unexpected(n)),
           "expected .version, .target, .address_size, .entry, .func, or a .global/.const/.shared variable");
  take();
  skip_statement();
}

Directive Parser::parse_header_directive() {
  Token name = take();
  Directive d{std::string(name.text), {}, {}, name.loc};
  if (name.text == ".version") {
    const Token& v = peek();
    if (v.kind == Tok::floating || v.kind == Tok::integer) d.args.emplace_back(take().text);
    else error_at(v, fmt::format("expected a version number such as 8.0 after .version, found {}", unexpected(v)));
  } else if (name.text == ".address_size") {
    if (auto v = parse_uint("address size")) d.args.push_back(std::to_string(*v));
  } else {  // .target a, b, c
    while (true) {
      const Token& t = peek();
      if (t.kind != Tok::ident) {
        error_at(t, fmt::format("expected a target name such as sm_90a, found {}", unexpected(t)));
        break;
      }
      d.args.emplace_back(take().text);
      if (!accept(',')) break;
    }
  }
  return d;
}

Directive Parser::parse_words_until_semicolon(Token name) {
  Directive d{std::string(name.text), {}, {}, name.loc};
  while (!at_eof() && !peek().is(';') && !peek().is('}')) d.args.emplace_back(take().text);
  if (!accept(';')) expect(';', fmt::format("'{}'", name.text));
  return d;
}

Directive Parser::parse_loc(Token name) {
  Directive d{std::string(name.text), {}, {}, name.loc};
  for (int i = 0; i < 3; ++i) {
    if (peek().kind != Tok::integer) {
      error_at(peek(), fmt::format(".loc takes file, line and column numbers, found {}", unexpected(peek())));
      return d;
    }
    d.args.emplace_back(take().text);
  }
  while (peek().is(',')) {
    d.args.emplace_back(take().text);
    if (peek().kind != Tok::ident) {
      error_at(peek(), "expected function_name or inlined_at after ',' in .loc");
      return d;
    }
    Token kw = take();
    d.args.emplace_back(kw.text);
    if (kw.text == "inlined_at") {
      for (int i = 0; i < 3 && peek().kind == Tok::integer; ++i) d.args.emplace_back(take().text);
    } else {
      if (peek().kind == Tok::ident) d.args.emplace_back(take().text);
      while (peek().is('+') && peek(1).kind == Tok::integer) {
        d.args.emplace_back(take().text);
        d.args.emplace_back(take().text);
      }
    }
  }
  return d;
}

Directive Parser::parse_file(Token name) {
  Directive d{std::string(name.text), {}, {}, name.loc};
  if (peek().kind != Tok::integer) {
    error_at(peek(), fmt::format("expected a file number after .file, found {}", unexpected(peek())));
    skip_statement();
    return d;
  }
  d.args.emplace_back(take().text);
  if (peek().kind != Tok::string) {
    error_at(peek(), fmt::format("expected a quoted file name after .file, found {}", unexpected(peek())));
    return d;
  }
  d.args.emplace_back(take().text);
  while (peek().is(',') && peek(1).kind == Tok::integer) {
    d.args.emplace_back(take().text);
    d.args.emplace_back(take().text);
  }
  return d;
}

// .section .debug_info { .b32 12 ... label: ... } — kept as words, one entry per line.
Directive Parser::parse_section(Token name) {
  Directive d{std::string(name.text), {}, {}, name.loc};
  while (!at_eof() && !peek().is('{')) d.args.emplace_back(take().text);
  if (!expect('{', "to open the .section body")) {
    skip_statement();
    return d;
  }
  uint32_t line = 0;
  while (!at_eof() && !peek().is('}')) {
    Token t = take();
    if (t.loc.line != line || d.body.empty()) {
      d.body.emplace_back();
      line = t.loc.line;
    }
    d.body.back().emplace_back(t.text);
  }
  expect('}', "to close the .section body");
  return d;
}

Directive Parser::parse_perf_directive(Token name) {
  if (name.text == ".pragma") return parse_words_until_semicolon(name);
  Directive d{std::string(name.text), {}, {}, name.loc};
  while (peek().kind == Tok::integer || peek().is(',')) d.args.emplace_back(take().text);
  return d;
}

std::vector<std::string> Parser::parse_attribute_words() {
  // .attribute( .managed ) / .attribute(.unified(0x1, 0x2)): kept verbatim.
  std::vector<std::string> words;
  words.emplace_back(take().text);
  if (!peek().is('(')) return words;
  int depth = 0;
  while (!at_eof()) {
    Token t = take();
    words.emplace_back(t.text);
    if (t.is('(')) ++depth;
    if (t.is(')') && --depth == 0) break;
  }
  return words;
}

bool Parser::parse_decl_specs(VarDecl& d, bool in_param) {
  bool after_ptr = false;
  while (peek().kind == Tok::directive) {
    std::string_view w = peek().text;
    if (w == ".align") {
      take();
      auto v = parse_uint("alignment");
      if (!v) return false;
      (after_ptr ? d.ptr_align : d.align) = static_cast<uint32_t>(*v);
    } else if (w == ".ptr") {
      take();
      d.ptr = true;
      after_ptr = true;
    } else if (w == ".attribute") {
      auto words = parse_attribute_words();
      d.attrs.insert(d.attrs.end(), words.begin(), words.end());
    } else if (w == ".v2" || w == ".v4" || w == ".v8") {
      take();
      d.vec = static_cast<uint32_t>(w[2] - '0');
    } else if (is_state_space(w) || w == ".generic") {
      Token t = take();
      if (after_ptr) d.ptr_space = std::string(t.text);
      else if (d.space.empty()) d.space = std::string(t.text);
      else error_at(t, fmt::format("a declaration has one state space; '{}' follows '{}'", t.text, d.space));
    } else if (is_linkage(w) && !in_param) {
      d.linkage.emplace_back(take().text);
    } else if (d.type.empty()) {
      d.type = std::string(take().text);
    } else {
      break;
    }
  }
  if (d.type.empty()) {
    error_at(peek(), fmt::format("expected a type such as .b32 or .u64 in the declaration, found {}", unexpected(peek())));
    return false;
  }
  return true;
}

bool Parser::parse_declarator(Declarator& out, bool allow_init) {
  const Token& t = peek();
  if (t.kind != Tok::ident) {
    std::string hint;
    if (t.kind == Tok::directive) hint = "a declaration has one type; check for a duplicated or misplaced directive";
    error_at(t, fmt::format("expected a name in the declaration, found {}", unexpected(t)), hint);
    return false;
  }
  Token name = take();
  out.name = std::string(name.text);
  out.loc = name.loc;
  if (accept('<')) {
    auto n = parse_uint("register count");
    if (!n) return false;
    out.range = static_cast<uint32_t>(*n);
    if (!expect('>', "to close the register range")) return false;
  }
  while (accept('[')) {
    if (accept(']')) {
      out.dims.push_back(std::nullopt);
      continue;
    }
    auto n = parse_uint("array size");
    if (!n) return false;
    out.dims.push_back(*n);
    if (!expect(']', "to close the array size")) return false;
  }
  if (allow_init && accept('=')) {
    try {
      out.init = parse_operand(false, 0);
    } catch (const Resync&) {
      return false;
    }
  }
  return true;
}

VarDecl Parser::parse_var_decl(std::vector<std::string> linkage, SourceLoc loc) {
  VarDecl d;
  d.linkage = std::move(linkage);
  d.loc = loc;
  if (!parse_decl_specs(d, false)) {
    skip_statement();
    return d;
  }
  do {
    Declarator decl;
    if (!parse_declarator(decl, true)) {
      skip_statement();
      return d;
    }
    d.names.push_back(std::move(decl));
  } while (accept(','));
  expect(';', "declaration");
  return d;
}

std::vector<VarDecl> Parser::parse_param_list() {
  std::vector<VarDecl> params;
  take();  // (
  if (accept(')')) return params;
  while (!at_eof()) {
    VarDecl p;
    p.loc = peek().loc;
    if (!parse_decl_specs(p, true)) break;
    Declarator decl;
    if (!parse_declarator(decl, false)) break;
    p.names.push_back(std::move(decl));
    params.push_back(std::move(p));
    if (accept(',')) continue;
    if (accept(')')) return params;
    error_at(peek(), fmt::format("expected ',' or ')' in the parameter list, found {}", unexpected(peek())));
    break;
  }
  // Resynchronise at the closing parenthesis.
  while (!at_eof() && !peek().is(')') && !peek().is('{') && !peek().is(';')) take();
  accept(')');
  return params;
}

void Parser::parse_function(Module& m, std::vector<std::string> linkage) {
  Function f;
  f.linkage = std::move(linkage);
  f.is_entry = take().text == ".entry";
  while (peek().is_dir(".attribute")) {
    auto w = parse_attribute_words();
    f.attrs.insert(f.attrs.end(), w.begin(), w.end());
  }
  if (!f.is_entry && peek().is('(')) {
    f.has_ret_list = true;
    f.rets = parse_param_list();
  }
  if (peek().kind != Tok::ident) {
    error_at(peek(), fmt::format("expected the function name, found {}", unexpected(peek())));
    skip_statement();
    return;
  }
  Token name = take();
  f.name = std::string(name.text);
  f.loc = name.loc;
  if (peek().is('(')) {
    f.has_param_list = true;
    f.params = parse_param_list();
  }
  while (peek().kind == Tok::directive && is_perf_directive(peek().text)) f.perf.push_back(parse_perf_directive(take()));
  if (peek().is('{')) {
    f.body = parse_block(0);
  } else if (!accept(';')) {
    error_at(peek(), fmt::format("expected '{{' to begin the body of '{}' or ';' to end its declaration, found {}",
                                 f.name, unexpected(peek())));
    skip_statement();
  }
  m.items.push_back({std::move(f)});
}

void Parser::skip_balanced_braces() {
  int depth = 0;
  while (!at_eof()) {
    Token t = take();
    if (t.is('{')) ++depth;
    if (t.is('}') && --depth <= 0) return;
  }
}

Block Parser::parse_block(int depth) {
  Block b;
  b.loc = peek().loc;
  if (depth >= opts_.max_depth) {
    error(peek().loc, fmt::format("blocks nested more than {} deep", opts_.max_depth));
    skip_balanced_braces();
    return b;
  }
  take();  // {
  if (depth == 0) b.stmts.reserve(64);  // function bodies: skip the first few regrowths
  while (!at_eof() && !stopped_) {
    if (accept('}')) return b;
    if (!parse_statement(b, depth)) continue;
  }
  if (!stopped_) error(b.loc, "unterminated block: '{' has no matching '}'", "add the missing '}'");
  return b;
}

bool Parser::parse_statement(Block& b, int depth) {
  const Token& t = peek();
  if (t.is('{')) {
    b.stmts.push_back({parse_block(depth + 1)});
    return true;
  }
  if (t.is(';')) {
    take();
    return true;
  }
  if (t.kind == Tok::bad) {
    take();
    skip_statement();
    return false;
  }
  if (t.kind == Tok::ident && peek(1).is(':')) {
    Token name = take();
    take();
    b.stmts.push_back({Label{std::string(name.text), name.loc}});
    return true;
  }
  if (t.kind == Tok::directive) {
    std::string_view d = t.text;
    SourceLoc loc = t.loc;
    if (d == ".loc") return b.stmts.push_back({parse_loc(take())}), true;
    if (d == ".pragma" || d == ".branchtargets" || d == ".callprototype" || d == ".calltargets")
      return b.stmts.push_back({parse_words_until_semicolon(take())}), true;
    if (d == ".file") return b.stmts.push_back({parse_file(take())}), true;
    if (is_state_space(d) || is_linkage(d)) {
      std::vector<std::string> linkage;
      while (peek().kind == Tok::directive && is_linkage(peek().text)) linkage.emplace_back(take().text);
      b.stmts.push_back({parse_var_decl(std::move(linkage), loc)});
      return true;
    }
    error_at(t, fmt::format("unexpected directive {} in a function body", unexpected(t)),
             "bodies hold instructions, labels, .reg/.local/.shared/.param declarations, .loc and .pragma");
    take();
    skip_statement();
    return false;
  }
  std::optional<Guard> guard;
  if (t.is('@')) {
    Token at = take();
    Guard g;
    g.loc = at.loc;
    if (accept('!')) g.negated = true;
    if (peek().kind != Tok::ident) {
      error_at(peek(), fmt::format("expected a predicate register after '@', found {}", unexpected(peek())),
               "a guard reads '@%p1 bra L;' or '@!%p1 bra L;'");
      skip_statement();
      return false;
    }
    g.reg = std::string(take().text);
    guard = std::move(g);
  }
  if (peek().kind != Tok::ident) {
    error_at(peek(), fmt::format("expected an instruction, found {}", unexpected(peek())));
    take();
    skip_statement();
    return false;
  }
  // Built in place: an Instruction is large, and moving it twice per line shows in profiles.
  auto& stmt = b.stmts.emplace_back(Statement{Instruction{}});
  parse_instruction(std::get<Instruction>(stmt.node), std::move(guard));
  return true;
}

void Parser::parse_instruction(Instruction& ins, std::optional<Guard> guard) {
  ins.guard = std::move(guard);
  Token op = take();
  ins.opcode = std::string(op.text);
  ins.loc = op.loc;
  // One allocation each for the usual sizes instead of regrowing at 1, 2 and 4.
  ins.mods.reserve(4);
  ins.operands.reserve(4);
  while (peek().kind == Tok::directive) ins.mods.emplace_back(take().text);
  bool in_call = ins.opcode == "call";
  // "ret\n exit;": an operand on a later line that looks like the next statement means the
  // ';' is missing, not that the next word is an operand.
  const Token& first = peek();
  bool next_statement = first.loc.line > op.loc.line &&
                        (first.is('@') || (first.kind == Tok::ident && (peek(1).is(':') || is_known_opcode(first.text))));
  if (!next_statement && !peek().is(';') && !peek().is('}') && !at_eof()) {
    while (true) {
      try {
        ins.operands.push_back(parse_operand(in_call, 0));
      } catch (const Resync&) {
        skip_statement();
        return;
      }
      if (accept(',')) continue;
      if (peek().is(';')) break;
      // Two operands with no comma between them on one line, or a missing ';' before the next line.
      const Token& n = peek();
      if (n.loc.line == last_.loc.line && !n.is('}') && n.kind != Tok::eof) {
        error_at(n, fmt::format("expected ',' or ';' after operand of '{}', found {}", ins.full_opcode(), unexpected(n)));
        skip_statement();
        return;
      }
      break;
    }
  }
  // The message is only built when the ';' is missing: formatting it for every line cost 5%.
  if (!accept(';') && !expect(';', fmt::format("'{}'", ins.full_opcode()))) {
    // Not consumed: the next statement starts here. Only skip if we are stuck on the same line.
    if (peek().loc.line == last_.loc.line && !peek().is('}')) skip_statement();
  }
  return;
}

Operand Parser::parse_operand(bool in_call, int depth) {
  Operand o;
  const Token& t = peek();
  o.loc = t.loc;
  if (depth > opts_.max_depth) {
    error(t.loc, fmt::format("operand nested more than {} deep", opts_.max_depth));
    throw Resync{};
  }
  auto parse_list = [&](char close, Operand::Kind kind, const char* what) {
    take();
    o.kind = kind;
    if (accept(close)) return;
    while (!at_eof()) {
      o.elems.push_back(parse_operand(in_call, depth + 1));
      if (accept(',')) continue;
      if (accept(close)) return;
      error_at(peek(), fmt::format("expected ',' or '{}' in {}, found {}", close, what, unexpected(peek())));
      throw Resync{};
    }
  };
  if (t.is('{')) {
    parse_list('}', Operand::Kind::vector, "a vector operand");
  } else if (t.is('[')) {
    parse_list(']', Operand::Kind::address, "an address operand");
  } else if (t.is('(') && in_call) {
    parse_list(')', Operand::Kind::list, "a call argument list");
  } else if (t.kind == Tok::ident && t.text == "_" && !peek(1).is('|')) {
    take();
    o.kind = Operand::Kind::sink;
  } else {
    o.kind = Operand::Kind::expr;
    o.expr = parse_expr(depth);
  }
  return o;
}

int binary_precedence(const Token& t) {
  if (t.kind != Tok::punct) return -1;
  switch (t.punct) {
    case '*': case '/': case '%': return 10;
    case '+': case '-': return 9;
    case kShl: case kShr: return 8;
    case '<': case '>': case kLe: case kGe: return 7;
    case kEq: case kNe: return 6;
    case '&': return 5;
    case '^': return 4;
    case '|': return 3;
    case kAndAnd: return 2;
    case kOrOr: return 1;
    default: return -1;
  }
}

Expr Parser::parse_expr(int depth, int min_prec) {
  if (depth > opts_.max_depth) {
    error(peek().loc, fmt::format("expression nested more than {} deep", opts_.max_depth));
    throw Resync{};
  }
  Expr lhs = parse_unary(depth + 1);
  while (true) {
    const Token& op = peek();
    int prec = binary_precedence(op);
    if (prec < 0 || prec < min_prec) break;
    Token o = take();
    Expr rhs = parse_expr(depth + 1, prec + 1);
    Expr bin;
    bin.kind = Expr::Kind::binary;
    bin.text = std::string(o.text);
    bin.loc = lhs.loc;
    bin.args.push_back(std::move(lhs));
    bin.args.push_back(std::move(rhs));
    lhs = std::move(bin);
  }
  if (min_prec == 0 && peek().is('?')) {
    take();
    Expr a = parse_expr(depth + 1);
    expect(':', "in a conditional expression");
    Expr b = parse_expr(depth + 1);
    Expr c;
    c.kind = Expr::Kind::ternary;
    c.text = "?";
    c.loc = lhs.loc;
    c.args = {std::move(lhs), std::move(a), std::move(b)};
    return c;
  }
  return lhs;
}

Expr Parser::parse_unary(int depth) {
  const Token& t = peek();
  if (t.is('-') || t.is('!') || t.is('~') || t.is('+')) {
    if (depth > opts_.max_depth) {
      error(t.loc, fmt::format("expression nested more than {} deep", opts_.max_depth));
      throw Resync{};
    }
    Token op = take();
    Expr e;
    e.kind = Expr::Kind::unary;
    e.text = std::string(op.text);
    e.loc = op.loc;
    e.args.push_back(parse_unary(depth + 1));
    return e;
  }
  return parse_primary(depth);
}

Expr Parser::parse_primary(int depth) {
  const Token& t = peek();
  Expr e;
  e.loc = t.loc;
  switch (t.kind) {
    case Tok::integer: e.kind = Expr::Kind::integer; e.text = std::string(take().text); return e;
    case Tok::floating: e.kind = Expr::Kind::floating; e.text = std::string(take().text); return e;
    case Tok::string: e.kind = Expr::Kind::string; e.text = std::string(take().text); return e;
    case Tok::ident: {
      e.kind = Expr::Kind::name;
      e.text = std::string(take().text);
      // %tid.x, %ctaid.y: a special register's component.
      while (peek().kind == Tok::directive && (peek().text == ".x" || peek().text == ".y" || peek().text == ".z" ||
                                               peek().text == ".w" || peek().text == ".r" || peek().text == ".g" ||
                                               peek().text == ".b" || peek().text == ".a"))
        e.text += take().text;
      if (peek().is('(') && (e.text == "generic" || e.text == "mask")) {
        take();
        e.kind = Expr::Kind::call;
        if (!peek().is(')')) {
          do e.args.push_back(parse_expr(depth + 1));
          while (accept(','));
        }
        expect(')', fmt::format("to close '{}('", e.text));
      }
      return e;
    }
    default: break;
  }
  if (t.is('(')) {
    take();
    e.kind = Expr::Kind::paren;
    e.args.push_back(parse_expr(depth + 1));
    if (!accept(')')) {
      error_at(peek(), fmt::format("expected ')' to close '(', found {}", unexpected(peek())));
      throw Resync{};
    }
    return e;
  }
  std::string hint;
  if (t.is(';')) hint = "an operand is missing";
  error_at(t, fmt::format("expected an operand, found {}", unexpected(t)), hint);
  throw Resync{};  // unwinds to the instruction, which resynchronises
}

}  // namespace

Module parse(std::string_view text, Diagnostics& diags, const ParseOptions& opts) {
  Parser p(text, diags, opts);
  return p.run();
}

}  // namespace ptxforge::ptx
