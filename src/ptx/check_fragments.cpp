// Matrix fragments: the number of registers each thread passes to mma.sync,
// wgmma.mma_async, ldmatrix and stmatrix follows from the shape, the element types and .xN
// [vector-width], and the
// registers must be of the fragment's width [operand-type]. ptxas reports these as
// "Argument vector size mismatch" without saying what it expected; we say how many.
#include <charconv>

#include <fmt/format.h>

#include "ptx/check_context.h"
#include "ptx/printer.h"

namespace ptxforge::ptx {

namespace {

struct Shape {
  int m = 0, n = 0, k = 0;
};

std::optional<Shape> shape_of(const Instruction& ins) {
  for (auto& mod : ins.mods) {
    if (mod.size() < 7 || mod[1] != 'm') continue;
    Shape s;
    const char* p = mod.data() + 2;
    const char* end = mod.data() + mod.size();
    auto r1 = std::from_chars(p, end, s.m);
    if (r1.ec != std::errc() || r1.ptr == end || *r1.ptr != 'n') continue;
    auto r2 = std::from_chars(r1.ptr + 1, end, s.n);
    if (r2.ec != std::errc() || r2.ptr == end || *r2.ptr != 'k') continue;
    auto r3 = std::from_chars(r2.ptr + 1, end, s.k);
    if (r3.ec != std::errc() || r3.ptr != end) continue;
    return s;
  }
  return std::nullopt;
}

std::vector<std::string_view> types_of(const Instruction& ins) {
  std::vector<std::string_view> out;
  for (auto& m : ins.mods)
    if (is_type_name(m)) out.push_back(m);
  return out;
}

// Registers per thread for a rows x cols fragment of `type` spread over `threads`.
int fragment_regs(int rows, int cols, std::string_view type, int threads) {
  int bits = type_bits(type);
  int reg_bits = bits == 64 ? 64 : 32;
  long total = static_cast<long>(rows) * cols * bits;
  long per = static_cast<long>(threads) * reg_bits;
  return total % per == 0 ? static_cast<int>(total / per) : 0;
}

std::string_view register_type_for(std::string_view element) {
  if (element == ".f16") return ".f16x2";
  if (element == ".bf16") return ".bf16x2";
  if (element == ".f32" || element == ".f64" || element == ".s32") return element;
  if (element == ".s8" || element == ".u8" || element == ".s4" || element == ".u4" || element == ".b1") return ".s32";
  return "";
}

void check_fragment(CheckContext& ctx, const Instruction& ins, size_t index, const char* what, int want,
                    std::string_view type, const std::string& why) {
  if (index >= ins.operands.size() || want <= 0) return;
  const Operand& o = ins.operands[index];
  if (o.kind != Operand::Kind::vector) return;  // a descriptor or a single register: other checks apply
  if (static_cast<int>(o.elems.size()) != want) {
    auto& d = ctx.diags.error(o.loc, fmt::format("'{}' takes {} register{} for {} ({}), found {}", ins.full_opcode(),
                                                 want, want == 1 ? "" : "s", what, why, o.elems.size()),
                              "vector-width");
    d.length = static_cast<uint32_t>(print(o).size());
    return;
  }
  // What one register of the fragment holds (confirmed against ptxas: .f16 fragments take
  // .f16x2 or .b32 registers but not .u32 or .f32; .f32 accumulators take .f32 or .b32).
  // ptxas types a {...} as one value: its registers' common type, or a .b32 when they differ
  // without mixing integers and floats (that mix is an error of its own). So {%u1, %r2, %r3,
  // %r4} with %r2 .b32 passes for .bf16, and four .u32 registers do not.
  std::string_view reg_type = register_type_for(type);
  const Expr* first = nullptr;
  const SymbolInfo* first_decl = nullptr;
  const SymbolInfo *integer = nullptr, *floating = nullptr;
  bool uniform = true;
  for (auto& e : o.elems) {
    if (e.kind != Operand::Kind::expr || e.expr.kind != Expr::Kind::name) continue;
    const SymbolInfo* s = ctx.scopes.find(e.expr.text);
    if (!s || s->kind != SymbolInfo::Kind::reg) continue;
    if (!first) first = &e.expr, first_decl = s;
    uniform = uniform && s->type == first_decl->type;
    char k = type_kind(s->type);
    if ((k == 'u' || k == 's') && !integer) integer = s;
    if (k == 'f' && !floating) floating = s;
  }
  if (!first) return;
  if (integer && floating) {
    auto& d = ctx.diags.error(o.loc, fmt::format("the {} fragment of '{}' mixes integer ({}) and float ({}) registers", what,
                                                 ins.full_opcode(), integer->type, floating->type),
                              "operand-type");
    d.length = static_cast<uint32_t>(print(o).size());
    d.hint = "give the fragment registers of one type (.b32 goes with either)";
    return;
  }
  if (!uniform) return;
  std::string_view have = first_decl->type;
  bool ok;
  if (!reg_type.empty()) {
    auto [bits, kind] = type_facts(have);
    ok = compatible_types(have, reg_type) && !(kind == 'f' && type_kind(reg_type) == 'f' && have != reg_type);
    ok = ok || (bits == 32 && kind == 'b' && type_bits(reg_type) == 32);
  } else {  // tf32, fp8 and other packed inputs: any 32-bit non-float register
    auto [bits, kind] = type_facts(have);
    ok = bits == 32 && kind != 'f' && kind != 'p';
  }
  if (ok) return;
  std::string needs = reg_type.empty() ? std::string(".b32 (or 32-bit integer)")
                                      : fmt::format("{} (or .b{})", reg_type, type_bits(reg_type));
  auto& d = ctx.diags.error(first->loc, fmt::format("the {} fragment's registers are {} ('{}' ...), but the fragment "
                                                    "needs {} registers", what, have, first->text, needs),
                            "operand-type");
  d.length = static_cast<uint32_t>(first->text.size());
  d.notes.push_back({first_decl->loc, "declared here"});
}

// ldmatrix/stmatrix .m8n8 .xN: a {...} of exactly N 32-bit registers (ptxas: "Vector of size N
// is expected", also for .x1 with a bare register).
void check_matrix_move(CheckContext& ctx, const Instruction& ins, size_t data_index) {
  if (!ins.has_mod(".m8n8") || data_index >= ins.operands.size()) return;
  int want = ins.has_mod(".x1") ? 1 : ins.has_mod(".x2") ? 2 : ins.has_mod(".x4") ? 4 : 0;
  if (want == 0) return;
  const Operand& o = ins.operands[data_index];
  if (o.kind != Operand::Kind::vector || static_cast<int>(o.elems.size()) != want) {
    auto& d = ctx.diags.error(o.loc, fmt::format("'{}' moves {} 8x8 matri{} and needs a {{...}} of {} register{}",
                                                 ins.full_opcode(), want, want == 1 ? "x" : "ces", want,
                                                 want == 1 ? "" : "s"),
                              "vector-width");
    d.length = static_cast<uint32_t>(print(o).size());
    if (o.kind != Operand::Kind::vector) d.hint = fmt::format("write {{{}}}", print(o));
    return;
  }
  for (auto& e : o.elems) {
    if (e.kind != Operand::Kind::expr || e.expr.kind != Expr::Kind::name) continue;
    const SymbolInfo* s = ctx.scopes.find(e.expr.text);
    if (!s || s->kind != SymbolInfo::Kind::reg) continue;
    auto [bits, kind] = type_facts(s->type);
    if (bits == 32 || kind == 'p') continue;  // ptxas 13.0 takes a predicate here too
    auto& d = ctx.diags.error(e.loc, fmt::format("'{}' is {}, but each register of '{}' holds 32 bits", e.expr.text,
                                                 s->type, ins.full_opcode()),
                              "operand-type");
    d.length = static_cast<uint32_t>(e.expr.text.size());
    d.notes.push_back({s->loc, "declared here"});
    return;
  }
}

}  // namespace

void check_fragments(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  if (r.family->name == "ldmatrix") return check_matrix_move(ctx, ins, 0);
  if (r.family->name == "stmatrix") return check_matrix_move(ctx, ins, 1);
  auto shape = shape_of(ins);
  if (!shape) return;
  for (auto& m : ins.mods)
    if (m.rfind(".kind::", 0) == 0 || m == ".block_scale" || m == ".sp") return;  // other layouts
  auto types = types_of(ins);
  const Shape& s = *shape;
  if (r.family->name == "mma") {
    // m8n8k4 is a quad-pair operation with its own layout; the rest follow the warp formula.
    if (s.m == 8 && s.k == 4) return;
    if (types.size() != 4) return;
    auto why = [&](int rows, int cols, std::string_view t) { return fmt::format("{}x{} {} over 32 threads", rows, cols, t); };
    check_fragment(ctx, ins, 0, "D", fragment_regs(s.m, s.n, types[0], 32), types[0], why(s.m, s.n, types[0]));
    check_fragment(ctx, ins, 1, "A", fragment_regs(s.m, s.k, types[1], 32), types[1], why(s.m, s.k, types[1]));
    check_fragment(ctx, ins, 2, "B", fragment_regs(s.k, s.n, types[2], 32), types[2], why(s.k, s.n, types[2]));
    check_fragment(ctx, ins, 3, "C", fragment_regs(s.m, s.n, types[3], 32), types[3], why(s.m, s.n, types[3]));
  } else if (r.family->name == "wgmma.mma_async") {
    if (types.size() != 3 || s.m != 64) return;
    check_fragment(ctx, ins, 0, "D", fragment_regs(s.m, s.n, types[0], 128), types[0],
                   fmt::format("64x{} {} over 128 threads", s.n, types[0]));
    check_fragment(ctx, ins, 1, "A", fragment_regs(s.m, s.k, types[1], 128), types[1],
                   fmt::format("64x{} {} over 128 threads", s.k, types[1]));
  }
}

}  // namespace ptxforge::ptx
