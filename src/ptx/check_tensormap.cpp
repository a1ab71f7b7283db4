// Operand and modifier rules of tensormap.cp_fenceproxy and tensormap.replace: the fixed
// modifiers, the field types and the immediates each field takes. Confirmed against ptxas
// 13.0 by rules_async_test.cpp (TensormapOperands).
#include <algorithm>

#include "ptx/check_async_internal.h"

namespace ptxforge::ptx::async_rules {

//   [global], [shared], 128
void check_cp_fenceproxy(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  static constexpr std::string_view kTakes[] = {".global", ".shared::cta", ".tensormap::generic", ".release", ".cta",
                                                ".cluster", ".gpu", ".sys", ".sync", ".aligned"};
  static constexpr std::string_view kScopes[] = {".cta", ".cluster", ".gpu", ".sys"};
  std::string op = ins.full_opcode();
  int scopes = 0;
  for (size_t i = r.consumed; i < ins.mods.size(); ++i) {
    std::string_view m = ins.mods[i];
    if (std::find(std::begin(kTakes), std::end(kTakes), m) == std::end(kTakes)) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes no '{}'", op, m), "unknown-modifier");
      d.hint = "write tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
               "[gaddr], [saddr], 128;";
      return;
    }
    scopes += std::find(std::begin(kScopes), std::end(kScopes), m) != std::end(kScopes);
  }
  std::string_view first, second;
  for (size_t i = r.consumed; i < ins.mods.size(); ++i)
    if (is_space(ins.mods[i])) {
      if (first.empty()) first = ins.mods[i];
      else if (second.empty()) second = ins.mods[i];
    }
  std::string hint = "write tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
                     "[gaddr], [saddr], 128;";
  if (!first.empty() && !(first == ".global" && (second.empty() || second == ".shared::cta"))) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' copies .shared::cta to .global: write .global.shared::cta",
                                              ins.full_opcode()), "state-space");
    d.hint = hint;
    return;
  }
  require(ctx, ins, ".tensormap::generic", ": it fences between the generic and tensormap proxies", hint);
  require(ctx, ins, ".release", ": the copy is a release", hint);
  require(ctx, ins, ".sync", ": the warp executes it together", hint);
  require(ctx, ins, ".aligned", ": every thread of the warp executes it", hint);
  if (scopes != 1) {
    auto& d = at_opcode(ctx, ins,
                        scopes ? fmt::format("'{}' names more than one scope", op)
                               : fmt::format("'{}' needs a scope: .cta, .cluster, .gpu or .sys", op),
                        scopes ? "illegal-modifier" : "missing-modifier");
    d.hint = hint;
    return;
  }
  if (ins.operands.size() != 3) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes 3 operands ([global], [shared], 128), found {}", op,
                                              ins.operands.size()),
                        "operand-count");
    d.hint = hint;
    return;
  }
  for (size_t i = 0; i < 2; ++i) {
    const Operand& o = ins.operands[i];
    if (o.kind != Operand::Kind::address) {
      auto& d = at_operand(ctx, o, fmt::format("operand {} of '{}' is an address: write it in brackets", i + 1, op),
                           "operand-kind");
      d.hint = hint;
      return;
    }
    // The first is the tensor map in .global, the second its copy in .shared::cta.
    const Expr* base = address_base(o);
    const SymbolInfo* var = base ? ctx.scopes.find(base->text) : nullptr;
    if (var && var->kind == SymbolInfo::Kind::variable &&
        (i == 0 ? var->space == ".shared" : var->space == ".global")) {
      auto& d = at_operand(ctx, o, fmt::format("operand {} of '{}' is in {}, but '{}' is a {} variable", i + 1, op,
                                               i == 0 ? ".global" : ".shared::cta", base->text, var->space),
                           "state-space");
      d.hint = hint;
      return;
    }
  }
  if (ins.operands.size() == 3) {
    const Operand& o = ins.operands[2];
    auto v = literal(o);
    if (v && *v != 128) {
      auto& d = at_operand(ctx, o, fmt::format("'{}' copies a whole tensor map: the size is 128, not {}", ins.full_opcode(), *v),
                           "immediate-value");
      d.hint = "write 128";
    } else if (!v && reg_of(ctx, o)) {
      auto& d = at_operand(ctx, o, "the size of 'tensormap.cp_fenceproxy' must be the immediate 128", "operand-kind");
      d.hint = "write 128";
    }
  }
}

