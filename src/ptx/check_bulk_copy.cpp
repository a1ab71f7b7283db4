// Operand and modifier rules of the plain bulk copies (cp.async.bulk, cp.reduce.async.bulk,
// cp.async.bulk.prefetch: no tensor map): directions and completion mechanisms, multicast and
// byte masks, the size operand. Confirmed against ptxas 13.0 by rules_forms_test.cpp
// (RuleAgreement.BulkCopies).
#include "ptx/check_async_internal.h"

namespace ptxforge::ptx::async_rules {

// ---- cp.async.bulk, cp.reduce.async.bulk, cp.async.bulk.prefetch (no tensor map) ---------------
// The plain bulk copies move `size` bytes (a multiple of 16, a 32-bit register or immediate):
//   global -> .shared::cluster / .shared::cta and .shared::cta -> .shared::cluster complete on an
//     mbarrier: [dst], [src], size, [mbar] {, ctaMask (.multicast::cluster, from global into
//     .shared::cluster only)} {, cache-policy}
//   .shared::cta -> global completes in a bulk group: [dst], [src], size {, cache-policy} {, byteMask}
// A reduction takes the same two directions with an operation; a prefetch is .L2.global
// [src], size {, cache-policy}. ptxas 13.0: "State space incorrect", "Illegal modifier",
// ".completion_mechanism modifier required", "Arguments mismatch", "expected to be multiple of 16".
void check_bulk_copy(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  bool prefetch = fam == "cp.async.bulk.prefetch", reduce = fam == "cp.reduce.async.bulk";
  std::string op = ins.full_opcode();
  std::string_view dst, src, redop;
  for (size_t i = r.consumed; i < ins.mods.size(); ++i) {
    std::string_view m = ins.mods[i];
    if (is_redop(m)) redop = m;
    if (!is_space(m)) continue;
    if (dst.empty()) dst = m;
    else if (src.empty()) src = m;
  }
  bool mbar = ins.has_mod(".mbarrier::complete_tx::bytes"), group = ins.has_mod(".bulk_group");
  bool multicast = ins.has_mod(".multicast::cluster"), hint_op = ins.has_mod(".L2::cache_hint");
  bool mask = ins.has_mod(".cp_mask");
  auto refuse = [&](std::string msg, const char* id, std::string hint) {
    auto& d = at_opcode(ctx, ins, std::move(msg), id);
    d.hint = std::move(hint);
  };
  if (ins.has_mod(".cta_group::1") || ins.has_mod(".cta_group::2")) {
    refuse(fmt::format("'{}': .cta_group is for tensor loads (cp.async.bulk.tensor), not for a plain bulk copy", op),
           "illegal-modifier", "drop the .cta_group modifier");
    return;
  }
  size_t want_ops = 0;
  std::string form;
  if (prefetch) {
    if (!ins.has_mod(".L2") || dst != ".global" || !src.empty()) {
      refuse(fmt::format("'{}': a bulk prefetch is written .L2.global", op), ins.has_mod(".L2") ? "state-space" : "missing-modifier",
             "write cp.async.bulk.prefetch.L2.global [src], size;");
      return;
    }
    want_ops = 2 + hint_op;
    form = "[src], size";
  } else {
    if (dst.empty() || src.empty()) return;
    bool to_global = dst == ".global" && src == ".shared::cta";
    bool from_global = !reduce && src == ".global" && (dst == ".shared::cluster" || dst == ".shared::cta");
    bool cluster = dst == ".shared::cluster" && src == ".shared::cta";
    if (!to_global && !from_global && !cluster) {
      refuse(fmt::format("'{}' {} {} -> {}: a bulk {} goes {}", op, reduce ? "reduces" : "copies", src, dst,
                         reduce ? "reduction" : "copy",
                         reduce ? ".shared::cta -> .global or .shared::cta -> .shared::cluster"
                                : ".global -> .shared::cluster/.shared::cta, .shared::cta -> .global or .shared::cta -> "
                                  ".shared::cluster"),
             "state-space", "name the destination space first, then the source: .shared::cluster.global");
      return;
    }
    if (reduce && redop.empty()) {
      refuse(fmt::format("'{}' names no reduction operation", op), "missing-modifier",
             "write one of .add .min .max .inc .dec .and .or .xor before the type");
      return;
    }
    const char* want = to_global ? ".bulk_group" : ".mbarrier::complete_tx::bytes";
    if (to_global ? mbar : group) {
      refuse(fmt::format("'{}': a bulk copy into {} completes with {}", op, dst, want), "illegal-modifier",
             fmt::format("write {}", want));
      return;
    }
    if (!(to_global ? group : mbar)) {
      refuse(fmt::format("'{}' names no completion mechanism: a bulk copy into {} needs {}", op, dst, want),
             "missing-modifier", fmt::format("write {}", want));
      return;
    }
    if (multicast && !(from_global && dst == ".shared::cluster")) {
      refuse(fmt::format("'{}': .multicast::cluster is for copies from .global into .shared::cluster", op),
             "illegal-modifier", "drop .multicast::cluster and its ctaMask");
      return;
    }
    if (mask && !to_global) {
      refuse(fmt::format("'{}': .cp_mask is for copies into .global", op), "illegal-modifier", "drop .cp_mask");
      return;
    }
    want_ops = to_global ? 3 + hint_op + mask : 4 + multicast + hint_op;
    form = to_global ? "[dst], [src], size" : "[dst], [src], size, [mbar]";
    if (multicast) form += ", ctaMask";
    if (hint_op) form += ", cache-policy";
    if (mask) form += ", byteMask";
  }
  if (ins.operands.size() != want_ops) {
    refuse(fmt::format("'{}' takes {} operands, found {}", op, want_ops, ins.operands.size()), "operand-count",
           fmt::format("operands: {}", form));
    return;
  }
  size_t size_at = prefetch ? 1 : 2;
  // The data operands are addresses in brackets (ptxas also takes the mbarrier as a bare
  // register); what follows the size is a register or immediate, never an address.
  for (size_t i = 0; i < want_ops; ++i) {
    bool address = i < size_at;
    bool value = i > size_at && !(i == 3 && form.find("[mbar]") != std::string::npos);
    const Operand& o = ins.operands[i];
    if (value && o.kind == Operand::Kind::address) {
      auto& d = at_operand(ctx, o, fmt::format("operand {} of '{}' is a register, not an address", i + 1, op),
                           "operand-kind");
      d.hint = fmt::format("operands: {}", form);
      return;
    }
    if (address && o.kind != Operand::Kind::address) {
      auto& d = at_operand(ctx, o, fmt::format("operand {} of '{}' is an address: write it in brackets", i + 1, op),
                           "operand-kind");
      d.hint = fmt::format("operands: {}", form);
      return;
    }
  }
  const Operand& size = ins.operands[size_at];
  if (auto v = literal(size); v && (*v < 0 || *v % 16 != 0)) {
    auto& d = at_operand(ctx, size, fmt::format("'{}' moves whole 16-byte units: size {} is not a multiple of 16", op, *v),
                         "immediate-value");
    d.hint = "round the size up to a multiple of 16 bytes";
  } else if (const SymbolInfo* s = reg_of(ctx, size); s && (!is_int32(s->type))) {
    auto& d = at_operand(ctx, size, fmt::format("the size of '{}' is a 32-bit integer, but '{}' is {}", op,
                                                size.expr.text, s->type),
                         "operand-type");
    d.hint = "pass the byte count in a .b32 register";
  }
  size_t next = prefetch ? 2 : 3 + !(dst == ".global");
  if (multicast) {
    const Operand& o = ins.operands[next++];
    if (const SymbolInfo* s = reg_of(ctx, o); s && !is_int16(s->type)) {
      auto& d = at_operand(ctx, o, fmt::format("ctaMask of '{}' is a 16-bit mask, but '{}' is {}", op, o.expr.text, s->type),
                           "operand-type");
      d.hint = "pass the mask in a .b16 register";
    }
  }
  if (hint_op) {
    const Operand& o = ins.operands[next++];
    if (const SymbolInfo* s = reg_of(ctx, o); s && !is_int64(s->type)) {
      auto& d = at_operand(ctx, o, fmt::format("the cache policy of '{}' is 64-bit, but '{}' is {}", op, o.expr.text, s->type),
                           "operand-type");
      d.hint = "create it with createpolicy and pass that .b64 register";
    }
  }
  if (mask) {
    const Operand& o = ins.operands[next];
    if (const SymbolInfo* s = reg_of(ctx, o); s && !is_int16(s->type)) {
      auto& d = at_operand(ctx, o, fmt::format("the byte mask of '{}' is 16-bit, but '{}' is {}", op, o.expr.text, s->type),
                           "operand-type");
      d.hint = "pass the mask in a .b16 register";
    }
  }
}

}  // namespace ptxforge::ptx::async_rules
