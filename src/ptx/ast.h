// The PTX abstract syntax tree. It keeps every construct the printer needs to reproduce a
// module that ptxas treats identically, and a source location on every node for diagnostics.
// Equality is structural and ignores locations, so print(parse(x)) can be compared with x.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "util/arena.h"
#include "util/diagnostic.h"

namespace ptxforge::ptx {

// Names, literals and words are views into text the Module owns (its copy of the source, or
// text a rewrite added to its arena).
using Text = std::string_view;

// A fixed sequence of nodes in the Module's arena. Nodes are trivially copyable, so a tree
// costs one bump allocation per list and nothing to destroy.
template <typename T>
class List {
 public:
  List() = default;
  List(T* data, size_t size) : data_(data), size_(size) {}
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& operator[](size_t i) { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  bool operator==(const List& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// An optional node held by pointer (a declarator's initializer); compares by value.
template <typename T>
class Opt {
 public:
  Opt() = default;
  explicit Opt(const T* p) : p_(p) {}
  explicit operator bool() const { return p_ != nullptr; }
  const T& operator*() const { return *p_; }
  const T* operator->() const { return p_; }
  bool operator==(const Opt& o) const { return p_ && o.p_ ? *p_ == *o.p_ : p_ == o.p_; }

 private:
  const T* p_ = nullptr;
};

// A constant or address expression: names, literals and operators, as written.
struct Expr {
  enum class Kind : uint8_t { name, integer, floating, string, unary, binary, ternary, call, paren };
  Kind kind = Kind::name;
  // The length of a video instruction's operand selector on a register name (".h0",
  // ".b3210"), which stands in the text right after the name.
  uint8_t selector_size = 0;
  Text text;        // the name, the literal, the operator, or the callee (generic(...))
  List<Expr> args;  // operands of unary/binary/ternary/call/paren
  SourceLoc loc;
  Text selector() const { return Text(text.data() + text.size(), selector_size); }
  bool operator==(const Expr& o) const {
    return kind == o.kind && text == o.text && args == o.args && selector() == o.selector();
  }
};

struct Operand {
  enum class Kind : uint8_t {
    expr,     // %r1, 42, 0f3F800000, sym+4, %tid.x, %p|%q, !%p
    vector,   // {%f1, %f2, _, %f4}
    address,  // [%rd1+8], [sym], [tmap, {%r1, %r2}]
    list,     // (param0, param1) in call
    sink,     // _
  };
  Kind kind = Kind::expr;
  Expr expr;              // for Kind::expr
  List<Operand> elems;    // vector elements, address parts, list items
  SourceLoc loc;
  bool operator==(const Operand& o) const { return kind == o.kind && expr == o.expr && elems == o.elems; }
};

// Consecutive lines of a .section body as one view into the source: from the first token of
// its first line to the last token of its last. A run of several lines holds only plain
// tokens (words, numbers, ',', ':', '+', '-': no comment, no string), so each of its lines is
// the text between two line ends with the blanks around it trimmed. Debug sections are most
// of a -G module; one view per run instead of one per line keeps its tree small.
struct SectionRun {
  Text text;
  bool many_lines = false;  // false: one line, taken whole
};

// A directive kept as its words: .loc, .pragma, .file, perf directives, .section lines, ...
struct Directive {
  Text name;        // ".pragma"
  List<Text> args;  // token texts after the name, punctuation included
  // .section { ... }: its lines, each from its first token to its last (section_lines()).
  List<SectionRun> body;
  SourceLoc loc;
  SourceLoc end;  // a .section's closing '}' (comments before it stay inside)
  // Bodies are equal when their lines are, however they were grouped into runs.
  bool operator==(const Directive& o) const;
};

// Calls f(Text line) for each line of a .section body, in order.
template <typename F>
void for_each_section_line(const Directive& d, F&& f) {
  for (const SectionRun& run : d.body) {
    if (!run.many_lines) {
      f(run.text);
      continue;
    }
    std::string_view rest = run.text;
    while (true) {
      size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      size_t b = line.find_first_not_of(" \t\r");
      size_t e = line.find_last_not_of(" \t\r");
      f(b == std::string_view::npos ? line.substr(0, 0) : line.substr(b, e - b + 1));
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
  }
}
std::vector<Text> section_lines(const Directive& d);

struct Declarator {
  Text name;
  std::optional<uint32_t> range;            // %r<10>
  List<std::optional<uint64_t>> dims;       // a[4][8]; nullopt for a[]
  Opt<Operand> init;                        // = 42, = {1, 2}, = generic(a)
  SourceLoc loc;
  bool operator==(const Declarator& o) const {
    return name == o.name && range == o.range && dims == o.dims && init == o.init;
  }
};

// A variable, register, or parameter declaration.
struct VarDecl {
  List<Text> linkage;  // .visible .extern .weak .common
  Text space;          // .reg .global .shared .const .local .param .tex
  List<Text> attrs;    // .attribute(...) words, kept verbatim
  uint32_t align = 0;  // 0: none given
  uint32_t vec = 0;    // .v2 / .v4 / .v8: 2, 4, 8
  Text type;           // .b32, .pred, .texref, ...
  // Parameter pointer attributes (.param .u64 .ptr .global .align 16 p).
  bool ptr = false;
  Text ptr_space;
  uint32_t ptr_align = 0;
  List<Declarator> names;
  SourceLoc loc;
  bool operator==(const VarDecl& o) const {
    return linkage == o.linkage && space == o.space && attrs == o.attrs && align == o.align && vec == o.vec &&
           type == o.type && ptr == o.ptr && ptr_space == o.ptr_space && ptr_align == o.ptr_align && names == o.names;
  }
};

struct Guard {
  Text reg;
  bool negated = false;
  SourceLoc loc;
  bool operator==(const Guard& o) const { return reg == o.reg && negated == o.negated; }
};

struct Instruction {
  std::optional<Guard> guard;
  Text opcode;             // "ld"
  List<Text> mods;         // {".global", ".v4", ".f32"}
  List<Operand> operands;
  SourceLoc loc;           // the opcode
  bool operator==(const Instruction& o) const {
    return guard == o.guard && opcode == o.opcode && mods == o.mods && operands == o.operands;
  }
  std::string full_opcode() const;  // "ld.global.v4.f32"
  // The opcode and its modifiers as one view into the source when they stand there unbroken
  // (as written, "ld.global.v4.f32"), else empty.
  std::string_view spelling() const;
  bool has_mod(std::string_view m) const;
};

struct Label {
  Text name;
  SourceLoc loc;
  bool operator==(const Label& o) const { return name == o.name; }
};

struct Statement;
struct Block {
  List<Statement> stmts;
  SourceLoc loc;  // '{'
  SourceLoc end;  // '}' (comments before it stay inside)
  bool operator==(const Block& o) const;
};

// One statement of a block: a pointer to its node in the Module's arena. (Held in place, the
// largest node would set the size of every statement: most of a module's statements are
// instructions and .loc lines, and a -G module has hundreds of thousands.)
struct Statement {
  std::variant<const Instruction*, const Label*, const VarDecl*, const Directive*, const Block*> node;

  // A statement holding a copy of `n`, made in `arena`.
  template <typename T>
  static Statement of(Arena& arena, const T& n) {
    return Statement{arena.copy_array(&n, 1)};
  }
  // The node when it is a T, else nullptr.
  template <typename T>
  const T* get_if() const {
    auto* p = std::get_if<const T*>(&node);
    return p ? *p : nullptr;
  }
  template <typename T>
  bool is() const {
    return std::holds_alternative<const T*>(node);
  }
  // f(node) with the node's own type.
  template <typename F>
  decltype(auto) visit(F&& f) const {
    return std::visit([&](auto* n) -> decltype(auto) { return f(*n); }, node);
  }
  // Equal nodes, not equal pointers.
  bool operator==(const Statement& o) const;
};

struct Function {
  List<Text> linkage;       // .visible .extern .weak
  bool is_entry = false;
  List<Text> attrs;         // .attribute(...) words, kept verbatim
  List<VarDecl> rets;       // .func (.param .b32 r) f(...)
  bool has_ret_list = false;
  Text name;
  List<VarDecl> params;
  bool has_param_list = false;
  List<Directive> perf;     // .maxntid 256, 1, 1 / .noreturn / .pragma "..."
  std::optional<Block> body;  // nullopt for a declaration
  SourceLoc loc;            // the name
  SourceLoc start;          // its first word (linkage, .entry or .func)
  bool operator==(const Function& o) const {
    return linkage == o.linkage && is_entry == o.is_entry && attrs == o.attrs && rets == o.rets &&
           has_ret_list == o.has_ret_list && name == o.name && params == o.params &&
           has_param_list == o.has_param_list && perf == o.perf && body == o.body;
  }
};

struct TopItem {
  std::variant<Directive, VarDecl, Function> node;
  bool operator==(const TopItem&) const = default;
};

// A comment, kept beside the tree rather than in it: the parser and the checks never see
// comments, but `fmt` must put them back (a candidate's launch spec lives in `// @launch`
// lines). The lexer records them as it skips them.
struct Comment {
  Text text;              // "// @launch ..." or "/* ... */", as written (a line comment without its line end)
  SourceLoc loc;          // its first character
  bool own_line = false;  // only blanks before it on its line
};

static_assert(std::is_trivially_copyable_v<Statement> && std::is_trivially_destructible_v<TopItem> &&
                  std::is_trivially_copyable_v<Comment>,
              "AST nodes live in an arena and are never destroyed");

// A parsed module. It owns its nodes and the text they view (a copy of the source, unless the
// parser was lent the text: ParseOptions::borrow_text), so it can be moved but not copied;
// compare modules with ==, which ignores locations and comments.
class Module {
 public:
  Module() : arena_(std::make_unique<Arena>()) {}
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;
  bool operator==(const Module& o) const { return items == o.items; }

  List<TopItem> items;
  List<Comment> comments;  // in source order
  Text source;             // the text it was parsed from (its copy, or the lent text)

  // Header, read from the items (nullptr / "" when absent).
  const Directive* version() const;
  const Directive* target() const;
  std::string version_text() const;               // "8.0" or ""
  std::vector<std::string> target_names() const;  // {"sm_90a"} (options like "debug" included)
  // ".target sm_90, debug", as nvcc -G writes it: ptxas assembles such a module only at -O0
  // ("Optimized debugging not supported").
  bool targets_debug() const;

  // Storage for nodes and text: the parser and rewrites allocate here.
  Arena& arena() { return *arena_; }
  Text keep(std::string_view s) { return arena_->copy(s); }
  template <typename T>
  List<T> keep(const std::vector<T>& v) {
    return List<T>(arena_->copy_array(v.data(), v.size()), v.size());
  }
  List<Text> keep_words(const std::vector<std::string>& words);

 private:
  std::unique_ptr<Arena> arena_;
};

inline bool Block::operator==(const Block& o) const { return stmts == o.stmts; }

inline bool Statement::operator==(const Statement& o) const {
  if (node.index() != o.node.index()) return false;
  return visit([&](const auto& n) {
    using T = std::decay_t<decltype(n)>;
    return n == *o.get_if<T>();
  });
}

// The value of an integer literal as PTX writes it (decimal, 0x hex, 0b binary, a leading 0 for
// octal, an optional U suffix; no sign), or nullopt when it is not one or exceeds 64 bits.
std::optional<uint64_t> integer_literal_value(std::string_view text);

// Walks every statement in a block, nested blocks included, in source order.
template <typename F>
void for_each_statement(const Block& b, F&& f) {
  for (auto& s : b.stmts) {
    f(s);
    if (auto* inner = s.get_if<Block>()) for_each_statement(*inner, f);
  }
}

}  // namespace ptxforge::ptx
