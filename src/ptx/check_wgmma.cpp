// Operand and modifier rules of the warpgroup MMA (wgmma.mma_async and its sparse form
// wgmma.mma_async.sp): shapes per input type,
// type pairing, accumulator types, operand counts, descriptor widths and the scale and
// transpose immediates. Confirmed against ptxas 13.0 by rules_async_test.cpp (WgmmaOperands).
#include <cstdio>
#include <vector>

#include "ptx/check_async_internal.h"

namespace ptxforge::ptx::async_rules {

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

void check_wgmma(CheckContext& ctx, const Instruction& ins, bool sparse) {
  std::string op = ins.full_opcode();
  // The sparse form (wgmma.mma_async.sp) reads A as half as wide: K doubles, and the metadata
  // register and the sparsity selector follow the B descriptor.
  size_t off = sparse ? 2 : 0;
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
  if (!have_shape) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' names no shape", op), "missing-modifier");
    d.hint = "write the shape after .aligned: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16";
    return;
  }
  if (types.size() != 3) return;  // check_async_forms.cpp counts the types
  std::string_view dtype = types[0], atype = types[1], btype = types[2];
  auto cls = wgmma_class(atype);
  if (!cls || !wgmma_class(btype)) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': {} is not a wgmma input type", op, cls ? btype : atype),
                        "illegal-modifier");
    d.hint = "write .<dtype>.<atype>.<btype>: inputs .f16 .bf16 .tf32 .e4m3 .e5m2 .s8 .u8 .b1, e.g. .f32.bf16.bf16";
    return;
  }
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
  int want_k = sparse ? 2 * cls->k : cls->k;
  if (sparse && atype == ".b1") {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': sparse wgmma has no .b1 form", op), "illegal-modifier");
    d.hint = "use wgmma.mma_async (dense) for .b1 inputs";
    return;
  }
  if (!sparse && int_in && atype != btype && ctx.facts.version && *ctx.facts.version < PtxVersion{8, 4}) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': mixed .s8/.u8 inputs need PTX ISA .version 8.4 or later (module "
                                              "has {})", op, ctx.facts.version->str()),
                        "needs-version");
    d.hint = "raise the header to '.version 8.4'";
  }
  bool n_ok = n >= 8 && n <= 256 && n % 8 == 0 && (!int_in || n <= 32 || n % 16 == 0);
  if (m != 64 || k != want_k || !n_ok) {
    std::string ns = int_in ? "8, 16, 24, 32, 48, ... 256 (multiples of 16 above 32)" : "a multiple of 8 from 8 to 256";
    auto& d = at_opcode(ctx, ins, fmt::format("'{}': shape .m{}n{}k{} is not a wgmma shape for {} inputs", op, m, n, k,
                                              atype),
                        "illegal-modifier");
    d.hint = fmt::format("{}{} inputs take .m64nNk{}, N {}", sparse ? "sparse " : "", cls->name, want_k, ns);
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
  size_t want = (reg_a ? cls->ops_reg : cls->ops_desc) + off;
  if (count != want) {
    if (!sparse && cls->ops_desc == 6 && count == 8) return;
    const char* shape = cls->ops_desc == 8
                            ? (reg_a ? "d, {a}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b"
                                     : "d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b")
                        : cls->ops_desc == 6 ? "d, a, b-desc, scale-d, imm-scale-a, imm-scale-b"
                                             : "d, a, b-desc, scale-d";
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes {} operands for {} inputs{}, found {}", op, want, atype,
                                              cls->ops_desc == 8 ? (reg_a ? " with A in registers" : " with A in a descriptor") : "",
                                              count),
                        "operand-count");
    d.hint = sparse ? fmt::format("operands: {} (sp-meta and sp-selector after b-desc)", shape)
                    : fmt::format("operands: {}", shape);
    return;
  }
  if (sparse) {
    // sp-meta: a 32-bit register; the selector: an immediate, 0..1 for 16-bit and tf32
    // inputs, 0 for fp8 and 8-bit integers ("Arguments mismatch", "unexpected value").
    const Operand& meta = ins.operands[3];
    const SymbolInfo* ms = reg_of(ctx, meta);
    if (meta.kind != Operand::Kind::expr || literal(meta)) {
      auto& d = at_operand(ctx, meta, fmt::format("sp-meta of '{}' is a register holding the sparsity metadata", op),
                           "operand-kind");
      d.hint = "pass the metadata in a .b32 register";
    } else if (ms && ms->type != ".pred" && type_bits(ms->type) != 32) {  // ptxas takes a predicate
      auto& d = at_operand(ctx, meta, fmt::format("sp-meta of '{}' is 32 bits, but '{}' is {}", op, meta.expr.text,
                                                  ms->type),
                           "operand-type");
      d.hint = "pass the metadata in a .b32 register";
    }
    const Operand& sel = ins.operands[4];
    int64_t top = cls->k == 16 || cls->k == 8 ? 1 : 0;
    if (auto v = literal(sel); v && (*v < 0 || *v > top)) {
      auto& d = at_operand(ctx, sel, fmt::format("the sparsity selector of '{}' is {}: {} inputs take {}", op, *v, atype,
                                                 top ? "0 or 1" : "only 0"),
                           "immediate-value");
      d.hint = top ? "write 0 or 1 (which thread pair of the quad supplies the metadata)" : "write 0";
    } else if (!v && sel.kind == Operand::Kind::expr && reg_of(ctx, sel)) {
      auto& d = at_operand(ctx, sel, fmt::format("the sparsity selector of '{}' must be an immediate", op), "operand-kind");
      d.hint = top ? "write 0 or 1" : "write 0";
    } else if (sel.kind != Operand::Kind::expr) {
      auto& d = at_operand(ctx, sel, fmt::format("the sparsity selector of '{}' is an immediate", op), "operand-kind");
      d.hint = top ? "write 0 or 1" : "write 0";
    }
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
  const Operand& sd = ins.operands[3 + off];
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
  for (size_t i = 4; i + off < count; ++i) {
    const Operand& o = ins.operands[i + off];
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

}  // namespace ptxforge::ptx::async_rules
