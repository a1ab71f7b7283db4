// Rules of the asynchronous data-movement and warpgroup instructions (see check_async_ops.h).
// Each rule names the ptxas 13.0 message it mirrors; rules_async_test.cpp generates accepted
// and rejected forms of each class and holds us to ptxas's verdict, line by line.
#include "ptx/check_async_ops.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "util/text.h"

namespace ptxforge::ptx {

namespace {

std::optional<int64_t> literal(const Operand& o) {
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
const SymbolInfo* reg_of(CheckContext& ctx, const Expr& e) {
  const Expr* x = &e;
  if (x->kind == Expr::Kind::unary && x->text == "!" && x->args.size() == 1) x = &x->args[0];
  if (x->kind != Expr::Kind::name || x->text.empty() || x->text[0] != '%') return nullptr;
  const SymbolInfo* s = ctx.scopes.find(x->text);
  return s && s->kind == SymbolInfo::Kind::reg ? s : nullptr;
}
const SymbolInfo* reg_of(CheckContext& ctx, const Operand& o) {
  return o.kind == Operand::Kind::expr ? reg_of(ctx, o.expr) : nullptr;
}

bool is_int64(std::string_view t) { return t == ".b64" || t == ".u64" || t == ".s64"; }
bool is_int32(std::string_view t) { return t == ".b32" || t == ".u32" || t == ".s32"; }
bool is_int16(std::string_view t) { return t == ".b16" || t == ".u16" || t == ".s16"; }

Diagnostic& at_opcode(CheckContext& ctx, const Instruction& ins, std::string msg, const char* id) {
  auto& d = ctx.diags.error(ins.loc, std::move(msg), id);
  d.length = static_cast<uint32_t>(ins.full_opcode().size());
  return d;
}
Diagnostic& at_operand(CheckContext& ctx, const Operand& o, std::string msg, const char* id) {
  auto& d = ctx.diags.error(o.loc, std::move(msg), id);
  d.length = o.kind == Operand::Kind::expr ? static_cast<uint32_t>(std::max<size_t>(o.expr.text.size(), 1)) : 1;
  return d;
}

// ---- wgmma.mma_async ------------------------------------------------------------------------
// Input classes: the K of the m64nNk shape, the operand count (descriptor A / register A), and
// the accumulator types, from the manual's wgmma tables; each confirmed with ptxas 13.0.
struct WgmmaClass {
  const char* name;
  int k;
  size_t ops_desc, ops_reg;
  bool int_n;  // N in {8, 16, 24, 32, 48, ..., 256} (integer and .b1) rather than every multiple of 8
};
std::optional<WgmmaClass> wgmma_class(std::string_view a) {
  if (a == ".f16" || a == ".bf16") return WgmmaClass{"16-bit float", 16, 8, 7, false};
  if (a == ".tf32") return WgmmaClass{"tf32", 8, 6, 6, false};
  if (a == ".e4m3" || a == ".e5m2") return WgmmaClass{"fp8", 32, 6, 6, false};
  if (a == ".s8" || a == ".u8") return WgmmaClass{"8-bit integer", 32, 4, 4, true};
  if (a == ".b1") return WgmmaClass{"single-bit", 256, 4, 4, true};
  return std::nullopt;
}
bool same_wgmma_kind(std::string_view a, std::string_view b) {
  auto fp8 = [](std::string_view t) { return t == ".e4m3" || t == ".e5m2"; };
  auto i8 = [](std::string_view t) { return t == ".s8" || t == ".u8"; };
  return a == b || (fp8(a) && fp8(b)) || (i8(a) && i8(b));
}

void check_wgmma(CheckContext& ctx, const Instruction& ins) {
  std::string op = ins.full_opcode();
  if (!ins.has_mod(".sync")) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs '.sync': the whole warpgroup issues it together", op),
                        "missing-modifier");
    d.hint = "write wgmma.mma_async.sync.aligned.<shape>.<dtype>.<atype>.<btype>";
  }
  int m = 0, n = 0, k = 0;
  bool have_shape = false;
  std::vector<std::string_view> types;
  for (auto& mod : ins.mods) {
    if (is_type_name(mod)) types.push_back(mod);
    if (mod.size() > 6 && mod[1] == 'm' && std::sscanf(std::string(mod).c_str(), ".m%dn%dk%d", &m, &n, &k) == 3)
      have_shape = true;
  }
  if (!have_shape || types.size() != 3) return;
  std::string_view dtype = types[0], atype = types[1], btype = types[2];
  auto cls = wgmma_class(atype);
  if (!cls || !wgmma_class(btype)) return;
  if (!same_wgmma_kind(atype, btype)) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': A is {} but B is {}: wgmma takes both inputs of one type "
                                              "(fp8 may mix .e4m3 and .e5m2)", op, atype, btype),
                        "illegal-modifier");
    d.hint = fmt::format("write .{}{}{} and convert the other operand", dtype.substr(1), atype, atype);
    return;
  }
  bool int_in = cls->int_n;
  bool dtype_ok = int_in ? dtype == ".s32" : (dtype == ".f32" || dtype == ".f16");
  if (!dtype_ok) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': {} inputs do not accumulate in {}", op, atype, dtype),
                        "illegal-modifier");
    d.hint = int_in ? "integer and .b1 inputs accumulate in .s32" : "floating-point inputs accumulate in .f32 (or .f16)";
    return;
  }
  if (int_in && atype != btype && ctx.facts.version && *ctx.facts.version < PtxVersion{8, 4}) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': mixed .s8/.u8 inputs need PTX ISA .version 8.4 or later (module "
                                              "has {})", op, ctx.facts.version->str()),
                        "needs-version");
    d.hint = "raise the header to '.version 8.4'";
  }
  bool n_ok = n >= 8 && n <= 256 && n % 8 == 0 && (!int_in || n <= 32 || n % 16 == 0);
  if (m != 64 || k != cls->k || !n_ok) {
    std::string ns = int_in ? "8, 16, 24, 32, 48, ... 256 (multiples of 16 above 32)" : "a multiple of 8 from 8 to 256";
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': shape .m{}n{}k{} is not a wgmma shape for {} inputs", op, m, n, k,
                                              atype),
                        "illegal-modifier");
    d.hint = fmt::format("{} inputs take .m64nNk{}, N {}", cls->name, cls->k, ns);
    return;
  }
  if (atype == ".b1" && (!ins.has_mod(".and") || !ins.has_mod(".popc"))) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': .b1 inputs need the operation '.and.popc'", op), "missing-modifier");
    d.hint = fmt::format("write wgmma.mma_async.sync.aligned.m64n{}k256.s32.b1.b1.and.popc", n);
    return;
  }
  // Operand counts. The 8-operand tf32/fp8 case is reported by check_operands.cpp already.
  size_t count = ins.operands.size();
  bool reg_a = count > 1 && ins.operands[1].kind == Operand::Kind::vector;
  size_t want = reg_a ? cls->ops_reg : cls->ops_desc;
  if (count != want) {
    if (cls->ops_desc == 6 && count == 8) return;
    const char* shape = cls->ops_desc == 8
                            ? (reg_a ? "d, {a}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b"
                                     : "d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b")
                        : cls->ops_desc == 6 ? "d, a, b-desc, scale-d, imm-scale-a, imm-scale-b"
                                             : "d, a, b-desc, scale-d";
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes {} operands for {} inputs{}, found {}", op, want, atype,
                                              cls->ops_desc == 8 ? (reg_a ? " with A in registers" : " with A in a descriptor") : "",
                                              count),
                        "operand-count");
    d.hint = fmt::format("operands: {}", shape);
    return;
  }
  // Descriptors: 64-bit integer registers (ptxas: "Arguments mismatch").
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (i == 1 && reg_a) continue;
    const SymbolInfo* s = reg_of(ctx, ins.operands[i]);
    if (s && !(is_int64(s->type) && !s->vec)) {
      auto& d = at_operand(ctx, ins.operands[i],
                           fmt::format("the {} descriptor of '{}' is a 64-bit value, but '{}' is {}", i == 1 ? "A" : "B",
                                       op, ins.operands[i].expr.text, s->type),
                           "operand-type");
      d.hint = "build the matrix descriptor in a .b64 register (e.g. mov.b64 %rd, {lo, hi};)";
    }
  }
  // scale-d: a predicate, or the immediate 0 or 1.
  const Operand& sd = ins.operands[3];
  if (auto v = literal(sd); v && *v != 0 && *v != 1) {
    auto& d = at_operand(ctx, sd, fmt::format("scale-d of '{}' is {}: it is 0 (D = A*B) or 1 (D = A*B + D)", op, *v),
                         "immediate-value");
    d.hint = "write 0 or 1, or a predicate register";
  } else if (const SymbolInfo* s = reg_of(ctx, sd); s && s->type != ".pred") {
    auto& d = at_operand(ctx, sd, fmt::format("scale-d of '{}' is a predicate, but '{}' is {}", op, sd.expr.text, s->type),
                         "operand-type");
    d.hint = "set a predicate (setp.ne.b32 %p, %r, 0;) and pass it, or write 0 or 1";
  }
  // imm-scale-a/b: -1 or 1; imm-trans-a/b: 0 or 1; both immediates.
  for (size_t i = 4; i < count; ++i) {
    const Operand& o = ins.operands[i];
    bool scale = i < 6;
    const char* what = scale ? (i == 4 ? "imm-scale-a" : "imm-scale-b") : (reg_a || i == 7 ? "imm-trans-b" : "imm-trans-a");
    auto v = literal(o);
    if (!v) {
      if (o.kind == Operand::Kind::expr && reg_of(ctx, o)) {
        auto& d = at_operand(ctx, o, fmt::format("{} of '{}' must be an immediate", what, op), "operand-kind");
        d.hint = scale ? "write 1, or -1 to negate the input" : "write 0 (no transpose) or 1 (transpose)";
      }
      continue;
    }
    bool ok = scale ? (*v == 1 || *v == -1) : (*v == 0 || *v == 1);
    if (ok) continue;
    auto& d = at_operand(ctx, o, fmt::format("{} of '{}' is {}: it must be {}", what, op, *v, scale ? "1 or -1" : "0 or 1"),
                         "immediate-value");
    d.hint = scale ? "write 1, or -1 to negate the input" : "write 0 (no transpose) or 1 (transpose)";
  }
}

