// The PTX abstract syntax tree. It keeps every construct the printer needs to reproduce a
// module that ptxas treats identically, and a source location on every node for diagnostics.
// Equality is structural and ignores locations, so print(parse(x)) can be compared with x.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "util/diagnostic.h"

namespace ptxforge::ptx {

// A constant or address expression: names, literals and operators, as written.
struct Expr {
  enum class Kind : uint8_t { name, integer, floating, string, unary, binary, ternary, call, paren };
  Kind kind = Kind::name;
  std::string text;        // the name, the literal, the operator, or the callee (generic(...))
  std::vector<Expr> args;  // operands of unary/binary/ternary/call/paren
  SourceLoc loc;
  bool operator==(const Expr&) const = default;
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
  Expr expr;                   // for Kind::expr
  std::vector<Operand> elems;  // vector elements, address parts, list items
  SourceLoc loc;
  bool operator==(const Operand&) const = default;
};

// A directive kept as its words: .loc, .pragma, .file, perf directives, .section lines, ...
struct Directive {
  std::string name;               // ".pragma"
  std::vector<std::string> args;  // token texts after the name, punctuation included
  std::vector<std::vector<std::string>> body;  // .section { ... }: one entry per line
  SourceLoc loc;
  bool operator==(const Directive&) const = default;
};

struct Declarator {
  std::string name;
  std::optional<uint32_t> range;                 // %r<10>
  std::vector<std::optional<uint64_t>> dims;     // a[4][8]; nullopt for a[]
  std::optional<Operand> init;                   // = 42, = {1, 2}, = generic(a)
  SourceLoc loc;
  bool operator==(const Declarator&) const = default;
};

// A variable, register, or parameter declaration.
struct VarDecl {
  std::vector<std::string> linkage;  // .visible .extern .weak .common
  std::string space;                 // .reg .global .shared .const .local .param .tex
  std::vector<std::string> attrs;    // .attribute(...) words, kept verbatim
  uint32_t align = 0;                // 0: none given
  uint32_t vec = 0;                  // .v2 / .v4 / .v8: 2, 4, 8
  std::string type;                  // .b32, .pred, .texref, ...
  // Parameter pointer attributes (.param .u64 .ptr .global .align 16 p).
  bool ptr = false;
  std::string ptr_space;
  uint32_t ptr_align = 0;
  std::vector<Declarator> names;
  SourceLoc loc;
  bool operator==(const VarDecl&) const = default;
};

struct Guard {
  std::string reg;
  bool negated = false;
  SourceLoc loc;
  bool operator==(const Guard&) const = default;
};

struct Instruction {
  std::optional<Guard> guard;
  std::string opcode;              // "ld"
  std::vector<std::string> mods;   // {".global", ".v4", ".f32"}
  std::vector<Operand> operands;
  SourceLoc loc;                   // the opcode
  bool operator==(const Instruction&) const = default;
  std::string full_opcode() const;  // "ld.global.v4.f32"
  bool has_mod(std::string_view m) const;
};

struct Label {
  std::string name;
  SourceLoc loc;
  bool operator==(const Label&) const = default;
};

struct Statement;
struct Block {
  std::vector<Statement> stmts;
  SourceLoc loc;
  bool operator==(const Block&) const;
};

struct Statement {
  std::variant<Instruction, Label, VarDecl, Directive, Block> node;
  bool operator==(const Statement&) const = default;
};

struct Function {
  std::vector<std::string> linkage;  // .visible .extern .weak
  bool is_entry = false;
  std::vector<std::string> attrs;    // .attribute(...) words, kept verbatim
  std::vector<VarDecl> rets;         // .func (.param .b32 r) f(...)
  bool has_ret_list = false;
  std::string name;
  std::vector<VarDecl> params;
  bool has_param_list = false;
  std::vector<Directive> perf;       // .maxntid 256, 1, 1 / .noreturn / .pragma "..."
  std::optional<Block> body;         // nullopt for a declaration
  SourceLoc loc;                     // the name
  bool operator==(const Function&) const = default;
};

struct TopItem {
  std::variant<Directive, VarDecl, Function> node;
  bool operator==(const TopItem&) const = default;
};

struct Module {
  std::vector<TopItem> items;
  bool operator==(const Module&) const = default;

  // Header, read from the items (nullptr / "" when absent).
  const Directive* version() const;
  const Directive* target() const;
  std::string version_text() const;              // "8.0" or ""
  std::vector<std::string> target_names() const;  // {"sm_90a"} (options like "debug" included)
};

inline bool Block::operator==(const Block& o) const { return stmts == o.stmts; }

// Walks every statement in a block, nested blocks included, in source order.
template <typename F>
void for_each_statement(const Block& b, F&& f) {
  for (auto& s : b.stmts) {
    f(s);
    if (auto* inner = std::get_if<Block>(&s.node)) for_each_statement(*inner, f);
  }
}

}  // namespace ptxforge::ptx
