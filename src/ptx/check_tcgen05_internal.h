// The tcgen05 rule engine shared by check_tcgen05.cpp (modifier groups, operand helpers,
// alloc, ld/st and the dispatch) and check_tcgen05_mma.cpp (mma, commit, cp, the one-cta_group
// rule and the per-target gaps). Internal to the validator; the rules were one file until it
// grew past what one reads at a sitting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ptx/check_context.h"
#include "util/text.h"

namespace ptxforge::ptx::tcgen05_rules {

struct Group {
  std::string_view what;    // "cta_group", "shape", ...
  std::string_view values;  // space separated
  bool required = false;
};

inline bool in_list(std::string_view list, std::string_view m) {
  for (auto v : split(list, ' '))
    if (!v.empty() && v == m) return true;
  return false;
}

// The modifier groups of each form, by the word after "tcgen05." (nullptr: not a known form).
const std::vector<Group>* groups_of(std::string_view sub);
// Any modifier of any tcgen05 form.
bool known_anywhere(std::string_view m);

// One instruction under judgement: its form, the modifier chosen per group, and the checks.
struct Checker {
  CheckContext& ctx;
  const Instruction& ins;
  std::string_view sub;
  std::string name;  // "tcgen05.ld"
  std::vector<std::string_view> chosen = {};  // per group: the modifier written, "" if none
  const std::vector<Group>* groups = nullptr;
  Diagnostic& at_opcode(std::string msg, const char* id, std::string hint) {
    auto& d = ctx.diags.error(ins.loc, std::move(msg), id);
    d.length = static_cast<uint32_t>(ins.full_opcode().size());
    d.hint = std::move(hint);
    return d;
  }
  Diagnostic& at(const Operand& o, std::string msg, const char* id, std::string hint) {
    auto& d = ctx.diags.error(o.loc, std::move(msg), id);
    d.hint = std::move(hint);
    return d;
  }
  std::string_view get(std::string_view what) const {
    for (size_t i = 0; i < groups->size(); ++i)
      if ((*groups)[i].what == what) return chosen[i];
    return {};
  }
  bool has(std::string_view m) const { return ins.has_mod(m); }

  // A fix-it that appends `mod` to the opcode, when the opcode is written unbroken.
  void append_fixit(Diagnostic& d, std::string_view mod);

  // Classifies the modifiers into groups; false when one was unknown, duplicated or missing.
  bool modifiers(size_t first, bool strict);
  std::string_view find_anchor() const;

  // ---- operands ----
  const SymbolInfo* reg(const Operand& o) const {
    if (o.kind != Operand::Kind::expr || o.expr.kind != Expr::Kind::name) return nullptr;
    const SymbolInfo* s = ctx.scopes.find(o.expr.text);
    return s && s->kind == SymbolInfo::Kind::reg ? s : nullptr;
  }
  static bool is_literal(const Operand& o) {
    const Expr* e = &o.expr;
    if (o.kind != Operand::Kind::expr) return false;
    if (e->kind == Expr::Kind::unary && e->text == "-" && e->args.size() == 1) e = &e->args[0];
    return e->kind == Expr::Kind::integer;
  }
  static std::optional<int64_t> literal(const Operand& o) {
    if (!is_literal(o)) return std::nullopt;
    bool neg = o.expr.kind == Expr::Kind::unary;
    auto v = integer_literal_value(neg ? o.expr.args[0].text : o.expr.text);
    if (!v) return std::nullopt;
    return neg ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
  }
  bool count(size_t lo, size_t hi, std::string_view form);

  // An address operand [..]; a tensor-memory address holds a 32-bit register.
  void address(const Operand& o, std::string_view role, bool tmem32);
  void not_address(const Operand& o, std::string_view role);

  // A register or immediate of `bits` (an integer register: ptxas refuses float ones here).
  void scalar(const Operand& o, std::string_view role, int bits, bool allow_float = false);
  void predicate(const Operand& o, std::string_view role);

  // A {vector} of `want` 32-bit registers (immediates and _ also allowed where ptxas takes them).
  void vector(const Operand& o, std::string_view role, size_t want, std::string why);
  void run_alloc();
  void run_ld_st();
  void run_mma();

  // Parts of tcgen05.mma that some tcgen05 targets lack. Each list names only the targets on
  // which ptxas 13.0 was seen to refuse the feature (a target not named is not judged).
  void lacks(std::string_view list, std::string what, std::string_view where);
  void mma_targets(std::string_view kind, std::string_view sv, bool sp);

  // scale-input-d: not on sm_110a/sm_110f.
  void scale_target();

  // A function's tcgen05 instructions all use .cta_group::1 or all .cta_group::2 (ptxas refuses
  // the mix for the whole function, without a line; the first that differs is the line here).
  void one_cta_group();
  void run_commit();
  void run_cp();
};

}  // namespace ptxforge::ptx::tcgen05_rules
