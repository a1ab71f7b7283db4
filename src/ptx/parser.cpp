#include "ptx/parser.h"

#include <cassert>
#include <charconv>

#include <fmt/format.h>

#include "ptx/isa.h"
#include "ptx/lexer.h"
#include "util/flat_map.h"

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

// A list under construction. Lists nest (an address inside an operand list, a block inside a
// block), so each kind of element has one stack: a builder pushes above the ones it is nested
// in, copies its elements into the arena when done, and pops them when it goes out of scope,
// also when a Resync unwinds through it.
template <typename T>
class Building {
 public:
  explicit Building(std::vector<T>& stack) : stack_(stack), mark_(stack.size()) {}
  Building(const Building&) = delete;
  ~Building() { stack_.erase(stack_.begin() + static_cast<std::ptrdiff_t>(mark_), stack_.end()); }
  void push(const T& x) { stack_.push_back(x); }
  size_t size() const { return stack_.size() - mark_; }
  List<T> finish(Arena& a) { return List<T>(a.copy_array(stack_.data() + mark_, size()), size()); }

 private:
  std::vector<T>& stack_;
  size_t mark_;
};

class Parser {
 public:
  Parser(Module& m, std::string_view text, Diagnostics& diags, const ParseOptions& opts)
      : m_(m), arena_(m.arena()), lex_(text, diags), diags_(diags), opts_(opts) {
    lex_.record_comments(&comments_);
    cur_ = lex_.next();
    // Room for the usual nesting, so the stacks do not regrow for every module.
    words_.reserve(256);
    operands_.reserve(64);
    statements_.reserve(1024);
  }

  void run();

