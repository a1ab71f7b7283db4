// Operand and modifier rules of the tensor copies (cp.async.bulk.tensor, and the reduction and
// prefetch forms): directions and state spaces, completion mechanisms, coordinate vectors
// against .Nd and the gather4/scatter4 rows, im2col offsets, the multicast mask, .cta_group and
// the cache policy. Confirmed against ptxas 13.0 by rules_async_test.cpp.
#include <vector>

#include "ptx/check_async_internal.h"

namespace ptxforge::ptx::async_rules {

// ---- cp.async.bulk.tensor, cp.reduce.async.bulk.tensor, cp.async.bulk.prefetch.tensor -------
// A tensor copy goes one of two ways: a load global -> .shared::cluster / .shared::cta completing
// on an mbarrier, a store .shared::cta -> global completing in a bulk group (ptxas: "State space
// incorrect", ".completion_mechanism modifier required", "Illegal modifier"). A reduction is a
// store with an operation (.add, .min, ...); a prefetch reads global into L2 (.L2.global) and
// completes nothing. Operands:
//   load:          [dst], [tmap, {coords}], [mbar] {, {im2col offsets}} {, ctaMask} {, cache-policy}
//   store, reduce: [tmap, {coords}], [src] {, cache-policy}
//   prefetch:      [tmap, {coords}] {, {im2col offsets}} {, cache-policy}
// Every form names its dimension count (".dim modifier required"). Coordinates: one 32-bit value
// per dimension (.tile, .im2col), five for .tile::gather4 (loads and prefetches) and
// .tile::scatter4 (stores), which are 2-dimensional only; im2col offsets: dims - 2 16-bit values,
// .im2col from .3d up. .cta_group::N is for loads. The im2col::w forms' offsets are left alone.
namespace {
enum class TensorOp { copy, reduce, prefetch };
}  // namespace

void check_tensor_copy(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  TensorOp kind = fam == "cp.reduce.async.bulk.tensor" ? TensorOp::reduce
                  : fam == "cp.async.bulk.prefetch.tensor" ? TensorOp::prefetch : TensorOp::copy;
  std::string op = ins.full_opcode();
  int dims = 0;
  std::string_view dst, src, redop;
  for (size_t i = r.consumed; i < ins.mods.size(); ++i) {
    std::string_view m = ins.mods[i];
    if (m.size() == 3 && m[0] == '.' && m[1] >= '1' && m[1] <= '5' && m[2] == 'd') dims = m[1] - '0';
    if (is_redop(m)) redop = m;
    if (!is_space(m)) continue;
    if (dst.empty()) dst = m;
    else if (src.empty()) src = m;
  }
  // The reduction and prefetch rows do not list their modifiers: one outside every tensor form
  // is unknown (ptxas: "Unknown modifier", or a feature "not supported on .target").
  static constexpr std::string_view kKnown[] = {
      ".async", ".bulk", ".tensor", ".reduce", ".prefetch", ".1d", ".2d", ".3d", ".4d", ".5d", ".global",
      ".shared::cluster", ".shared::cta", ".tile", ".im2col", ".im2col_no_offs", ".tile::gather4", ".tile::scatter4",
      ".im2col::w", ".im2col::w::128", ".mbarrier::complete_tx::bytes", ".bulk_group", ".multicast::cluster",
      ".L2", ".L2::cache_hint", ".cta_group::1", ".cta_group::2", ".add", ".min", ".max", ".inc", ".dec", ".and",
      ".or", ".xor"};
  for (size_t i = r.consumed; i < ins.mods.size(); ++i) {
    bool known = false;
    for (auto k : kKnown) known |= ins.mods[i] == k;
    if (known) continue;
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' does not take the modifier '{}'", fam, ins.mods[i]),
                        "unknown-modifier");
    d.hint = fmt::format("see {}", manual_link(r.family->anchor));
    return;
  }
  const char* example = kind == TensorOp::reduce ? "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"
                        : kind == TensorOp::prefetch ? "cp.async.bulk.prefetch.tensor.2d.L2.global.tile"
                                                     : "cp.async.bulk.tensor.2d.shared::cluster.global.tile...";
  if (!dims) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' names no dimension count: a tensor copy needs one of .1d to .5d", op),
                        "missing-modifier");
    d.hint = fmt::format("write the tensor map's rank after the opcode, e.g. {}", example);
    return;
  }
  bool gather = ins.has_mod(".tile::gather4"), scatter = ins.has_mod(".tile::scatter4");
  bool hint_op = ins.has_mod(".L2::cache_hint"), im2col = ins.has_mod(".im2col");
  bool cta_group = ins.has_mod(".cta_group::1") || ins.has_mod(".cta_group::2");
  if ((gather || scatter) && dims != 2) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': {} works on 2-dimensional tensors only", op,
                                              gather ? ".tile::gather4" : ".tile::scatter4"),
                        "illegal-modifier");
    d.hint = "write .2d: four rows of one 2-dimensional tensor, given as {col, row0, row1, row2, row3}";
    return;
  }
  if (kind == TensorOp::prefetch) {
    if (!ins.has_mod(".L2") || !ins.has_mod(".global")) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs '{}': a tensor prefetch reads .global into the L2 cache", op,
                                                ins.has_mod(".L2") ? ".global" : ".L2"),
                          "missing-modifier");
      d.hint = fmt::format("write {} [tmap, {{...}}];", example);
      return;
    }
    if (scatter || cta_group) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}': a tensor prefetch does not take {}", op,
                                                scatter ? ".tile::scatter4" : ins.has_mod(".cta_group::1") ? ".cta_group::1" : ".cta_group::2"),
                          "illegal-modifier");
      d.hint = scatter ? "prefetch rows with .tile::gather4" : "drop the .cta_group modifier";
      return;
    }
  } else {
    if (dst.empty() || src.empty()) {  // "State space incorrect"
      auto& d = at_opcode(ctx, ins,
                          fmt::format("'{}' names {}: a tensor {} names where it writes and where it reads", op,
                                      dst.empty() && src.empty() ? "no state space" : "one state space",
                                      kind == TensorOp::reduce ? "reduction" : "copy"),
                          "state-space");
      d.hint = kind == TensorOp::reduce ? "write .global.shared::cta" : "write .shared::cluster.global for a load, "
                                                                        ".global.shared::cta for a store";
      return;
    }
    bool load_dir = kind == TensorOp::copy && src == ".global" && (dst == ".shared::cluster" || dst == ".shared::cta");
    bool store_dir = dst == ".global" && src == ".shared::cta";
    if (!load_dir && !store_dir) {
      auto& d = at_opcode(ctx, ins,
                          kind == TensorOp::reduce
                              ? fmt::format("'{}' reduces {} into {}: a tensor reduction reads .shared::cta and writes "
                                            ".global", op, src, dst)
                              : fmt::format("'{}' copies {} -> {}: a tensor copy loads .global into .shared::cluster "
                                            "or .shared::cta, or stores .shared::cta to .global", op, src, dst),
                          "state-space");
      d.hint = dst == ".global" || kind == TensorOp::reduce ? "the source is .shared::cta: write .global.shared::cta"
                                                            : "write .shared::cluster.global for a load";
      return;
    }
    if (kind == TensorOp::reduce && redop.empty()) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}' names no reduction operation", op), "missing-modifier");
      d.hint = fmt::format("write one of .add .min .max .inc .dec .and .or .xor: {}", example);
      return;
    }
  }
  bool load = kind == TensorOp::copy && src == ".global";
  bool store = kind != TensorOp::prefetch && !load;
  bool mbar = ins.has_mod(".mbarrier::complete_tx::bytes"), group = ins.has_mod(".bulk_group");
  bool multicast = ins.has_mod(".multicast::cluster");
  bool odd_mode = ins.has_mod(".im2col::w") || ins.has_mod(".im2col::w::128");
  if (kind == TensorOp::prefetch) {
    if (mbar || group || multicast) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}': a tensor prefetch completes nothing and multicasts nothing", op),
                          "illegal-modifier");
      d.hint = fmt::format("write {} [tmap, {{...}}];", example);
      return;
    }
  } else {
    const char* want = load ? ".mbarrier::complete_tx::bytes" : ".bulk_group";
    if (load ? group : mbar) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}': a tensor {} completes with {}, not {}", op,
                                                load ? "load" : "store", want,
                                                load ? ".bulk_group" : ".mbarrier::complete_tx::bytes"),
                          "illegal-modifier");
      d.hint = fmt::format("write {}", want);
      return;
    }
    if (!(load ? mbar : group)) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}' names no completion mechanism: a tensor {} needs {}", op,
                                                load ? "load" : kind == TensorOp::reduce ? "reduction" : "store", want),
                          "missing-modifier");
      d.hint = load ? "write ...global.tile.mbarrier::complete_tx::bytes [dst], [tmap, {...}], [mbar];"
                    : "write ...shared::cta.tile.bulk_group [tmap, {...}], [src]; then cp.async.bulk.commit_group";
      return;
    }
    if (multicast && !(load && dst == ".shared::cluster")) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}': .multicast::cluster is for loads into .shared::cluster", op),
                          "illegal-modifier");
      d.hint = "drop .multicast::cluster (and its ctaMask operand)";
      return;
    }
    if (store && cta_group) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}': .cta_group is for tensor loads (it names the CTA pair whose "
                                                "mbarrier completes), not for a store", op),
                          "illegal-modifier");
      d.hint = "drop the .cta_group modifier";
      return;
    }
    if ((store && gather) || (load && scatter)) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}': {} is a {} mode", op, gather ? ".tile::gather4" : ".tile::scatter4",
                                                gather ? "load" : "store"),
                          "illegal-modifier");
      d.hint = gather ? "a tensor store scatters rows with .tile::scatter4" : "a tensor load gathers rows with .tile::gather4";
      return;
    }
  }
  if ((store && im2col) || (!store && ins.has_mod(".im2col_no_offs"))) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': {} is a {} mode", op, store ? ".im2col" : ".im2col_no_offs",
                                              store ? "load" : "store"),
                        "illegal-modifier");
    d.hint = store ? "a tensor store takes .tile or .im2col_no_offs" : "a tensor load takes .tile or .im2col";
    return;
  }
  if ((im2col || ins.has_mod(".im2col_no_offs")) && dims < 3) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': im2col modes need a tensor of 3 to 5 dimensions", op),
                        "illegal-modifier");
    d.hint = "use .tile for a 1- or 2-dimensional tensor";
    return;
  }
  if (odd_mode) return;
  size_t head = load ? 3 : kind == TensorOp::prefetch ? 1 : 2;
  size_t want_ops = head + im2col + (load && multicast) + hint_op;
  if (ins.operands.size() != want_ops) {
    std::string form = load ? "[dst], [tmap, {coords}], [mbar]" : store ? "[tmap, {coords}], [src]" : "[tmap, {coords}]";
    if (im2col) form += ", {im2col offsets}";
    if (load && multicast) form += ", ctaMask";
    if (hint_op) form += ", cache-policy";
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes {} operand{}, found {}{}", op, want_ops, want_ops == 1 ? "" : "s",
                                              ins.operands.size(),
                                              multicast ? " (.multicast::cluster takes a 16-bit ctaMask)"
                                              : hint_op ? " (.L2::cache_hint takes a 64-bit cache policy)" : ""),
                        "operand-count");
    d.hint = fmt::format("operands: {}", form);
    return;
  }
  int coords = gather || scatter ? 5 : dims;
  // The shared-memory operands may be written bare (ptxas takes `%r1` or `smem` for [%r1]),
  // but not as an immediate ("Immediate addresses allowed only for .local").
  std::vector<size_t> shared_ops;
  if (load) shared_ops = {0, 2};
  else if (store) shared_ops = {1};
  for (size_t at : shared_ops) {
    if (literal(ins.operands[at])) {
      auto& d = at_operand(ctx, ins.operands[at], fmt::format("operand {} of '{}' is a shared-memory address, not an "
                                                              "immediate", at + 1, op),
                           "operand-kind");
      d.hint = "write the address in brackets: [smem] or [%r1]";
    }
  }
  const Operand& t = ins.operands[load ? 1 : 0];
  if (t.kind != Operand::Kind::address) {
    auto& d = at_operand(ctx, t, fmt::format("'{}' addresses the tensor as [tensor-map, {{coordinates}}]", op), "operand-kind");
    d.hint = "write [%rd_tmap, {%r0, ...}] with one 32-bit coordinate per dimension";
  } else if (t.elems.size() == 1) {
    auto& d = at_operand(ctx, t, fmt::format("'{}' addresses the tensor as [tensor-map, {{coordinates}}]", op), "operand-kind");
    d.hint = fmt::format("write [%rd_tmap, {{{}}}] with one 32-bit coordinate per dimension",
                         dims == 1 ? "%r0" : dims == 2 ? "%r0, %r1" : "%r0, %r1, ...");
  } else if (t.kind == Operand::Kind::address && t.elems.size() == 2 && t.elems[1].kind == Operand::Kind::vector) {
    const Operand& v = t.elems[1];
    if (static_cast<int>(v.elems.size()) != coords) {
      auto& d = ctx.diags.error(v.loc, fmt::format("'{}' takes {} coordinate{} for .{}d{}, found {}", op, coords,
                                                   coords == 1 ? "" : "s", dims,
                                                   gather || scatter ? " with four rows (column, row0..row3)" : "",
                                                   v.elems.size()),
                                "vector-width");
      d.length = 1;
      d.hint = gather || scatter ? std::string("give {col, row0, row1, row2, row3}: five 32-bit coordinates")
                                 : fmt::format("give one 32-bit coordinate per dimension, or write .{}d",
                                               v.elems.size() <= 5 ? v.elems.size() : 5);
    } else {
      for (auto& e : v.elems) {
        const SymbolInfo* s = reg_of(ctx, e);
        if (!s || is_int32(s->type)) continue;
        auto& d = at_operand(ctx, e, fmt::format("tensor coordinates are 32-bit integers, but '{}' is {}", e.expr.text,
                                                 s->type),
                             "operand-type");
        d.hint = "pass coordinates in .b32/.s32 registers";
        break;
      }
    }
  }
  size_t next = head;
  if (im2col) {
    const Operand& o = ins.operands[next++];
    if (o.kind != Operand::Kind::vector) {
      auto& d = at_operand(ctx, o, fmt::format("the im2col offsets of '{}' are a vector {{...}}", op), "operand-kind");
      d.hint = "write {%h0, ...}: dimensions - 2 16-bit offsets";
    } else if (static_cast<int>(o.elems.size()) != dims - 2) {
      auto& d = ctx.diags.error(o.loc, fmt::format("'{}' takes {} im2col offset{} for .{}d (dimensions - 2), found {}",
                                                   op, dims - 2, dims == 3 ? "" : "s", dims, o.elems.size()),
                                "vector-width");
      d.length = 1;
      d.hint = "give one 16-bit offset per spatial dimension (dimensions - 2)";
    } else {
      for (auto& e : o.elems) {
        const SymbolInfo* s = reg_of(ctx, e);
        if (!s || is_int16(s->type)) continue;
        auto& d = at_operand(ctx, e, fmt::format("im2col offsets are 16-bit, but '{}' is {}", e.expr.text, s->type),
                             "operand-type");
        d.hint = "pass the offsets in .b16 registers";
        break;
      }
    }
  }
  for (size_t i = next; i < ins.operands.size(); ++i)
    if (ins.operands[i].kind == Operand::Kind::address) {
      auto& d = at_operand(ctx, ins.operands[i], fmt::format("operand {} of '{}' is a register or immediate, not an "
                                                             "address", i + 1, op),
                           "operand-kind");
      d.hint = "operands after the tensor: im2col offsets {...}, the ctaMask and the cache policy, in that order";
      return;
    }
  if (load && multicast) {
    const Operand& o = ins.operands[next++];
    if (const SymbolInfo* s = reg_of(ctx, o); s && !is_int16(s->type)) {
      auto& d = at_operand(ctx, o, fmt::format("ctaMask of '{}' is a 16-bit mask, but '{}' is {}", op, o.expr.text, s->type),
                           "operand-type");
      d.hint = "pass the mask in a .b16 register (cvt.u16.u32 %h, %r;)";
    }
  }
  if (hint_op) {
    const Operand& o = ins.operands[next];
    if (const SymbolInfo* s = reg_of(ctx, o); s && !is_int64(s->type)) {
      auto& d = at_operand(ctx, o, fmt::format("the cache policy of '{}' is 64-bit, but '{}' is {}", op, o.expr.text, s->type),
                           "operand-type");
      d.hint = "create it with createpolicy.fractional.L2::evict_last.b64 %rd, 1.0; and pass that .b64 register";
    }
  }
}

}  // namespace ptxforge::ptx::async_rules
