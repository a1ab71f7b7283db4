// Rules of the asynchronous data-movement and warpgroup instructions (see check_async_ops.h).
// Each rule names the ptxas 13.0 message it mirrors; rules_async_test.cpp generates accepted
// and rejected forms of each class and holds us to ptxas's verdict, line by line. This file
// dispatches and holds the smaller rule sets; wgmma, the tensor copies and tensormap have
// files of their own.
#include "ptx/check_async_ops.h"

#include "ptx/check_async_internal.h"

namespace ptxforge::ptx {

using namespace async_rules;

namespace {

// setmaxnreg.{inc,dec}.sync.aligned.u32 N (ptxas: "Not a name of any known instruction" without
// .inc/.dec, ".sync/.aligned modifier required", "Unexpected instruction types").
void check_setmaxnreg(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  bool inc = ins.has_mod(".inc"), dec = ins.has_mod(".dec");
  std::string op = ins.full_opcode();
  if (inc == dec) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs exactly one of '.inc' and '.dec'", op),
                        inc ? "illegal-modifier" : "missing-modifier");
    d.hint = "write setmaxnreg.inc.sync.aligned.u32 N (producer warps: .dec)";
    return;
  }
  const char* dir = inc ? "inc" : "dec";
  require(ctx, ins, ".sync", ": the warpgroup executes it together",
          fmt::format("write setmaxnreg.{}.sync.aligned.u32", dir));
  require(ctx, ins, ".aligned", ": every thread of the warpgroup executes the same setmaxnreg",
          fmt::format("write setmaxnreg.{}.sync.aligned.u32", dir));
  if (r.type.empty()) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs the type '.u32'", op), "missing-type");
    d.hint = fmt::format("write setmaxnreg.{}.sync.aligned.u32", dir);
  }
}

// elect.sync d|p, membermask: d is a 32-bit register (or _), p a predicate.
void check_elect(CheckContext& ctx, const Instruction& ins) {
  if (ins.operands.empty()) return;
  const Operand& o = ins.operands[0];
  if (o.kind != Operand::Kind::expr || o.expr.kind != Expr::Kind::binary || o.expr.text != "|" || o.expr.args.size() != 2)
    return;  // check_operands.cpp reports a missing pair
  const Expr& lane = o.expr.args[0];
  const Expr& pred = o.expr.args[1];
  const SymbolInfo* ls = reg_of(ctx, lane);
  const SymbolInfo* ps = reg_of(ctx, pred);
  if (ls && ps && ls->type == ".pred" && ps->type != ".pred") {
    auto& d = at_operand(ctx, o, fmt::format("'elect.sync' writes the lane index first and the predicate second: "
                                             "write {}|{}", pred.text, lane.text),
                         "operand-kind");
    d.hint = fmt::format("elect.sync {}|{}, 0xffffffff;", pred.text, lane.text);
    d.fixit = FixIt{o.loc, static_cast<uint32_t>(pred.loc.col + pred.text.size() - o.loc.col),
                    fmt::format("{}|{}", pred.text, lane.text)};
    return;
  }
  if (pred.kind == Expr::Kind::name && pred.text == "_") {
    auto& d = at_operand(ctx, o, "'elect.sync' needs its predicate output: only the lane index may be '_'", "operand-kind");
    d.hint = "write elect.sync %r|%p, 0xffffffff; or _|%p";
    return;
  }
  if (ps && ps->type != ".pred") {
    auto& d = at_operand(ctx, o, fmt::format("the second output of 'elect.sync' is a predicate, but '{}' is {}", pred.text,
                                             ps->type),
                         "operand-type");
    d.hint = "write elect.sync %r|%p, 0xffffffff;";
  } else if (ls && !is_int32(ls->type)) {
    auto& d = at_operand(ctx, o, fmt::format("the lane index of 'elect.sync' is 32-bit, but '{}' is {}", lane.text,
                                             ls->type),
                         "operand-type");
    d.hint = "write the index to a .b32 register, or '_' to discard it";
  }
}

// mbarrier.arrive{_drop}.expect_tx takes its transaction count ("Arguments mismatch");
// .noComplete needs the arrival count and does not combine with .expect_tx.
void check_arrive(CheckContext& ctx, const Instruction& ins) {
  std::string op = ins.full_opcode();
  bool tx = ins.has_mod(".expect_tx"), nc = ins.has_mod(".noComplete");
  if (tx && nc) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': .noComplete does not combine with .expect_tx", op), "illegal-modifier");
    d.hint = "drop .noComplete";
    return;
  }
  if ((tx || nc) && ins.operands.size() == 2 && ins.operands[1].kind == Operand::Kind::address) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs its {} as a third operand", op,
                                              tx ? "transaction count (bytes expected)" : "arrival count"),
                        "operand-count");
    d.hint = tx ? fmt::format("write {} state, [mbar], tx_bytes;", op) : fmt::format("write {} state, [mbar], count;", op);
  }
}