 private:
  // Token access: the current token and, when asked for, the one after it. References
  // returned by peek() and peek_next() are invalidated by take(), which returns the token it
  // consumed.
  const Token& peek() const { return cur_; }
  const Token& peek_next() {
    if (!has_next_) {
      next_ = lex_.next();
      has_next_ = true;
    }
    return next_;
  }
  const Token& take() {
    last_ = cur_;
    if (has_next_) {
      cur_ = next_;
      has_next_ = false;
    } else {
      cur_ = lex_.next();
    }
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
  bool report_cuda_source(const Token& t);
  std::string unexpected(const Token& t);

  void parse_top_item(Building<TopItem>& items);
  Directive parse_header_directive();
  Directive parse_words_until_semicolon(Token name);
  Directive parse_loc(Token name);
  void stray_semicolon();
  Directive parse_file(Token name);
  Directive parse_section(Token name);
  Directive parse_perf_directive(Token name);
  void parse_function(Building<TopItem>& items, Building<Text>& linkage, SourceLoc start);
  List<VarDecl> parse_param_list();
  bool parse_decl_specs(VarDecl& d, Building<Text>* linkage);
  bool parse_declarator(Declarator& out, bool allow_init);
  VarDecl parse_var_decl(Building<Text>& linkage, SourceLoc loc);
  void parse_attribute_words(Building<Text>& words);
  Text take_word();
  Block parse_block(int depth);
  void skip_balanced_braces();
  bool parse_statement(Building<Statement>& b, int depth);
  void parse_instruction(Instruction& ins);
  Operand parse_operand(bool in_call, int depth);
  Expr parse_expr(int depth, int min_prec = 0);
  Expr parse_unary(int depth);
  Expr parse_primary(int depth);
  std::optional<uint64_t> parse_uint(std::string_view what);

  template <typename T>
  List<T> one(const T& x) {
    T* p = arena_.allocate_array<T>(1);
    new (p) T(x);
    return List<T>(p, 1);
  }

  Module& m_;
  Arena& arena_;
  // Element stacks for lists under construction (see Building).
  std::vector<Text> words_, linkage_;
  std::vector<SectionRun> runs_;
  std::vector<Operand> operands_;
  std::vector<Expr> exprs_;
  std::vector<Statement> statements_;
  std::vector<Declarator> declarators_;
  std::vector<std::optional<uint64_t>> dims_;
  std::vector<VarDecl> params_;
  std::vector<Directive> directives_;
  std::vector<TopItem> items_;
  std::vector<Comment> comments_;
  Lexer lex_;
  Diagnostics& diags_;
  const ParseOptions& opts_;
  Token cur_, next_, last_;
  bool has_next_ = false;
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

// CUDA C++ pasted where PTX belongs: a C keyword or CUDA built-in that no PTX statement starts
// with, followed by what C puts after it. One error for the line, named for what it is.
bool Parser::report_cuda_source(const Token& t) {
  static const FlatSet<std::string_view> words = {
      "int", "unsigned", "float", "double", "void", "char", "short", "long", "bool", "auto", "const", "if", "else",
      "for", "while", "do", "return", "switch", "struct", "__global__", "__device__", "__shared__", "__syncthreads",
      "__restrict__", "extern", "template", "size_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "float4",
      "float2", "half", "__half", "static", "threadIdx", "blockIdx", "blockDim", "gridDim", "atomicAdd"};
  if (t.kind != Tok::ident || !words.count(t.text) || is_known_opcode(t.text)) return false;
  const Token& n = peek_next();
  bool c_like = n.kind == Tok::ident || n.is('(') || n.is('*') || n.is('<') || n.is('=') || n.is('{') ||
                n.kind == Tok::directive;  // threadIdx.x
  if (!c_like) return false;
  size_t before = diags_.list().size();
  error(t.loc, fmt::format("this is CUDA C++, not PTX ('{}' starts no PTX statement)", t.text),
        "ptxforge checks PTX: compile the CUDA source with nvcc -ptx (a .cu candidate can be given to 'ptxforge run' "
        "as it is), or write the PTX instructions",
        static_cast<uint32_t>(t.text.size()));
  if (diags_.list().size() > before) diags_.list().back().check_id = "cuda-source";
  skip_statement();
  return true;
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
  auto v = integer_literal_value(tok.text);
  if (!v) error_at(tok, fmt::format("{} '{}' is not a valid 64-bit integer", what, tok.text));
  return v;
}

void Parser::run() {
  Building<TopItem> items(items_);
  while (!at_eof() && !stopped_) parse_top_item(items);
  m_.items = items.finish(arena_);
  m_.comments = m_.keep(comments_);
}

void Parser::parse_top_item(Building<TopItem>& items) {
  const Token& t = peek();
  SourceLoc loc = t.loc;
  if (t.kind == Tok::raw) {
    Token r = take();
    items.push({Directive{"@@DWARF", one(r.text), {}, loc, {}}});
    return;
  }
  if (t.kind == Tok::bad) {
    take();
    return;
  }
  if (t.is(';')) {
    stray_semicolon();
    return;
  }
  if (t.kind != Tok::directive) {
    if (report_cuda_source(t)) return;
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
  if (d == ".version" || d == ".target" || d == ".address_size") return items.push({parse_header_directive()});
  if (d == ".file") return items.push({parse_file(take())});
  if (d == ".section") return items.push({parse_section(take())});
  if (d == ".pragma" || d == ".alias") return items.push({parse_words_until_semicolon(take())});
  if (d == ".loc") return items.push({parse_loc(take())});
  Building<Text> linkage(linkage_);
  while (peek().kind == Tok::directive && is_linkage(peek().text)) linkage.push(take().text);
  const Token& n = peek();
  if (n.is_dir(".entry") || n.is_dir(".func")) return parse_function(items, linkage, loc);
  if (n.kind == Tok::directive && (is_state_space(n.text))) return items.push({parse_var_decl(linkage, loc)});
  error_at(n, fmt::format("unknown module-level directive {}", unexpected(n)),
           "expected .version, .target, .address_size, .entry, .func, or a .global/.const/.shared variable");
  take();
  skip_statement();
}

Directive Parser::parse_header_directive() {
  Token name = take();
  Directive d{name.text, {}, {}, name.loc, {}};
  if (name.text == ".version") {
    const Token& v = peek();
    if (v.kind == Tok::floating || v.kind == Tok::integer) d.args = one(take().text);
    else error_at(v, fmt::format("expected a version number such as 8.0 after .version, found {}", unexpected(v)));
  } else if (name.text == ".address_size") {
    if (auto v = parse_uint("address size")) d.args = one(m_.keep(std::to_string(*v)));
  } else {  // .target a, b, c
    Building<Text> args(words_);
    while (true) {
      const Token& t = peek();
      if (t.kind != Tok::ident) {
        error_at(t, fmt::format("expected a target name such as sm_90a, found {}", unexpected(t)));
        break;
      }
      args.push(take().text);
      if (!accept(',')) break;
    }
    d.args = args.finish(arena_);
  }
  return d;
}

Directive Parser::parse_words_until_semicolon(Token name) {
  Directive d{name.text, {}, {}, name.loc, {}};
  Building<Text> args(words_);
  while (!at_eof() && !peek().is(';') && !peek().is('}')) args.push(take_word());
  d.args = args.finish(arena_);
  if (!accept(';')) expect(';', fmt::format("'{}'", name.text));
  return d;
}

// ptxas has no empty statement: a ';' that ends nothing is a syntax error to it, also after
// .loc and .file, which end at the end of their line.
void Parser::stray_semicolon() {
  error_at(peek(), "stray ';': PTX has no empty statement",
           "delete it; .loc and .file end at the end of their line, without ';'");
  take();
}

Directive Parser::parse_loc(Token name) {
  Directive d{name.text, {}, {}, name.loc, {}};
  Building<Text> args(words_);
  auto done = [&] {
    d.args = args.finish(arena_);
    return d;
  };
  for (int i = 0; i < 3; ++i) {
    if (peek().kind != Tok::integer) {
      error_at(peek(), fmt::format(".loc takes file, line and column numbers, found {}", unexpected(peek())));
      return done();
    }
    args.push(take().text);
  }
  // The optional part, as ptxas takes it: both clauses, in this order, or neither.
  if (!peek().is(',')) return done();
  const char* form = ".loc's inlining part reads ', function_name <label>[+<offset>], inlined_at <file> <line> <column>'";
  args.push(take().text);
  if (peek().kind != Tok::ident || peek().text != "function_name") {
    error_at(peek(), fmt::format("expected function_name after ',' in .loc, found {}", unexpected(peek())), form);
    return done();
  }
  args.push(take().text);
  if (peek().kind != Tok::ident) {
    error_at(peek(), fmt::format("expected the function's name label after function_name, found {}", unexpected(peek())), form);
    return done();
  }
  args.push(take().text);
  if (peek().is('+') && peek_next().kind == Tok::integer) {
    args.push(take().text);
    args.push(take().text);
  }
  if (!peek().is(',')) {
    error_at(peek(), fmt::format("expected ', inlined_at' after function_name in .loc, found {}", unexpected(peek())), form);
    return done();
  }
  args.push(take().text);
  if (peek().kind != Tok::ident || peek().text != "inlined_at") {
    error_at(peek(), fmt::format("expected inlined_at after function_name in .loc, found {}", unexpected(peek())), form);
    return done();
  }
  args.push(take().text);
  for (int i = 0; i < 3; ++i) {
    if (peek().kind != Tok::integer) {
      error_at(peek(), fmt::format("inlined_at takes file, line and column numbers, found {}", unexpected(peek())), form);
      return done();
    }
    args.push(take().text);
  }
  return done();
}

Directive Parser::parse_file(Token name) {
  Directive d{name.text, {}, {}, name.loc, {}};
  Building<Text> args(words_);
  if (peek().kind != Tok::integer) {
    error_at(peek(), fmt::format("expected a file number after .file, found {}", unexpected(peek())));
    skip_statement();
    return d;
  }
  args.push(take().text);
  if (peek().kind != Tok::string) {
    error_at(peek(), fmt::format("expected a quoted file name after .file, found {}", unexpected(peek())));
    d.args = args.finish(arena_);
    return d;
  }
  args.push(take().text);
  while (peek().is(',') && peek_next().kind == Tok::integer) {
    args.push(take().text);
    args.push(take().text);
  }
  d.args = args.finish(arena_);
  return d;
}

// .section .debug_info { .b32 12 ... label: ... } — kept as one text per line.
Directive Parser::parse_section(Token name) {
  Directive d{name.text, {}, {}, name.loc, {}};
  {
    Building<Text> args(words_);
    while (!at_eof() && !peek().is('{')) args.push(take_word());
    d.args = args.finish(arena_);
  }
  // The body's lines are data from the first token after '{' on (the lexer reads one token
  // ahead, so the mode is set before '{' is taken) up to the closing '}'.
  assert(!has_next_);
  lex_.set_data_lines(peek().is('{'));
  if (!expect('{', "to open the .section body")) {
    skip_statement();
    return d;
  }
  Building<SectionRun> body(runs_);
  uint32_t line = 0;
  const char* begin = nullptr;
  const char* end = nullptr;
  auto flush = [&] {
    if (begin) body.push({Text(begin, static_cast<size_t>(end - begin)), false});
  };
  while (!at_eof() && !peek().is('}')) {
    const Token& t = peek();
    if (t.loc.line != line || !begin) {
      flush();
      begin = t.text.data();
      line = t.loc.line;
      // Most lines of a debug section (".b8 1,2,3") are plain words and numbers: take a run
      // of such lines whole instead of token by token.
      if (!has_next_ && t.kind != Tok::bad) {
        if (const char* run_end = lex_.take_plain_lines(begin)) {
          body.push({Text(begin, static_cast<size_t>(run_end - begin)), true});
          begin = nullptr;
          cur_ = lex_.next();
          continue;
        }
      }
    }
    end = t.text.data() + t.text.size();
    take();
  }
  flush();
  lex_.set_data_lines(false);
  d.body = body.finish(arena_);
  d.end = peek().loc;
  expect('}', "to close the .section body");
  return d;
}

Directive Parser::parse_perf_directive(Token name) {
  if (name.text == ".pragma") return parse_words_until_semicolon(name);
  Directive d{name.text, {}, {}, name.loc, {}};
  Building<Text> args(words_);
  while (peek().kind == Tok::integer || peek().is(',')) args.push(take().text);
  d.args = args.finish(arena_);
  return d;
}

// .attribute( .managed ) / .attribute(.unified(0x1, 0x2)): kept verbatim.
void Parser::parse_attribute_words(Building<Text>& words) {
  words.push(take().text);
  if (!peek().is('(')) return;
  int depth = 0;
  while (!at_eof()) {
    bool open = peek().is('('), close = peek().is(')');
    words.push(take_word());
    if (open) ++depth;
    if (close && --depth == 0) break;
  }
}

// One word of a directive kept as its words. An @@DWARF line runs to the end of its line, so
// it cannot be one of them (ptxas calls it a syntax error).
Text Parser::take_word() {
  Token t = take();
  if (t.kind == Tok::raw)
    error_at(t, "unexpected @@DWARF line inside a directive",
             "@@DWARF lines belong at module level or in a .section body");
  return t.text;
}

// Linkage words are accepted among the specifiers only where `linkage` is given (not in
// parameter lists).
bool Parser::parse_decl_specs(VarDecl& d, Building<Text>* linkage) {
  bool after_ptr = false;
  Building<Text> attrs(words_);
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
      parse_attribute_words(attrs);
    } else if (w == ".v2" || w == ".v4" || w == ".v8") {
      take();
      d.vec = static_cast<uint32_t>(w[2] - '0');
    } else if (is_state_space(w) || w == ".generic") {
      Token t = take();
      if (after_ptr) d.ptr_space = t.text;
      else if (d.space.empty()) d.space = t.text;
      else error_at(t, fmt::format("a declaration has one state space; '{}' follows '{}'", t.text, d.space));
    } else if (is_linkage(w) && linkage) {
      linkage->push(take().text);
    } else if (d.type.empty()) {
      d.type = take().text;
    } else {
      break;
    }
  }
  d.attrs = attrs.finish(arena_);
  if (linkage) d.linkage = linkage->finish(arena_);
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
  out.name = name.text;
  out.loc = name.loc;
  if (accept('<')) {
    auto n = parse_uint("register count");
    if (!n) return false;
    out.range = static_cast<uint32_t>(*n);
    if (!expect('>', "to close the register range")) return false;
  }
  if (peek().is('[')) {
    Building<std::optional<uint64_t>> dims(dims_);
    while (accept('[')) {
      if (accept(']')) {
        dims.push(std::nullopt);
        continue;
      }
      auto n = parse_uint("array size");
      if (!n) return false;
      dims.push(*n);
      if (!expect(']', "to close the array size")) return false;
    }
    out.dims = dims.finish(arena_);
  }
  if (allow_init && accept('=')) {
    try {
      Operand* init = arena_.allocate_array<Operand>(1);
      new (init) Operand(parse_operand(false, 0));
      out.init = Opt<Operand>(init);
    } catch (const Resync&) {
      return false;
    }
  }
  return true;
}

VarDecl Parser::parse_var_decl(Building<Text>& linkage, SourceLoc loc) {
  VarDecl d;
  d.loc = loc;
  if (!parse_decl_specs(d, &linkage)) {
    skip_statement();
    return d;
  }
  Building<Declarator> names(declarators_);
  do {
    Declarator decl;
    if (!parse_declarator(decl, true)) {
      d.names = names.finish(arena_);
      skip_statement();
      return d;
    }
    names.push(decl);
  } while (accept(','));
  d.names = names.finish(arena_);
  expect(';', "declaration");
  return d;
}

List<VarDecl> Parser::parse_param_list() {
  Building<VarDecl> params(params_);
  take();  // (
  if (accept(')')) return {};
  while (!at_eof()) {
    VarDecl p;
    p.loc = peek().loc;
    if (!parse_decl_specs(p, nullptr)) break;
    Declarator decl;
    if (!parse_declarator(decl, false)) break;
    p.names = one(decl);
    params.push(p);
    if (accept(',')) continue;
    if (accept(')')) return params.finish(arena_);
    error_at(peek(), fmt::format("expected ',' or ')' in the parameter list, found {}", unexpected(peek())));
    break;
  }
  // Resynchronise at the closing parenthesis.
  while (!at_eof() && !peek().is(')') && !peek().is('{') && !peek().is(';')) take();
  accept(')');
  return params.finish(arena_);
}

void Parser::parse_function(Building<TopItem>& items, Building<Text>& linkage, SourceLoc start) {
  Function f;
  f.start = start;
  f.linkage = linkage.finish(arena_);
  f.is_entry = take().text == ".entry";
  if (peek().is_dir(".attribute")) {
    Building<Text> attrs(words_);
    while (peek().is_dir(".attribute")) parse_attribute_words(attrs);
    f.attrs = attrs.finish(arena_);
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
  f.name = name.text;
  f.loc = name.loc;
  if (peek().is('(')) {
    f.has_param_list = true;
    f.params = parse_param_list();
  }
  if (peek().kind == Tok::directive && is_perf_directive(peek().text)) {
    Building<Directive> perf(directives_);
    while (peek().kind == Tok::directive && is_perf_directive(peek().text)) perf.push(parse_perf_directive(take()));
    f.perf = perf.finish(arena_);
  }
  if (peek().is('{')) {
    f.body = parse_block(0);
  } else if (!accept(';')) {
    error_at(peek(), fmt::format("expected '{{' to begin the body of '{}' or ';' to end its declaration, found {}",
                                 f.name, unexpected(peek())));
    skip_statement();
  }
  items.push({f});
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
  Building<Statement> stmts(statements_);
  while (!at_eof() && !stopped_) {
    if (peek().is('}')) {
      b.end = take().loc;
      b.stmts = stmts.finish(arena_);
      return b;
    }
    if (!parse_statement(stmts, depth)) continue;
  }
  b.stmts = stmts.finish(arena_);
  if (!stopped_) error(b.loc, "unterminated block: '{' has no matching '}'", "add the missing '}'");
  return b;
}

bool Parser::parse_statement(Building<Statement>& b, int depth) {
  const Token& t = peek();
  if (t.is('{')) {
    b.push(Statement::of(arena_, parse_block(depth + 1)));
    return true;
  }
  if (t.is(';')) {
    stray_semicolon();
    return false;
  }
  if (t.kind == Tok::bad) {
    take();
    skip_statement();
    return false;
  }
  if (t.kind == Tok::ident && peek_next().is(':')) {
    Token name = take();
    take();
    b.push(Statement::of(arena_, Label{name.text, name.loc}));
    return true;
  }
  if (t.kind == Tok::directive) {
    std::string_view d = t.text;
    SourceLoc loc = t.loc;
    if (d == ".loc") return b.push(Statement::of(arena_, parse_loc(take()))), true;
    if (d == ".pragma" || d == ".branchtargets" || d == ".callprototype" || d == ".calltargets")
      return b.push(Statement::of(arena_, parse_words_until_semicolon(take()))), true;
    if (d == ".file") return b.push(Statement::of(arena_, parse_file(take()))), true;
    if (is_state_space(d) || is_linkage(d)) {
      Building<Text> linkage(linkage_);
      while (peek().kind == Tok::directive && is_linkage(peek().text)) linkage.push(take().text);
      b.push(Statement::of(arena_, parse_var_decl(linkage, loc)));
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
    g.reg = take().text;
    guard = g;
  }
  if (peek().kind != Tok::ident) {
    error_at(peek(), fmt::format("expected an instruction, found {}", unexpected(peek())));
    take();
    skip_statement();
    return false;
  }
  if (!guard && report_cuda_source(peek())) return false;
  Instruction ins;
  ins.guard = guard;
  parse_instruction(ins);
  b.push(Statement::of(arena_, ins));
  return true;
}

void Parser::parse_instruction(Instruction& ins) {
  Token op = take();
  ins.opcode = op.text;
  ins.loc = op.loc;
  if (peek().kind == Tok::directive) {
    Building<Text> mods(words_);
    while (peek().kind == Tok::directive) mods.push(take().text);
    ins.mods = mods.finish(arena_);
  }
  bool in_call = ins.opcode == "call";
  // "ret\n exit;": an operand on a later line that looks like the next statement means the
  // ';' is missing, not that the next word is an operand.
  const Token& first = peek();
  bool next_statement = first.loc.line > op.loc.line &&
                        (first.is('@') || (first.kind == Tok::ident && (peek_next().is(':') || is_known_opcode(first.text))));
  if (!next_statement && !peek().is(';') && !peek().is('}') && !at_eof()) {
    Building<Operand> operands(operands_);
    while (true) {
      try {
        operands.push(parse_operand(in_call, 0));
      } catch (const Resync&) {
        ins.operands = operands.finish(arena_);
        skip_statement();
        return;
      }
      if (accept(',')) continue;
      if (peek().is(';')) break;
      // Two operands with no comma between them on one line, or a missing ';' before the next line.
      const Token& n = peek();
      if (n.loc.line == last_.loc.line && !n.is('}') && n.kind != Tok::eof) {
        ins.operands = operands.finish(arena_);
        error_at(n, fmt::format("expected ',' or ';' after operand of '{}', found {}", ins.full_opcode(), unexpected(n)));
        skip_statement();
        return;
      }
      break;
    }
    ins.operands = operands.finish(arena_);
  }
  // The message is only built when the ';' is missing: formatting it for every line cost 5%.
  if (!accept(';') && !expect(';', fmt::format("'{}'", ins.full_opcode()))) {
    // Not consumed: the next statement starts here. Only skip if we are stuck on the same line.
    if (peek().loc.line == last_.loc.line && !peek().is('}')) skip_statement();
  }
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
    Building<Operand> elems(operands_);
    while (!at_eof()) {
      elems.push(parse_operand(in_call, depth + 1));
      if (accept(',')) continue;
      if (accept(close)) {
        o.elems = elems.finish(arena_);
        return;
      }
      error_at(peek(), fmt::format("expected ',' or '{}' in {}, found {}", close, what, unexpected(peek())));
      throw Resync{};
    }
    o.elems = elems.finish(arena_);
  };
  if (t.is('{')) {
    parse_list('}', Operand::Kind::vector, "a vector operand");
  } else if (t.is('[')) {
    parse_list(']', Operand::Kind::address, "an address operand");
  } else if (t.is('(') && in_call) {
    parse_list(')', Operand::Kind::list, "a call argument list");
  } else if (t.kind == Tok::ident && t.text == "_" && !peek_next().is('|')) {
    take();
    o.kind = Operand::Kind::sink;
  } else {
    o.kind = Operand::Kind::expr;
    const Token& after = peek_next();
    if ((t.kind == Tok::ident || t.kind == Tok::integer) &&
        (after.is(',') || after.is(';') || after.is(']') || after.is('}') || after.is(')'))) {
      // Most operands are one register or number: no need for the expression parser.
      o.expr.kind = t.kind == Tok::ident ? Expr::Kind::name : Expr::Kind::integer;
      o.expr.loc = t.loc;
      o.expr.text = take().text;
    } else {
      o.expr = parse_expr(depth);
    }
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
    Expr* args = arena_.allocate_array<Expr>(2);
    new (&args[0]) Expr(lhs);
    new (&args[1]) Expr(rhs);
    Expr bin;
    bin.kind = Expr::Kind::binary;
    bin.text = o.text;
    bin.loc = lhs.loc;
    bin.args = List<Expr>(args, 2);
    lhs = bin;
  }
  if (min_prec == 0 && peek().is('?')) {
    take();
    Expr a = parse_expr(depth + 1);
    expect(':', "in a conditional expression");
    Expr b = parse_expr(depth + 1);
    Expr* args = arena_.allocate_array<Expr>(3);
    new (&args[0]) Expr(lhs);
    new (&args[1]) Expr(a);
    new (&args[2]) Expr(b);
    Expr c;
    c.kind = Expr::Kind::ternary;
    c.text = "?";
    c.loc = lhs.loc;
    c.args = List<Expr>(args, 3);
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
    e.text = op.text;
    e.loc = op.loc;
    e.args = one(parse_unary(depth + 1));
    return e;
  }
  return parse_primary(depth);
}

bool is_component(std::string_view d) {
  return d.size() == 2 && (d[1] == 'x' || d[1] == 'y' || d[1] == 'z' || d[1] == 'w' || d[1] == 'r' || d[1] == 'g' ||
                           d[1] == 'b' || d[1] == 'a');
}

// Video instructions select parts of a register operand: .h0/.h1 (halves), .b0..b3 (bytes),
// and for the SIMD forms .h10-style half pairs and .b3210-style byte lists (digits 0..7).
bool is_video_selector(std::string_view d) {
  if (d.size() < 3 || d.size() > 6) return false;
  char max_digit = d[1] == 'h' ? '1' : d[1] == 'b' ? '7' : 0;
  if (!max_digit || (d[1] == 'h' && d.size() > 4)) return false;
  for (char c : d.substr(2))
    if (c < '0' || c > max_digit) return false;
  return true;
}

Expr Parser::parse_primary(int depth) {
  const Token& t = peek();
  Expr e;
  e.loc = t.loc;
  switch (t.kind) {
    case Tok::integer: e.kind = Expr::Kind::integer; e.text = take().text; return e;
    case Tok::floating: e.kind = Expr::Kind::floating; e.text = take().text; return e;
    case Tok::string: e.kind = Expr::Kind::string; e.text = take().text; return e;
    case Tok::ident: {
      e.kind = Expr::Kind::name;
      e.text = take().text;
      // %tid.x, %ctaid.y: a special register's component, one name with it.
      while (peek().kind == Tok::directive && is_component(peek().text)) {
        Text c = take().text;
        if (c.data() == e.text.data() + e.text.size()) e.text = Text(e.text.data(), e.text.size() + c.size());
        else e.text = m_.keep(std::string(e.text) + std::string(c));
      }
      // %r2.h0: a selector written right after a register name belongs to it.
      if (peek().kind == Tok::directive && e.text[0] == '%' && is_video_selector(peek().text) &&
          peek().text.data() == e.text.data() + e.text.size())
        e.selector_size = static_cast<uint8_t>(take().text.size());
      if (peek().is('(') && (e.text == "generic" || e.text == "mask")) {
        take();
        e.kind = Expr::Kind::call;
        if (!peek().is(')')) {
          Building<Expr> args(exprs_);
          do args.push(parse_expr(depth + 1));
          while (accept(','));
          e.args = args.finish(arena_);
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
    e.args = one(parse_expr(depth + 1));
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
  Module m;
  // Every name in the tree is a view into the source: the module's own copy, unless the
  // caller lends the text for the module's lifetime.
  Text source = opts.borrow_text ? text : m.keep(text);
  m.source = source;
  Parser p(m, source, diags, opts);
  p.run();
  return m;
}

}  // namespace ptxforge::ptx
