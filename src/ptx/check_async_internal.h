// Shared pieces of the asynchronous-instruction rules (check_async_ops.cpp, check_wgmma.cpp,
// check_tma.cpp, check_tensormap.cpp): reading an immediate or a declared register behind an
// operand, and reporting at the opcode or at an operand. Internal to the validator; the rules
// were one file until it grew past what one reads at a sitting.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "ptx/check_context.h"
#include "util/text.h"

namespace ptxforge::ptx::async_rules {

inline std::optional<int64_t> literal(const Operand& o) {
  if (o.kind != Operand::Kind::expr) return std::nullopt;
  const Expr* e = &o.expr;
  bool negative = false;
  if (e->kind == Expr::Kind::unary && e->text == "-" && e->args.size() == 1) negative = true, e = &e->args[0];
  if (e->kind != Expr::Kind::integer) return std::nullopt;
  auto v = integer_literal_value(e->text);
  if (!v) return std::nullopt;
  return negative ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
}

// The declared register behind a plain `%name` operand (or `!%p`), else nullptr.
inline const SymbolInfo* reg_of(CheckContext& ctx, const Expr& e) {
  const Expr* x = &e;
  if (x->kind == Expr::Kind::unary && x->text == "!" && x->args.size() == 1) x = &x->args[0];
  // Registers need not start with '%': inline asm declares `.reg .pred p;` and uses `p`.
  if (x->kind != Expr::Kind::name || x->text.empty()) return nullptr;
  const SymbolInfo* s = ctx.scopes.find(x->text);
  return s && s->kind == SymbolInfo::Kind::reg ? s : nullptr;
}
inline const SymbolInfo* reg_of(CheckContext& ctx, const Operand& o) {
  return o.kind == Operand::Kind::expr ? reg_of(ctx, o.expr) : nullptr;
}

inline bool is_int64(std::string_view t) { return t == ".b64" || t == ".u64" || t == ".s64"; }
inline bool is_int32(std::string_view t) { return t == ".b32" || t == ".u32" || t == ".s32"; }
inline bool is_int16(std::string_view t) { return t == ".b16" || t == ".u16" || t == ".s16"; }

inline Diagnostic& at_opcode(CheckContext& ctx, const Instruction& ins, std::string msg, const char* id) {
  auto& d = ctx.diags.error(ins.loc, std::move(msg), id);
  d.length = static_cast<uint32_t>(ins.full_opcode().size());
  return d;
}
inline Diagnostic& at_operand(CheckContext& ctx, const Operand& o, std::string msg, const char* id) {
  auto& d = ctx.diags.error(o.loc, std::move(msg), id);
  d.length = o.kind == Operand::Kind::expr ? static_cast<uint32_t>(std::max<size_t>(o.expr.text.size(), 1)) : 1;
  return d;
}

inline void require(CheckContext& ctx, const Instruction& ins, std::string_view mod, const char* why, std::string hint) {
  if (ins.has_mod(mod)) return;
  auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs '{}'{}", ins.full_opcode(), mod, why), "missing-modifier");
  d.hint = std::move(hint);
}

// A state-space modifier of the bulk copies.
inline bool is_space(std::string_view m) { return m == ".global" || m == ".shared::cluster" || m == ".shared::cta"; }

// A reduction operation of cp.reduce.async.bulk{.tensor}.
inline bool is_redop(std::string_view m) {
  return m == ".add" || m == ".min" || m == ".max" || m == ".inc" || m == ".dec" || m == ".and" || m == ".or" ||
         m == ".xor";
}

// One rule set per instruction group, each in its own file.
void check_wgmma(CheckContext& ctx, const Instruction& ins, bool sparse);                                // check_wgmma.cpp
void check_tensor_copy(CheckContext& ctx, const Instruction& ins, const Resolved& r);         // check_tma.cpp
void check_bulk_copy(CheckContext& ctx, const Instruction& ins, const Resolved& r);           // check_bulk_copy.cpp
void check_cp_fenceproxy(CheckContext& ctx, const Instruction& ins, const Resolved& r);       // check_tensormap.cpp
void check_tensormap_replace(CheckContext& ctx, const Instruction& ins);                      // check_tensormap.cpp
// check_async_forms.cpp: modifiers written twice, type counts and .pred addresses in the
// families above; barrier.cluster, fence, mbarrier ordering and scope, clusterlaunchcontrol.
void check_async_forms(CheckContext& ctx, const Instruction& ins, const Resolved& r);

}  // namespace ptxforge::ptx::async_rules