// tensormap.replace.tile.<field>.<space>.b1024.<type> [tmap], {ordinal,} value
void check_tensormap_replace(CheckContext& ctx, const Instruction& ins) {
  static constexpr std::string_view kOrdinal[] = {".global_dim", ".global_stride", ".element_stride", ".box_dim"};
  static constexpr std::string_view kImmediate[] = {".elemtype", ".interleave_layout", ".swizzle_mode", ".fill_mode",
                                                    ".swizzle_atomicity"};
  static constexpr std::string_view kOther[] = {".global_address", ".rank"};
  std::string op = ins.full_opcode();
  std::string_view field;
  bool ordinal = false, immediate = false;
  for (auto& m : ins.mods) {
    for (auto f : kOrdinal) if (m == f) field = m, ordinal = true;
    for (auto f : kImmediate) if (m == f) field = m, immediate = true;
    for (auto f : kOther) if (m == f) field = m;
  }
  std::string hint = "write tensormap.replace.tile.global_address.global.b1024.b64 [tmap], %rd;";
  for (size_t i = 0; i < ins.operands.size(); ++i) {
    const Operand& o = ins.operands[i];
    if ((i == 0) == (o.kind == Operand::Kind::address)) continue;
    auto& d = at_operand(ctx, o,
                         i == 0 ? fmt::format("'{}' writes the tensor map at an address: the first operand is [tmap]", op)
                                : fmt::format("operand {} of '{}' is a value (a register or an immediate), not an address",
                                              i + 1, op),
                         "operand-kind");
    d.hint = hint;
    return;
  }
  require(ctx, ins, ".tile", ": the tensor-map mode", hint);
  require(ctx, ins, ".b1024", ": the size of the tensor map", hint);
  if (field.empty()) {  // ptxas: "Illegal modifier '' for instruction 'tensormap.replace'"
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' names no field to replace", op), "missing-modifier");
    d.hint = "name the field after .tile: .global_address, .rank, .box_dim, .global_dim, .global_stride, "
             ".element_stride, .elemtype, .interleave_layout, .swizzle_mode, .swizzle_atomicity or .fill_mode";
    return;
  }
  std::string_view want = field == ".global_address" || field == ".global_stride" ? ".b64" : ".b32";
  std::string_view type = ins.mods.empty() ? "" : ins.mods.back();
  if ((type == ".b32" || type == ".b64") && type != want) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': the field {} is {}, not {}", op, field, want, type), "illegal-modifier");
    d.hint = fmt::format("write .b1024{}", want);
  } else if (type != ".b32" && type != ".b64") {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs the field's type ({}) after .b1024", op, want), "missing-type");
    d.hint = fmt::format("write .b1024{}", want);
    return;
  }
  size_t want_ops = ordinal ? 3 : 2;
  if (ins.operands.size() != want_ops) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes {} operands, found {}", op, want_ops, ins.operands.size()),
                        "operand-count");
    d.hint = ordinal ? "operands: [tmap], ordinal (0..4, an immediate), new value" : "operands: [tmap], new value";
    return;
  }
  if (const SymbolInfo* s = reg_of(ctx, ins.operands.back());
      s && !s->vec && type_bits(s->type) != (want == ".b64" ? 64 : 32)) {
    auto& d = at_operand(ctx, ins.operands.back(), fmt::format("the new value of {} is {}, but '{}' is {}", field, want,
                                                               ins.operands.back().expr.text, s->type),
                         "operand-type");
    d.hint = fmt::format("pass a {} register", want);
  }
  if (ordinal) {
    const Operand& o = ins.operands[1];
    auto v = literal(o);
    if (!v && reg_of(ctx, o)) {
      auto& d = at_operand(ctx, o, fmt::format("the dimension ordinal of '{}' must be an immediate", op), "operand-kind");
      d.hint = "write the dimension as a constant 0..4";
    } else if (v && (*v < 0 || *v > 4)) {
      auto& d = at_operand(ctx, o, fmt::format("the dimension ordinal of '{}' is {}: tensors have dimensions 0..4", op, *v),
                           "immediate-value");
      d.hint = "write the dimension as a constant 0..4";
    }
  }
  if (immediate) {
    const Operand& o = ins.operands[1];
    auto v = literal(o);
    if (!v && reg_of(ctx, o)) {
      auto& d = at_operand(ctx, o, fmt::format("the new value of {} in '{}' must be an immediate", field, op), "operand-kind");
      d.hint = "write the enumerator's number, e.g. 3 for 128-byte swizzle";
    } else if (v) {
      // The enumerations' ranges (ptxas: "expected to be in range [0..3] when .swizzle_mode ...").
      int64_t top = field == ".swizzle_mode" ? 3 : field == ".interleave_layout" ? 2 : field == ".fill_mode" ? 1 : -1;
      if (top >= 0 && (*v < 0 || *v > top)) {
        auto& d = at_operand(ctx, o, fmt::format("{} {} is out of range 0..{}", field.substr(1), *v, top), "immediate-value");
        d.hint = field == ".swizzle_mode" ? "0: none, 1: 32B, 2: 64B, 3: 128B"
                 : field == ".interleave_layout" ? "0: none, 1: 16B, 2: 32B"
                                                 : "0: zeros, 1: NaN for out-of-bound elements";
      }
    }
  }
}

// cvt to and from the narrow floats: packed fp8/fp6/fp4 results round to nearest (.rn) only,

}  // namespace ptxforge::ptx::async_rules