void check_griddepcontrol(CheckContext& ctx, const Instruction& ins) {
  bool w = ins.has_mod(".wait"), l = ins.has_mod(".launch_dependents");
  if (w != l) return;
  auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs exactly one of '.wait' and '.launch_dependents'", ins.full_opcode()),
                      w ? "illegal-modifier" : "missing-modifier");
  d.hint = "write griddepcontrol.wait; or griddepcontrol.launch_dependents; as two instructions";
}

// tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.<scope>.sync.aligned

// the x4 forms stochastically (.rs) only, .ue8m0x2 toward zero or +inf (.rz/.rp); widening from
// them is written .rn and takes no .satfinite or .relu ("Illegal rounding modifier").
// The pairs cvt converts between when one side is an 8-, 6- or 4-bit packed float, and between
// the 16-bit packed types (ptxas 13.0: "Unexpected instruction types" for any other pair):
// fp8 and .e2m1x2 from .f32 pairs or .f16x2 (not .bf16x2); fp6 x2 from .f32 pairs; .ue8m0x2 from .f32
// pairs or .bf16x2; the x4 forms from four .f32; widening to .f16x2 from fp8/fp6/fp4 and to
// .bf16x2 from .ue8m0x2 only. .f16x2 and .bf16x2 do not convert into each other. False when
// the pair was reported.
bool pair_converts(CheckContext& ctx, const Instruction& ins, std::string_view to, std::string_view from) {
  auto in = [](std::string_view t, std::initializer_list<std::string_view> l) {
    for (auto x : l) if (t == x) return true;
    return false;
  };
  auto narrow = [&](std::string_view t) {
    return in(t, {".e4m3x2", ".e5m2x2", ".e2m1x2", ".e2m3x2", ".e3m2x2", ".ue8m0x2", ".e4m3x4", ".e5m2x4", ".e2m1x4",
                  ".e2m3x4", ".e3m2x4"});
  };
  bool half_pair = in(to, {".f16x2", ".bf16x2"}) && in(from, {".f16x2", ".bf16x2"}) && to != from;
  if (!half_pair && !narrow(to) && !narrow(from)) return true;
  if (to.empty() || from.empty()) return true;  // a missing type is reported elsewhere
  std::string_view sources;
  if (in(to, {".e4m3x2", ".e5m2x2"})) sources = ".f32 .f16x2";
  else if (to == ".e2m1x2") sources = ".f32 .f16x2";
  else if (in(to, {".e2m3x2", ".e3m2x2"})) sources = ".f32";
  else if (to == ".ue8m0x2") sources = ".f32 .bf16x2";
  else if (narrow(to)) sources = ".f32";
  else if (to == ".f16x2") sources = ".f32 .e4m3x2 .e5m2x2 .e2m1x2 .e2m3x2 .e3m2x2";
  else if (to == ".bf16x2") sources = ".f32 .ue8m0x2";
  else sources = "";  // to .f32, .f16, ...: no narrow packed source converts to it
  for (auto s : split(sources, ' '))
    if (!s.empty() && s == from) return true;
  auto& d = at_opcode(ctx, ins, fmt::format("'{}': cvt does not convert {} to {}", ins.full_opcode(), from, to),
                      "illegal-modifier");
  d.hint = sources.empty() ? fmt::format("{} converts only to .f16x2 (.bf16x2 from .ue8m0x2): widen to that first", from)
                           : fmt::format("{} is converted from: {}", to, sources);
  return false;
}

