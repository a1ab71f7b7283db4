// tcgen05.mma, tcgen05.commit and tcgen05.cp (see check_tcgen05.h and the list of per-form
// rules at the top of check_tcgen05.cpp), the rule that a function uses one .cta_group, and
// the tcgen05.mma features some tcgen05 targets lack. Confirmed against ptxas 13.0 by
// rules_tcgen05_test.cpp.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ptx/check_tcgen05_internal.h"
#include "util/text.h"

namespace ptxforge::ptx::tcgen05_rules {

void Checker::run_mma() {
  bool ws = !get("ws").empty(), sp = !get("sp").empty(), bs = !get("block_scale").empty();
  std::string_view kind = get("kind"), cta = get("cta_group"), sv = get("scale vector size"),
                   coll = get("collector usage");
  bool mx = kind == ".kind::mxf8f6f4" || kind == ".kind::mxf4" || kind == ".kind::mxf4nvf4";
  bool bad = false;
  auto refuse = [&](std::string msg, std::string hint) {
    at_opcode(std::move(msg), "illegal-modifier", std::move(hint));
    bad = true;
  };
  if (ws && cta == ".cta_group::2")
    refuse("'tcgen05.mma.ws' runs on one CTA only: it does not take .cta_group::2", "use .cta_group::1");
  if (ws && bs)
    refuse("'tcgen05.mma.ws' has no block-scaled form: it does not take .block_scale",
           "use tcgen05.mma (without .ws) for .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4");
  if (has(".ashift") && (coll == ".collector::a::fill" || coll == ".collector::a::use"))
    refuse(fmt::format("'.ashift' cannot be combined with {}: A is shifted as it is read from tensor memory", coll),
           "use .collector::a::lastuse or ::discard, or drop the collector usage");
  if (!kind.empty() && mx && !bs) {
    auto& d = at_opcode(fmt::format("'tcgen05.mma{}' is block-scaled: it needs .block_scale", kind),
                        "missing-modifier",
                        fmt::format("write tcgen05.mma{}{}.block_scale ... [d], a, b, idesc, [scale_a], [scale_b], "
                                    "enable_d;", cta.empty() ? ".cta_group::1" : cta, kind));
    (void)d;
    bad = true;
  }
  if (!kind.empty() && !mx && bs)
    refuse(fmt::format("'{}' does not take .block_scale: only .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4 "
                       "are block-scaled", kind),
           "remove .block_scale, or use a block-scaled kind");
  if (!sv.empty() && !kind.empty() && !mx)
    refuse(fmt::format("'{}' does not take {}", kind, sv), fmt::format("remove {}", sv));
  if (mx && bs) {
    std::string_view ok = kind == ".kind::mxf8f6f4" ? ".scale_vec::1X .block32"
                          : kind == ".kind::mxf4"   ? ".scale_vec::2X .block32"
                                                    : ".scale_vec::2X .scale_vec::4X .block16 .block32";
    if (!sv.empty() && !in_list(ok, sv))
      refuse(fmt::format("'{}' does not take {}: its scale vector size is one of {}", kind, sv, ok),
             fmt::format("use {}", split(ok, ' ')[0]));
    if (sv.empty() && kind == ".kind::mxf4nvf4") {
      at_opcode("'.kind::mxf4nvf4' needs a scale vector size", "missing-modifier",
                "add .scale_vec::4X (one ue4m3 scale per 16 elements) or .scale_vec::2X (ue8m0 per 32)");
      bad = true;
    }
    PtxVersion v88{8, 8};
    bool needs88 = sv == ".block16" || sv == ".block32" || (sv.empty() && kind != ".kind::mxf4nvf4");
    if (needs88 && ctx.facts.version && *ctx.facts.version < v88) {
      at_opcode(fmt::format("'{}' {} requires PTX ISA .version 8.8 or later (module has {})", kind,
                            sv.empty() ? "without a scale vector size" : fmt::format("with {}", sv),
                            ctx.facts.version->str()),
                "needs-version",
                fmt::format("write {} explicitly, or raise the header to '.version 8.8'",
                            kind == ".kind::mxf4" ? ".scale_vec::2X" : ".scale_vec::1X"));
      bad = true;
    }
  }
  if (!coll.empty()) {
    bool b = coll.substr(0, 13) == ".collector::b";
    if (ws && !b)
      refuse("'tcgen05.mma.ws' reuses B through the collector buffers b0..b3, not .collector::a",
             "use .collector::b0::fill (or ::use, ::lastuse, ::discard) with b0..b3");
    if (!ws && b)
      refuse(fmt::format("'{}' is a .ws collector: without .ws the collector is .collector::a", coll),
             "use .collector::a::fill (or ::use, ::lastuse, ::discard)");
  }
  if (bad) return;
  mma_targets(kind, sv, sp);
  // Operands: [d], a, b, ([sp-meta]), idesc, then per form.
  size_t head = sp ? 5 : 4;
  if (ins.operands.size() < head + 1) {
    count(head + 1, head + 3, "tcgen05.mma.cta_group::1.kind::f16 [%d], %adesc, %bdesc, %idesc, %p;");
    return;
  }
  const auto& ops = ins.operands;
  address(ops[0], "d (the accumulator in tensor memory)", true);
  if (ops[1].kind == Operand::Kind::address) address(ops[1], "a (in tensor memory)", true);
  else scalar(ops[1], "a-desc (the shared-memory matrix descriptor)", 64);
  scalar(ops[2], "b-desc (the shared-memory matrix descriptor)", 64);
  if (sp) address(ops[3], "sp-meta (the sparsity metadata in tensor memory)", true);
  scalar(ops[head - 1], "idesc (the instruction descriptor)", 32);
  if (has(".ashift") && ops[1].kind != Operand::Kind::address)
    at(ops[1], "'.ashift' shifts A in tensor memory: A must be [a-tmem], not a descriptor", "operand-kind",
       "load A into tensor memory and pass [%a_tmem], or drop .ashift");
  std::vector<const Operand*> rest;
  for (size_t i = head; i < ops.size(); ++i) rest.push_back(&ops[i]);
  if (bs) {
    if (!count(head + 3, head + 3, "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [d], a, b, idesc, "
                                   "[scale_a_tmem], [scale_b_tmem], enable_d;"))
      return;
    address(*rest[0], "scale-A (scale factors in tensor memory)", true);
    address(*rest[1], "scale-B (scale factors in tensor memory)", true);
    predicate(*rest[2], "enable-input-d");
    return;
  }
  if (ws) {
    if (!count(head + 1, head + 2, "tcgen05.mma.ws.cta_group::1.kind::f16 [d], a, b, idesc, enable_d{, "
                                   "zero_column_mask};"))
      return;
    predicate(*rest[0], "enable-input-d");
    if (rest.size() == 2) scalar(*rest[1], "zero-column-mask-desc", 64);
    return;
  }
  size_t i = 0;
  if (rest[0]->kind == Operand::Kind::vector) {
    size_t want = cta == ".cta_group::2" ? 8 : 4;
    vector(*rest[0], "disable-output-lane", want,
           fmt::format("{} (one bit per output lane of {} CTA{})", cta.empty() ? ".cta_group::1" : cta,
                       want == 8 ? "two" : "one", want == 8 ? "s" : ""));
    ++i;
  }
  // Without a vector ptxas also takes a seventh operand ([d], a, b, idesc, p, p, imm), a form
  // the manual does not describe: it is left alone.
  if (!count(head + i + 1, head + 3, "tcgen05.mma.cta_group::1.kind::f16 [d], a, b, idesc{, "
                                               "{disable_output_lane}}, enable_d{, scale_input_d};"))
    return;
  if (rest.size() - i > 2) {
    if (kind == ".kind::f16" || kind == ".kind::tf32") scale_target();  // its last operand scales D
    return;
  }
  predicate(*rest[i], "enable-input-d");
  if (i + 1 >= rest.size()) return;
  const Operand& sc = *rest[i + 1];
  if (kind == ".kind::f8f6f4") {
    at(sc, "scale-input-d is for .kind::f16 and .kind::tf32; '.kind::f8f6f4' does not take it", "operand-count",
       "drop the last operand");
    return;
  }
  // ptxas 13.0 takes a last immediate on .kind::i8 (the manual has no scale-input-d there)
  // except after a disable-output-lane vector on .sp.
  if (kind == ".kind::i8" && sp && i == 1) {
    at(sc, "scale-input-d is for .kind::f16 and .kind::tf32; 'tcgen05.mma.sp.kind::i8' does not take it",
       "operand-count", "drop the last operand");
    return;
  }
  if (kind != ".kind::f16" && kind != ".kind::tf32" && kind != ".kind::i8") return;
  if (!is_literal(sc)) {
    at(sc, "scale-input-d of 'tcgen05.mma' is an immediate from 0 to 15 (D is scaled by 2^-n)", "operand-kind",
       "write the shift as a constant");
    return;
  }
  if (kind != ".kind::i8") scale_target();
  if (auto v = literal(sc); v && kind != ".kind::i8" && (*v < 0 || *v > 15))
    at(sc, fmt::format("scale-input-d of 'tcgen05.mma' is from 0 to 15, not {}", *v), "immediate-value",
       "D is scaled by 2^-n: use n from 0 to 15");
}

// Parts of tcgen05.mma that some tcgen05 targets lack. Each list names only the targets on
// which ptxas 13.0 was seen to refuse the feature (a target not named is not judged).
void Checker::lacks(std::string_view list, std::string what, std::string_view where) {
  for (auto& t : ctx.facts.targets) {
    if (!in_list(list, t.str())) continue;
    auto& d = at_opcode(fmt::format("{} is not supported on .target {}", what, t.str()), "needs-target",
                        fmt::format("it needs .target {}", where));
    d.notes.push_back({ctx.facts.target_loc, "target declared here"});
    return;
  }
}

void Checker::mma_targets(std::string_view kind, std::string_view sv, bool sp) {
  if (ctx.facts.targets.empty()) return;
  if (kind == ".kind::i8") lacks("sm_100f sm_103a sm_103f sm_110f", "'tcgen05.mma.kind::i8'", "sm_100a or sm_110a");
  if (sv.substr(0, 11) == ".scale_vec:")
    lacks("sm_100f sm_103f sm_110f", fmt::format("'{}'", sv),
          "sm_100a, sm_103a or sm_110a; family targets write the block size: .block32 (or .block16 for mxf4nvf4)");
  if (sp && (kind == ".kind::mxf4" || kind == ".kind::mxf4nvf4"))
    lacks("sm_100f sm_103f sm_110f", fmt::format("'tcgen05.mma.sp{}'", kind), "sm_100a, sm_103a or sm_110a");
}

// scale-input-d: not on sm_110a/sm_110f.
void Checker::scale_target() { lacks("sm_110a sm_110f", "scale-input-d of 'tcgen05.mma'", "sm_100a/sm_100f or sm_103a/sm_103f"); }

// A function's tcgen05 instructions all use .cta_group::1 or all .cta_group::2 (ptxas refuses
// the mix for the whole function, without a line; the first that differs is the line here).
void Checker::one_cta_group() {
  std::string_view cta = get("cta_group");
  if (cta.empty() || !ctx.fn) return;
  if (ctx.tcgen05_fn != ctx.fn) {
    ctx.tcgen05_fn = ctx.fn;
    ctx.tcgen05_cta_group = cta;
    ctx.tcgen05_cta_loc = ins.loc;
    return;
  }
  if (cta == ctx.tcgen05_cta_group) return;
  auto& d = at_opcode(fmt::format("'{}' uses {}, but this function's tcgen05 instructions use {}: a function "
                                  "works on one CTA or on a CTA pair, not both", name, cta, ctx.tcgen05_cta_group),
                      "illegal-modifier",
                      fmt::format("use {} here too (every tcgen05 instruction of a function, alloc to commit, "
                                  "takes the same .cta_group)", ctx.tcgen05_cta_group));
  d.notes.push_back({ctx.tcgen05_cta_loc, fmt::format("first {} here", ctx.tcgen05_cta_group)});
}

void Checker::run_commit() {
  bool mc = has(".multicast::cluster");
  if (!count(mc ? 2 : 1, mc ? 2 : 1,
             mc ? "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
                  "[mbar], %ctaMask;   (%ctaMask a .b16 register)"
                : "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar];"))
    return;
  address(ins.operands[0], "the mbarrier", false);
  if (!mc) return;
  const Operand& mask = ins.operands[1];
  const SymbolInfo* s = reg(mask);
  if (!s || type_bits(s->type) != 16)
    at(mask, fmt::format("the ctaMask of '{}' is a 16-bit register{}", name,
                         s ? fmt::format("; '{}' is {}", mask.expr.text, s->type) : std::string()),
       "operand-type", "put the mask of destination CTAs in a .b16 register: mov.b16 %h1, 3;");
}

void Checker::run_cp() {
  std::string_view shape = get("shape"), warp = get("warp"), dst = get("destination format"),
                   src = get("source format");
  bool bad = false;
  if (!shape.empty()) {
    std::string_view need = shape == ".64x128b" ? ".warpx2::02_13 or .warpx2::01_23"
                            : shape == ".32x128b" ? ".warpx4"
                                                  : "";
    if (need.empty() && !warp.empty()) {
      at_opcode(fmt::format("'tcgen05.cp{}' takes no warp multicast modifier ('{}')", shape, warp),
                "illegal-modifier", "warp multicast is for .64x128b (.warpx2::..) and .32x128b (.warpx4)");
      bad = true;
    } else if (!need.empty() && (warp.empty() || need.find(warp) == std::string_view::npos)) {
      at_opcode(warp.empty() ? fmt::format("'tcgen05.cp{}' needs {}", shape, need)
                             : fmt::format("'tcgen05.cp{}' takes {}, not {}", shape, need, warp),
                warp.empty() ? "missing-modifier" : "illegal-modifier", fmt::format("use {}", need));
      bad = true;
    }
  }
  if (dst.empty() != src.empty()) {
    at_opcode("'tcgen05.cp' decompresses with a pair of formats: .b8x16 and a source format", "missing-modifier",
              "write both, destination first: .b8x16.b6x16_p32 or .b8x16.b4x16_p64");
    bad = true;
  } else if (!dst.empty()) {
    for (auto& m : ins.mods) {
      if (m == dst) break;
      if (m == src) {
        at_opcode("'tcgen05.cp' names the destination format first: .b8x16 before the source format",
                  "illegal-modifier", fmt::format("write .b8x16{}", src));
        bad = true;
        break;
      }
    }
  }
  if (bad) return;
  if (!count(2, 2, "tcgen05.cp.cta_group::1.128x256b [%taddr], %sdesc;")) return;
  address(ins.operands[0], "taddr", false);
  scalar(ins.operands[1], "s-desc (the shared-memory matrix descriptor)", 64);
}

}  // namespace ptxforge::ptx::tcgen05_rules