// ---- cp.async.bulk.tensor -------------------------------------------------------------------
// Two directions only: a load global -> .shared::cluster / .shared::cta completing on an
// mbarrier, a store .shared::cta -> global completing in a bulk group (ptxas: "State space
// incorrect", ".completion_mechanism modifier required", "Illegal modifier"). Operands:
//   load:  [dst], [tmap, {coords}], [mbar] {, {im2col offsets}} {, ctaMask} {, cache-policy}
//   store: [tmap, {coords}], [src] {, cache-policy}
// Coordinates: one 32-bit value per dimension (.tile, .im2col); im2col offsets: dims - 2
// 16-bit values, .im2col from .3d up. The gather4/scatter4 and im2col::w forms are left alone.
bool is_space(std::string_view m) { return m == ".global" || m == ".shared::cluster" || m == ".shared::cta"; }

void check_tensor_copy(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string op = ins.full_opcode();
  int dims = 0;
  std::string_view dst, src;
  for (size_t i = r.consumed; i < ins.mods.size(); ++i) {
    std::string_view m = ins.mods[i];
    if (m.size() == 3 && m[0] == '.' && m[1] >= '1' && m[1] <= '5' && m[2] == 'd') dims = m[1] - '0';
    if (!is_space(m)) continue;
    if (dst.empty()) dst = m;
    else if (src.empty()) src = m;
  }
  if (dst.empty() || src.empty()) return;
  bool load = src == ".global" && (dst == ".shared::cluster" || dst == ".shared::cta");
  bool store = dst == ".global" && src == ".shared::cta";
  if (!load && !store) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' copies {} -> {}: a tensor copy loads .global into .shared::cluster "
                                              "or .shared::cta, or stores .shared::cta to .global", op, src, dst),
                        "state-space");
    d.hint = dst == ".global" ? "a store's source is .shared::cta: write .global.shared::cta"
                              : "write .shared::cluster.global for a load";
    return;
  }
  bool mbar = ins.has_mod(".mbarrier::complete_tx::bytes"), group = ins.has_mod(".bulk_group");
  bool multicast = ins.has_mod(".multicast::cluster"), hint_op = ins.has_mod(".L2::cache_hint");
  bool im2col = ins.has_mod(".im2col");
  bool odd_mode = ins.has_mod(".tile::gather4") || ins.has_mod(".tile::scatter4") || ins.has_mod(".im2col::w") ||
                  ins.has_mod(".im2col::w::128");
  const char* want = load ? ".mbarrier::complete_tx::bytes" : ".bulk_group";
  if (load ? group : mbar) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': a tensor {} completes with {}, not {}", op, load ? "load" : "store",
                                              want, load ? ".bulk_group" : ".mbarrier::complete_tx::bytes"),
                        "illegal-modifier");
    d.hint = fmt::format("write {}", want);
    return;
  }
  if (!(load ? mbar : group)) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' names no completion mechanism: a tensor {} needs {}", op,
                                              load ? "load" : "store", want),
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
  if ((store && im2col) || (load && ins.has_mod(".im2col_no_offs"))) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': {} is a {} mode", op, store ? ".im2col" : ".im2col_no_offs",
                                              store ? "load" : "store"),
                        "illegal-modifier");
    d.hint = store ? "a tensor store takes .tile or .im2col_no_offs" : "a tensor load takes .tile or .im2col";
    return;
  }
  if ((im2col || ins.has_mod(".im2col_no_offs")) && dims && dims < 3) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': im2col modes need a tensor of 3 to 5 dimensions", op),
                        "illegal-modifier");
    d.hint = "use .tile for a 1- or 2-dimensional tensor";
    return;
  }
  if (odd_mode || !dims) return;
  size_t want_ops = load ? 3 + im2col + multicast + hint_op : 2 + hint_op;
  if (ins.operands.size() != want_ops) {
    std::string form = load ? "[dst], [tmap, {coords}], [mbar]" : "[tmap, {coords}], [src]";
    if (im2col) form += ", {im2col offsets}";
    if (multicast) form += ", ctaMask";
    if (hint_op) form += ", cache-policy";
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes {} operands, found {}{}", op, want_ops, ins.operands.size(),
                                              multicast ? " (.multicast::cluster takes a 16-bit ctaMask)"
                                              : hint_op ? " (.L2::cache_hint takes a 64-bit cache policy)" : ""),
                        "operand-count");
    d.hint = fmt::format("operands: {}", form);
    return;
  }
  const Operand& t = ins.operands[load ? 1 : 0];
  if (t.kind == Operand::Kind::address && t.elems.size() == 1) {
    auto& d = at_operand(ctx, t, fmt::format("'{}' addresses the tensor as [tensor-map, {{coordinates}}]", op), "operand-kind");
    d.hint = fmt::format("write [%rd_tmap, {{{}}}] with one 32-bit coordinate per dimension",
                         dims == 1 ? "%r0" : dims == 2 ? "%r0, %r1" : "%r0, %r1, ...");
  } else if (t.kind == Operand::Kind::address && t.elems.size() == 2 && t.elems[1].kind == Operand::Kind::vector) {
    const Operand& v = t.elems[1];
    if (static_cast<int>(v.elems.size()) != dims) {
      auto& d = ctx.diags.error(v.loc, fmt::format("'{}' takes {} coordinate{} for .{}d, found {}", op, dims,
                                                   dims == 1 ? "" : "s", dims, v.elems.size()),
                                "vector-width");
      d.length = 1;
      d.hint = fmt::format("give one 32-bit coordinate per dimension, or write .{}d", v.elems.size() <= 5 ? v.elems.size() : 5);
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
  size_t next = load ? 3 : 2;
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
  if (multicast) {
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

// ---- the smaller ones -----------------------------------------------------------------------
void require(CheckContext& ctx, const Instruction& ins, std::string_view mod, const char* why, std::string hint) {
  if (ins.has_mod(mod)) return;
  auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs '{}'{}", ins.full_opcode(), mod, why), "missing-modifier");
  d.hint = std::move(hint);
}

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
//   [global], [shared], 128
void check_cp_fenceproxy(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
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
  require(ctx, ins, ".tile", ": the tensor-map mode", hint);
  require(ctx, ins, ".b1024", ": the size of the tensor map", hint);
  if (field.empty()) return;
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
// the x4 forms stochastically (.rs) only, .ue8m0x2 toward zero or +inf (.rz/.rp); widening from
// them is written .rn and takes no .satfinite or .relu ("Illegal rounding modifier").
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
  if (fam == "wgmma.mma_async") check_wgmma(ctx, ins);
  else if (fam == "cp.async.bulk.tensor") check_tensor_copy(ctx, ins, r);
  else if (fam == "setmaxnreg") check_setmaxnreg(ctx, ins, r);
  else if (fam == "elect.sync") check_elect(ctx, ins);
  else if (fam == "mbarrier.arrive" || fam == "mbarrier.arrive_drop") check_arrive(ctx, ins);
  else if (fam == "griddepcontrol") check_griddepcontrol(ctx, ins);
  else if (fam == "tensormap.cp_fenceproxy") check_cp_fenceproxy(ctx, ins, r);
  else if (fam == "tensormap.replace") check_tensormap_replace(ctx, ins);
  else if (fam == "cvt") check_narrow_cvt(ctx, ins, r);
}

}  // namespace ptxforge::ptx