void check_narrow_cvt(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  static constexpr std::string_view kRoundings[] = {".rn", ".rz", ".rm", ".rp", ".rna", ".rs", ".rni", ".rzi", ".rmi", ".rpi"};
  std::string_view rnd;
  for (auto& m : ins.mods)
    for (auto k : kRoundings) if (m == k) rnd = m;
  std::string_view to = r.type, from = r.src_type;
  auto in = [](std::string_view t, std::initializer_list<std::string_view> l) {
    for (auto x : l) if (t == x) return true;
    return false;
  };
  bool to_x2 = in(to, {".e4m3x2", ".e5m2x2", ".e2m1x2", ".e2m3x2", ".e3m2x2"});
  bool to_x4 = in(to, {".e4m3x4", ".e5m2x4", ".e2m1x4", ".e2m3x4", ".e3m2x4"});
  bool to_ue8 = to == ".ue8m0x2";
  bool widen = in(from, {".e4m3x2", ".e5m2x2", ".e2m1x2", ".e2m3x2", ".e3m2x2", ".ue8m0x2"}) && in(to, {".f16x2", ".bf16x2"});
  std::string op = ins.full_opcode();
  if (!pair_converts(ctx, ins, to, from)) return;
  // Operand counts of the packed conversions ("Arguments mismatch"): two .f32 sources make a
  // pair (d, a, b), a packed source is one register (d, a), the x4 forms take the four-element
  // vector and the random bits (d, {a, b, c, e}, rbits).
  bool packed_to = to_x2 || to_ue8 || to == ".f16x2" || to == ".bf16x2";
  bool vector_source = false;  // {a, b} for an x2 conversion: vector-width says so (check_operands.cpp)
  for (auto& o : ins.operands) vector_source |= o.kind == Operand::Kind::vector;
  if ((packed_to || to_x4) && !(vector_source && !to_x4) && !from.empty() &&
      (from == ".f32" || in(from, {".f16x2", ".bf16x2"}) || widen)) {
    size_t want = to_x4 ? 3 : from == ".f32" ? 3 : 2;
    if (ins.operands.size() != want) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes {} operands, found {}", op, want, ins.operands.size()),
                          "operand-count");
      d.hint = to_x4 ? "operands: d, {a, b, c, d} (four .f32), rbits"
               : from == ".f32" ? "operands: d, a, b (a goes to the upper half, b to the lower)"
                                : "operands: d, a (one packed source register)";
      return;
    }
  }
  // Widening writes the two halves into one 32-bit register ("Arguments mismatch" for a 16- or
  // 64-bit one). Into .f16x2 the register is .b32 or .f16x2 (not .u32, .s32 or .f32); ptxas
  // takes any 32-bit register for .bf16x2 from .ue8m0x2.
  if (widen && !ins.operands.empty()) {
    const Operand& d0 = ins.operands[0];
    if (const SymbolInfo* s = reg_of(ctx, d0);
        s && !s->vec &&
        (type_bits(s->type) != 32 || (to == ".f16x2" && s->type != ".b32" && s->type != ".f16x2"))) {
      auto& d = at_operand(ctx, d0, fmt::format("'{}' writes a {} pair into one 32-bit register; '{}' is {}", op, to,
                                                d0.expr.text, s->type),
                           "operand-type");
      d.hint = "write the result to a .b32 register";
      return;
    }
  }
  if (to_x2 || to_x4 || to_ue8) {
    // A missing .satfinite is reported by check_modifier_rules.cpp; here only the rounding.
    std::string_view allowed = to_x2 ? ".rn" : to_x4 ? ".rs" : ".rz or .rp";
    if (to_ue8 && ins.has_mod(".relu")) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}': a conversion to .ue8m0x2 takes no .relu (the exponent format has "
                                                "no sign)", op), "illegal-modifier");
      d.hint = fmt::format("write cvt.rz.satfinite.ue8m0x2{} (or .rp)", from);
      return;
    }
    bool ok = to_x2 ? rnd == ".rn" : to_x4 ? rnd == ".rs" : (rnd == ".rz" || rnd == ".rp");
    if (ok || (rnd.empty() && !to_ue8 && !ins.has_mod(".satfinite"))) return;
    auto& d = at_opcode(ctx, ins,
                        rnd.empty() ? fmt::format("'{}': a conversion to {} needs the rounding {}", op, to, allowed)
                                    : fmt::format("'{}': a conversion to {} rounds {} only, not {}", op, to, allowed, rnd),
                        rnd.empty() ? "missing-modifier" : "illegal-modifier");
    d.hint = fmt::format("write cvt{}.satfinite{}{}", to_x2 ? ".rn" : to_x4 ? ".rs" : ".rz", to, from);
    return;
  }
  if (!widen) return;
  // .relu is accepted into .f16x2 (not into .bf16x2 from .ue8m0x2).
  bool bad_extra = ins.has_mod(".satfinite") || (ins.has_mod(".relu") && to != ".f16x2");
  if (rnd == ".rn" && !bad_extra) return;
  auto& d = at_opcode(ctx, ins,
                      bad_extra ? fmt::format("'{}': widening from {} is exact: it takes no .satfinite{}", op, from, to == ".f16x2" ? "" : " or .relu")
                      : rnd.empty() ? fmt::format("'{}': a conversion from {} is written with .rn", op, from)
                                    : fmt::format("'{}': a conversion from {} takes .rn, not {}", op, from, rnd),
                      rnd.empty() ? "missing-modifier" : "illegal-modifier");
  d.hint = fmt::format("write cvt.rn{}{}", to, from);
}

}  // namespace

void check_async_ops(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  check_async_forms(ctx, ins, r);
  if (fam == "wgmma.mma_async" || fam == "wgmma.mma_async.sp") check_wgmma(ctx, ins, fam.size() > 15);
  else if (fam == "cp.async.bulk.tensor" || fam == "cp.reduce.async.bulk.tensor" || fam == "cp.async.bulk.prefetch.tensor")
    check_tensor_copy(ctx, ins, r);
  else if (fam == "cp.async.bulk" || fam == "cp.reduce.async.bulk" || fam == "cp.async.bulk.prefetch")
    check_bulk_copy(ctx, ins, r);
  else if (fam == "setmaxnreg") check_setmaxnreg(ctx, ins, r);
  else if (fam == "elect.sync") check_elect(ctx, ins);
  else if (fam == "mbarrier.arrive" || fam == "mbarrier.arrive_drop") check_arrive(ctx, ins);
  else if (fam == "griddepcontrol") check_griddepcontrol(ctx, ins);
  else if (fam == "tensormap.cp_fenceproxy") check_cp_fenceproxy(ctx, ins, r);
  else if (fam == "tensormap.replace") check_tensormap_replace(ctx, ins);
  else if (fam == "cvt") check_narrow_cvt(ctx, ins, r);
}

}  // namespace ptxforge::ptx
