// What a name refers to while the validator walks a module: module variables and functions,
// a function's parameters and labels, and the registers and locals of each nested block,
// including `%r<N>` ranges. Lookups go from the innermost block outwards.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/ast.h"
#include "util/flat_map.h"

namespace ptxforge::ptx {

struct SymbolInfo {
  enum class Kind : uint8_t { reg, variable, param, function, label, prototype };
  Kind kind = Kind::reg;
  const VarDecl* decl = nullptr;   // reg / variable / param
  const Function* fn = nullptr;    // function
  std::string_view space;          // .reg .global .shared .param ...
  std::string_view type;           // .b32 ...
  uint32_t vec = 0;
  SourceLoc loc;
};

class Scope {
 public:
  // Adds a name; returns the earlier declaration when the name is already in this scope.
  // Names are views into the module, which outlives every scope. A returned pointer is valid
  // until the next add to the same scope.
  const SymbolInfo* add(std::string_view name, SymbolInfo info);
  // Adds %prefix<count>; returns an earlier declaration it clashes with in this scope.
  const SymbolInfo* add_range(std::string_view prefix, uint32_t count, SymbolInfo info);
  const SymbolInfo* find(std::string_view name) const;

 private:
  FlatMap<std::string_view, SymbolInfo> names_;
  struct Range {
    std::string_view prefix;
    uint32_t count;
    SymbolInfo info;
  };
  std::vector<Range> ranges_;
};

class ScopeStack {
 public:
  void push() {
    forget();
    scopes_.emplace_back();
  }
  void pop() {
    forget();
    scopes_.pop_back();
  }
  // A scope to add to: what earlier lookups found may change.
  Scope& top() {
    forget();
    return scopes_.back();
  }
  Scope& module() {
    forget();
    return scopes_.front();
  }
  const Scope& at(size_t i) const { return scopes_[i]; }
  const SymbolInfo* find(std::string_view name) const;
  size_t depth() const { return scopes_.size(); }

 private:
  // The checks of one instruction look its names up several times each (names, operand types,
  // address widths, state spaces), always through the same view into the source: recent
  // answers are kept by the view's address and length until the scopes can change.
  struct Recent {
    const char* data = nullptr;
    size_t size = 0;
    const SymbolInfo* found = nullptr;
  };
  void forget() {
    if (remembered_) recent_.fill(Recent{});
    remembered_ = false;
  }
  std::vector<Scope> scopes_;
  mutable std::array<Recent, 16> recent_{};
  mutable bool remembered_ = false;
};

// %tid, %ctaid.x, %clock64, WARP_SZ ... (components included).
bool is_special_register(std::string_view name);
// The type of a special register read by mov (".u32", ".u64"), or "" when unknown.
std::string_view special_register_type(std::string_view name);
// Reads that ptxas allows beyond the register's own width: %tid, %ntid, %ctaid and %nctaid
// components as 16-bit integers, %gridid as any 16-, 32- or 64-bit integer.
bool special_register_reads_as(std::string_view name, std::string_view type);
// %tid, %ntid, %ctaid, %nctaid and the cluster ones without a component: vectors of four.
bool is_vector_special_register(std::string_view name);
// %rax, %eax, %rsp ...: names a model borrows from x86 assembly.
bool is_x86_register(std::string_view name);

}  // namespace ptxforge::ptx
