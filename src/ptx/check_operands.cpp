// Checks on operands: every name is declared [undeclared-reg, undeclared-symbol,
// undeclared-label, x86-register]; the operand count matches a form of the family
// [operand-count]; each operand has the right kind [operand-kind], vector width
// [vector-width] and type under the manual's relaxed type-checking rules [operand-type];
// immediates fit and are of the right sort [immediate-type, immediate-range].
#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "ptx/check_context.h"
#include "ptx/printer.h"
#include "util/text.h"

namespace ptxforge::ptx {

void collect_names(const Expr& e, ExprRefs& out) {
  if (e.kind == Expr::Kind::name) out.push_back(&e);
  for (auto& a : e.args) collect_names(a, out);
}

void collect_names(const Operand& o, ExprRefs& out) {
  if (o.kind == Operand::Kind::expr) collect_names(o.expr, out);
  for (auto& e : o.elems) collect_names(e, out);
}

namespace {

// CUDA C++ names for special registers, as models write them.
std::string_view cuda_special_register(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> table[] = {
      {"%threadIdx", "%tid"}, {"%blockIdx", "%ctaid"}, {"%blockDim", "%ntid"}, {"%gridDim", "%nctaid"},
      {"%lane_id", "%laneid"}, {"%laneId", "%laneid"}, {"%lane", "%laneid"}, {"%warp_id", "%warpid"},
      {"%warpId", "%warpid"}, {"%threadidx", "%tid"}, {"%blockidx", "%ctaid"}, {"%thread_id", "%tid"},
      {"%block_id", "%ctaid"}, {"%clock64", "%clock64"}, {"%smid", "%smid"}};
  std::string_view base = name.substr(0, name.find('.'));
  for (auto& [from, to] : table)
    if (base == from) return to;
  return {};
}

bool is_branch(const Resolved& r) { return r.family && (r.family->name == "bra" || r.family->name == "brx.idx"); }

void report_undeclared_reg(CheckContext& ctx, const Expr& n) {
  if (is_x86_register(n.text)) {
    auto& d = ctx.diags.error(n.loc, fmt::format("'{}' is an x86 register; PTX has no fixed registers", n.text),
                              "x86-register");
    d.length = static_cast<uint32_t>(n.text.size());
    d.hint = "PTX registers are virtual and declared with .reg, e.g. '.reg .b64 %rd<8>;' then use %rd0..%rd7";
    return;
  }
  auto& d = ctx.diags.error(n.loc, fmt::format("register '{}' is not declared", n.text), "undeclared-reg");
  d.length = static_cast<uint32_t>(n.text.size());
  if (std::string_view special = cuda_special_register(n.text); !special.empty()) {
    size_t dot = n.text.find('.');
    std::string fixed = std::string(special) + (dot == std::string_view::npos ? "" : std::string(n.text.substr(dot)));
    d.hint = fmt::format("the special register is spelled '{}' in PTX (read it with mov.u32 %r, {};)", fixed, fixed);
    d.fixit = FixIt{n.loc, static_cast<uint32_t>(n.text.size()), fixed};
    return;
  }
  size_t digits = n.text.find_first_of("0123456789");
  std::string_view prefix = n.text.substr(0, digits);
  // The conventional type for nvcc's register prefixes.
  std::string type = prefix == "%rd" ? ".b64" : prefix == "%p" ? ".pred" : prefix == "%f" ? ".f32"
                     : prefix == "%fd" ? ".f64" : (prefix == "%rs" || prefix == "%h") ? ".b16" : ".b32";
  unsigned long index = 0;
  if (digits != std::string::npos && digits > 1) {
    std::from_chars(n.text.data() + digits, n.text.data() + n.text.size(), index);
    d.hint = fmt::format("declare it, e.g. '.reg {} {}<{}>;' (a range declares {}0 .. {}{})", type, prefix,
                         index + 1, prefix, prefix, index);
  } else
    d.hint = fmt::format("declare it with '.reg .<type> {};'", n.text);
}

}  // namespace

void check_names(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  if (ins.guard) {
    const SymbolInfo* s = ctx.scopes.find(ins.guard->reg);
    Expr g;
    g.text = ins.guard->reg;
    g.loc = ins.guard->loc;
    g.loc.col += ins.guard->negated ? 2 : 1;
    if (!s) {
      report_undeclared_reg(ctx, g);
    } else if (s->kind != SymbolInfo::Kind::reg || s->type != ".pred") {
      auto& d = ctx.diags.error(g.loc, fmt::format("guard '{}' is not a .pred register", g.text), "operand-type");
      d.length = static_cast<uint32_t>(g.text.size());
      d.notes.push_back({s->loc, "declared here"});
      d.hint = "compute a predicate with setp (setp.lt.s32 %p1, %r1, %r2;) and guard with @%p1";
    }
  }
  bool branch = is_branch(r);
  for (size_t oi = 0; oi < ins.operands.size(); ++oi) {
    ExprRefs names;
    collect_names(ins.operands[oi], names);
    const Operand& op = ins.operands[oi];
    if (op.kind == Operand::Kind::address && op.elems.size() == 1 && op.elems[0].kind == Operand::Kind::expr) {
      // [reg], [var], [reg+imm], [var+imm], [imm]: one name at most. [var+%r] is a syntax error to ptxas.
      ExprRefs in_address;
      collect_names(op.elems[0].expr, in_address);
      if (in_address.size() > 1) {
        const Expr* second = in_address[1];
        auto& d = ctx.diags.error(second->loc, fmt::format("an address is a register or a variable plus a constant "
                                                           "offset; '{}' cannot be added inside [ ]", second->text),
                                  "address-form");
        d.length = static_cast<uint32_t>(second->text.size());
        d.hint = fmt::format("compute the address first: mov.u64 %rd, {}; then add the offset (cvt it to 64 bits) and use [%rd]",
                             in_address[0]->text);
      }
    }
    for (const Expr* n : names) {
      std::string_view t = n->text;
      if (t == "_") continue;
      if (t[0] == '%') {
        if (ctx.scopes.find(t)) continue;
        if (size_t dot = t.find('.'); dot != std::string::npos && is_special_register(t)) {
          // `.reg .b32 %tid;` hides the special register: ptxas then reads `%tid.x` as a
          // video selector on the register and rejects it.
          std::string_view base = std::string_view(t).substr(0, dot);
          if (const SymbolInfo* s = ctx.scopes.find(base)) {
            auto& d = ctx.diags.error(n->loc, fmt::format("'{}' is declared as a register, which hides the special register, "
                                                          "so '{}' is not the special register's component", base, t),
                                      "shadowed-special-reg");
            d.length = static_cast<uint32_t>(t.size());
            d.notes.push_back({s->loc, "declared here"});
            d.hint = fmt::format("rename the register (e.g. %r_{}) so that {} reads the special register", base.substr(1), t);
            continue;
          }
        }
        if (is_special_register(t)) continue;
        report_undeclared_reg(ctx, *n);
        continue;
      }
      const bool is_label = ctx.find_label(t) != nullptr;
      if (is_label || ctx.scopes.find(t) || is_special_register(t)) {
        if (branch && oi == ins.operands.size() - 1 && !is_label) {
          auto& d = ctx.diags.error(n->loc, fmt::format("branch target '{}' is not a label", t), "branch-target");
          d.length = static_cast<uint32_t>(t.size());
        }
        continue;
      }
      if (branch) {
        if (const Label* other = ctx.find_label_anywhere(t)) {
          auto& d = ctx.diags.error(n->loc, fmt::format("label '{}' is inside a {{ }} block that does not enclose this "
                                                        "branch", t), "undeclared-label");
          d.length = static_cast<uint32_t>(t.size());
          d.notes.push_back({other->loc, "defined here"});
          d.hint = "labels are scoped to their { } block: a branch reaches labels of its own block and the blocks "
                   "around it; move the label out of the inner block";
          continue;
        }
        auto& d = ctx.diags.error(n->loc, fmt::format("branch target '{}' is not a label in this function", t),
                                  "undeclared-label");
        d.length = static_cast<uint32_t>(t.size());
        std::vector<std::string_view> labels;
        for (auto& frame : ctx.label_scopes)
          for (auto& [name, loc] : frame) labels.push_back(name);
        std::string guess = closest_match(t, labels);
        if (!guess.empty()) {
          d.hint = fmt::format("did you mean '{}'?", guess);
          d.fixit = FixIt{n->loc, static_cast<uint32_t>(t.size()), guess};
        }
        continue;
      }
      if (r.family && r.family->name == "call") continue;  // the call check reports callees
      auto& d = ctx.diags.error(n->loc, fmt::format("'{}' is not declared", t), "undeclared-symbol");
      d.length = static_cast<uint32_t>(t.size());
      if (std::isalpha(static_cast<unsigned char>(t[0])) && t.size() <= 6)
        d.hint = "registers start with '%' (e.g. %r1); other names must be declared variables, parameters or labels";
    }
  }
}

namespace {

// The relaxed type-checking rules of the PTX ISA manual ("Operand Type Information",
// "Relaxed type-checking rules" for ld/st/cvt), confirmed against ptxas:
//   same size: .bN matches anything of N bits; .uN and .sN match each other; floats match floats.
//   ld/st/cvt: the register may be wider than the instruction type when it is .bN, or an
//              integer register for an integer/bit instruction type.
bool compatible(std::string_view reg, std::string_view ins, bool relaxed);
}  // namespace

bool compatible_types(std::string_view reg, std::string_view ins) { return compatible(reg, ins, false); }

namespace {
bool compatible(std::string_view reg, std::string_view ins, bool relaxed) {
  auto [rb, rk] = type_facts(reg);
  auto [ib, ik] = type_facts(ins);
  if (!rb || !ib || rk == 'o' || ik == 'o') return true;  // unknown: no alarm
  // .bf16 is no register type: its values live in .b16 registers (.bf16x2 in .b32), and
  // ptxas takes nothing else for an operand of a .bf16 instruction, not even under the
  // relaxed rules (a .f16 or .b32 register: "Arguments mismatch").
  if (ins == ".bf16" || ins == ".bf16x2") return rk == 'b' && rb == ib;
  if (ins == ".f16x2" && rk == 'f') return reg == ".f16x2";  // not a .f32 register
  if (rk == 'p' || ik == 'p') return rk == ik;
  if (rb == ib) {
    if (rk == 'b' || ik == 'b' || rk == ik) return true;
    return (rk == 'u' || rk == 's') && (ik == 'u' || ik == 's');
  }
  // (a .bN instruction type takes any wider register: ld.global.b32 %fd1 assembles)
  if (relaxed && rb > ib) return rk == 'b' || ik == 'b' || ((rk == 'u' || rk == 's') && (ik == 'u' || ik == 's'));
  if (relaxed && ib == 8 && rb == 16) return true;
  return false;
}

struct Literal {
  bool is_float = false;
  bool is_hex_float = false;  // 0f / 0d bit patterns
  bool negative = false;
  bool fits64 = true;
  uint64_t magnitude = 0;
};

std::optional<Literal> literal_of(const Expr& e) {
  const Expr* x = &e;
  Literal lit;
  while (x->kind == Expr::Kind::unary && x->text == "-") lit.negative = !lit.negative, x = &x->args[0];
  if (x->kind == Expr::Kind::floating) {
    lit.is_float = true;
    lit.is_hex_float = x->text.size() > 2 && x->text[0] == '0' && std::string_view("fFdD").find(x->text[1]) != std::string_view::npos;
    return lit;
  }
  if (x->kind != Expr::Kind::integer) return std::nullopt;
  std::string_view s = x->text;
  if (!s.empty() && (s.back() == 'U' || s.back() == 'u')) s.remove_suffix(1);
  int base = 10;
  if (s.size() > 2 && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  else if (s.size() > 2 && (s[1] == 'b' || s[1] == 'B')) base = 2, s.remove_prefix(2);
  else if (s.size() > 1 && s[0] == '0') base = 8, s.remove_prefix(1);
  auto res = std::from_chars(s.data(), s.data() + s.size(), lit.magnitude, base);
  lit.fits64 = res.ec == std::errc();
  return lit;
}

// An integer where a float belongs: a hex literal is almost always a bit pattern written
// with C's 0x (PTX spells it 0f for .f32, 0d for .f64); a decimal one is a value.
std::string float_literal_hint(const Expr& e, const Literal& lit, std::string_view type) {
  const Expr* x = &e;
  while (x->kind == Expr::Kind::unary && !x->args.empty()) x = &x->args[0];
  bool hex = x->text.size() > 2 && (x->text[1] == 'x' || x->text[1] == 'X');
  bool f64 = type == ".f64";
  if (hex && !lit.negative && lit.fits64 && (f64 || lit.magnitude <= 0xFFFFFFFFull) && (type == ".f32" || f64)) {
    double value;
    if (f64) {
      std::memcpy(&value, &lit.magnitude, sizeof value);
    } else {
      uint32_t bits32 = static_cast<uint32_t>(lit.magnitude);
      float f;
      std::memcpy(&f, &bits32, sizeof f);
      value = f;
    }
    std::string pattern = f64 ? fmt::format("0d{:016X}", lit.magnitude) : fmt::format("0f{:08X}", lit.magnitude);
    return fmt::format("a bit pattern is written {} in PTX (the value {}), not with C's 0x", pattern, value);
  }
  return fmt::format("write a floating-point literal: {}{}.0 or its bit pattern (0f...)", lit.negative ? "-" : "",
                     lit.magnitude);
}

bool fits(const Literal& lit, int bits) {
  if (!lit.fits64) return false;
  if (bits >= 64) return true;
  uint64_t umax = (uint64_t{1} << bits) - 1;
  if (!lit.negative) return lit.magnitude <= umax;
  return lit.magnitude <= (uint64_t{1} << (bits - 1));
}

std::string_view widen(std::string_view t) {
  static const std::pair<std::string_view, std::string_view> table[] = {
      {".u16", ".u32"}, {".s16", ".s32"}, {".u32", ".u64"}, {".s32", ".s64"}, {".b16", ".b32"}, {".b32", ".b64"},
      {".f32", ".f64"}};
  for (auto& [a, b] : table)
    if (a == t) return b;
  return "";
}

struct OperandChecker {
  CheckContext& ctx;
  const Instruction& ins;
  const Resolved& r;
  std::string opname;

  void error(const Operand& o, std::string msg, const char* id, std::string hint = {}) {
    auto& d = ctx.diags.error(o.loc, std::move(msg), id);
    d.length = static_cast<uint32_t>(std::max<size_t>(1, print(o).size()));
    d.hint = std::move(hint);
  }

  const SymbolInfo* reg_of(const Operand& o, const Expr** name = nullptr) {
    if (o.kind != Operand::Kind::expr || o.expr.kind != Expr::Kind::name) return nullptr;
    if (name) *name = &o.expr;
    const SymbolInfo* s = ctx.scopes.find(o.expr.text);
    return s && s->kind == SymbolInfo::Kind::reg ? s : nullptr;
  }

  // One scalar operand against the expected type.
  void check_typed(const Operand& o, std::string_view type, char kind, bool relaxed, int pos) {
    if (o.kind == Operand::Kind::sink) return;
    if (o.kind != Operand::Kind::expr) {
      error(o, fmt::format("operand {} of '{}' must be a {} value, not {}", pos, opname, type,
                           o.kind == Operand::Kind::address ? "a memory address" : "a list"), "operand-kind",
            o.kind == Operand::Kind::address ? "only ld/st/atom/red and friends take [addresses]" : "");
      return;
    }
    if (auto lit = literal_of(o.expr)) {
      if (kind == 'd' || kind == 'r' || kind == 'w') {
        error(o, fmt::format("operand {} of '{}' must be a register, not an immediate", pos, opname), "operand-kind");
        return;
      }
      char tk = type_kind(type);
      if (lit->is_float && (tk == 'u' || tk == 's')) {
        error(o, fmt::format("floating-point literal used as a {} operand of '{}'", type, opname), "immediate-type",
              "integer instructions take integer literals; use a .f32/.f64 instruction for float math");
      } else if (lit->is_float && !lit->is_hex_float && tk == 'b') {
        error(o, fmt::format("decimal floating-point literal used as a {} operand of '{}'", type, opname),
              "immediate-type", "bit-typed operands take 0f/0d bit patterns, e.g. 0f3F800000 for 1.0");
      } else if (!lit->is_float && tk == 'f') {
        error(o, fmt::format("integer literal used as a {} operand of '{}'", type, opname), "immediate-type",
              float_literal_hint(o.expr, *lit, type));
        bool hex = o.expr.kind == Expr::Kind::integer && o.expr.text.size() > 2 && (o.expr.text[1] == 'x' || o.expr.text[1] == 'X');
        if (hex && lit->fits64 && (type == ".f64" || (type == ".f32" && lit->magnitude <= 0xFFFFFFFFull)))
          ctx.diags.list().back().fixit =
              FixIt{o.loc, static_cast<uint32_t>(o.expr.text.size()),
                    type == ".f64" ? fmt::format("0d{:016X}", lit->magnitude) : fmt::format("0f{:08X}", lit->magnitude)};
      } else if (!lit->is_float && (tk == 'u' || tk == 's' || tk == 'b') && !fits(*lit, type_bits(type)) &&
                 ctx.want_warnings()) {
        auto& d = ctx.diags.warning(o.loc, fmt::format("immediate {} does not fit in {} (ptxas truncates it silently)",
                                                       print(o.expr), type), "immediate-range");
        d.length = static_cast<uint32_t>(print(o.expr).size());
      }
      return;
    }
    const Expr* name = nullptr;
    const SymbolInfo* s = reg_of(o, &name);
    if (!s) {
      if (o.expr.kind == Expr::Kind::name && is_special_register(o.expr.text) && (kind == 'a' || kind == 's')) {
        std::string_view st = special_register_type(o.expr.text);
        if (!compatible(st, type, relaxed) && !special_register_reads_as(o.expr.text, type))
          error(o, fmt::format("'{}' is {}, but '{}' reads it as {}", o.expr.text, st, opname, type), "operand-type",
                fmt::format("special registers are read with mov{} (then cvt to other widths)", st));
      }
      return;  // symbols, expressions, undeclared names (reported elsewhere)
    }
    if (s->vec) return;
    if (!compatible(s->type, type, relaxed)) {
      std::string why = type_bits(s->type) != type_bits(type)
                            ? fmt::format("a {}-bit register where '{}' needs {} bits", type_bits(s->type), opname,
                                          type_bits(type))
                            : fmt::format("a {} register where '{}' needs {}", s->type, opname, type);
      auto& d = ctx.diags.error(o.loc, fmt::format("operand {} '{}' is {}", pos, o.expr.text, why), "operand-type");
      d.length = static_cast<uint32_t>(o.expr.text.size());
      d.notes.push_back({s->loc, fmt::format("'{}' declared {} here", o.expr.text, s->type)});
      if (s->type == ".pred")
        d.hint = fmt::format("a predicate is not a number: turn it into one with selp, e.g. selp{0} %v, 1, 0, {1}; "
                             "then use %v", type_kind(type) == 'f' ? std::string(type) : ".u" + std::to_string(std::max(16, type_bits(type))),
                             o.expr.text);
      else if (type == ".bf16" || type == ".bf16x2")
        d.hint = fmt::format("bf16 values live in .b{0} registers: declare '{1}' .b{0}", type_bits(type), o.expr.text);
      else if (type_bits(s->type) != type_bits(type))
        d.hint = "convert with cvt first, or use a register of the right width";
      else
        d.hint = fmt::format("use a {} (or .b{}) register, or reinterpret with mov.b{}", type, type_bits(type),
                             type_bits(type));
    }
  }

  void check_pred(const Operand& o, int pos, bool allow_pair) {
    if (o.kind == Operand::Kind::sink) return;
    ExprRefs names;
    const Expr* e = &o.expr;
    if (o.kind != Operand::Kind::expr) {
      error(o, fmt::format("operand {} of '{}' must be a predicate register", pos, opname), "operand-kind");
      return;
    }
    if (e->kind == Expr::Kind::unary && e->text == "!") e = &e->args[0];
    if (allow_pair && e->kind == Expr::Kind::binary && e->text == "|") {
      names.push_back(&e->args[0]);
      names.push_back(&e->args[1]);
    } else {
      names.push_back(e);
    }
    for (const Expr* n : names) {
      if (n->kind != Expr::Kind::name) {
        if (literal_of(*n)) continue;  // selp/vote accept constant predicates in some forms
        error(o, fmt::format("operand {} of '{}' must be a predicate register", pos, opname), "operand-kind");
        return;
      }
      const SymbolInfo* s = ctx.scopes.find(n->text);
      if (s && s->kind == SymbolInfo::Kind::reg && s->type != ".pred" && n->text != "_") {
        auto& d = ctx.diags.error(n->loc, fmt::format("operand {} '{}' is {}, but '{}' needs a .pred register", pos,
                                                      n->text, s->type, opname), "operand-type");
        d.length = static_cast<uint32_t>(n->text.size());
        d.notes.push_back({s->loc, "declared here"});
      }
    }
  }

  // The registers of one {...} in ld, st or mov: one width (ptxas: "Incompatible elements of
  // vector expression"), and not integers beside floats ("Vector with elements of different
  // types are not allowed"; .bN goes with either).
  // Returns false when it reported.
  bool check_elements_agree(const Operand& o) {
    const std::string_view family = r.family->name;
    if (family != "ld" && family != "st" && family != "mov") return true;
    const SymbolInfo *first = nullptr, *integer = nullptr, *floating = nullptr;
    for (auto& e : o.elems) {
      const SymbolInfo* s = reg_of(e);
      if (!s || s->vec) continue;
      if (!first) first = s;
      const char k = type_kind(s->type);
      if (k == 'u' || k == 's') integer = integer ? integer : s;
      if (k == 'f') floating = floating ? floating : s;
      if (type_bits(s->type) != type_bits(first->type)) {
        error(o, fmt::format("the registers of operand {{...}} of '{}' differ in width ({} and {})", opname, first->type,
                             s->type),
              "vector-width", "give every element of a vector the same width");
        return false;
      }
    }
    if (!integer || !floating) return true;
    error(o, fmt::format("the registers of operand {{...}} of '{}' mix integer ({}) and float ({}) types", opname,
                         integer->type, floating->type),
          "operand-type", "use registers of one type in a vector (a .bN register goes with either)");
    return false;
  }

  void check_vector_or_scalar(const Operand& o, std::string_view type, char kind, bool relaxed, int pos) {
    uint32_t want = 0;
    bool other_width = false;  // .v3, .v16: unknown-modifier has reported it
    for (auto& m : ins.mods) {
      if (m == ".v2" || m == ".v4" || m == ".v8") want = static_cast<uint32_t>(m[2] - '0');
      else if (m.size() > 2 && m[1] == 'v' && std::isdigit(static_cast<unsigned char>(m[2]))) other_width = true;
    }
    if (o.kind == Operand::Kind::vector) {
      if (want == 0) {
        if (r.family->name == "mov") {  // mov packs and unpacks: mov.b64 %rd1, {%r1, %r2}
          check_elements_agree(o);
          return;
        }
        if (other_width) return;
        size_t n = o.elems.size();
        // cvt to four packed narrow floats (.e4m3x4, .e2m1x4, ...) takes its four sources as one
        // vector with no .v4: cvt.rs.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f4}, %rbits.
        if (r.family->name == "cvt" && n == 4 && pos == 2 &&
            std::any_of(ins.mods.begin(), ins.mods.end(), [](std::string_view m) { return m.ends_with("x4"); }))
          return;
        error(o, fmt::format("'{}' has no .v2/.v4 modifier but operand {} is a vector", opname, pos), "vector-width",
              n == 2 || n == 4 || n == 8 ? fmt::format("add .v{} to the instruction, or pass a single register", n)
                                         : "PTX vectors have 2, 4 or 8 elements: split the access, or pass a single "
                                           "register");
        return;
      }
      if (o.elems.size() != want) {
        error(o, fmt::format("'{}' moves {} elements but operand {} lists {}", opname, want, pos, o.elems.size()),
              "vector-width");
        return;
      }
      // ptxas types a {...} as one value: its registers' common type, or .bN when they differ
      // without mixing integers and floats (check_elements_agree); that value must fit. A
      // .f32/.f64 ld/st vector also takes integer registers of its width (ld.global.v2.f32
      // {%u1, %u2} assembles; ld.global.f32 %u1 does not).
      if (!check_elements_agree(o)) return;
      std::string_view common;
      for (auto& e : o.elems)
        if (const SymbolInfo* s = reg_of(e); s && !s->vec) {
          if (common.empty()) common = s->type;
          else if (common != s->type) common = "mixed";
        }
      for (auto& e : o.elems) {
        const SymbolInfo* s = reg_of(e);
        if (s && common == "mixed" && (type_bits(s->type) == type_bits(type) || (relaxed && type_bits(s->type) > type_bits(type))))
          continue;  // a .bN of a width that fits
        if (s && relaxed && type_kind(type) == 'f' && (type_kind(s->type) == 'u' || type_kind(s->type) == 's') &&
            type_bits(s->type) == type_bits(type))
          continue;
        check_typed(e, type, kind, relaxed, pos);
      }
      return;
    }
    if (want != 0 && o.kind == Operand::Kind::expr) {
      const SymbolInfo* s = reg_of(o);
      if (s && s->vec == want) return;  // a .v4 register
      if (!s && !literal_of(o.expr)) return;
      error(o, fmt::format("'{}' needs a {{...}} vector of {} registers as operand {}", opname, want, pos),
            "vector-width");
      return;
    }
    check_typed(o, type, kind, relaxed, pos);
  }
};

}  // namespace

// wgmma.mma_async: only .f16/.bf16 inputs take the two transpose operands; with .tf32, .e4m3 or
// .e5m2 the operands are d, a, b, scale-d, imm-scale-a, imm-scale-b (ptxas 13.0: "Arguments
// mismatch for instruction 'wgmma.mma_async with FP8 types'", and the same for tf32).
void check_wgmma_operands(CheckContext& ctx, const Instruction& ins) {
  // .bf16 and .tf32 inputs accumulate in .f32 only (ptxas: "Unexpected instruction types").
  for (size_t i = 0; i + 2 < ins.mods.size(); ++i) {
    if (!starts_with(ins.mods[i], ".m64n")) continue;
    std::string_view dtype = ins.mods[i + 1], atype = ins.mods[i + 2];
    if (dtype == ".f16" && (atype == ".bf16" || atype == ".tf32")) {
      std::string opname = ins.full_opcode();
      auto& d = ctx.diags.error(ins.loc, fmt::format("'{}': {} inputs accumulate in .f32 only", opname, atype),
                                "illegal-modifier");
      d.length = static_cast<uint32_t>(opname.size());
      d.hint = "write .f32 after the shape, with N/2 .f32 accumulator registers for m64nN";
      return;
    }
    break;
  }
  bool untransposable = false;
  for (auto& m : ins.mods) untransposable = untransposable || m == ".tf32" || m == ".e4m3" || m == ".e5m2";
  if (!untransposable || ins.operands.size() != 8) return;
  std::string opname = ins.full_opcode();
  auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' takes 6 operands (d, a, b, scale-d, imm-scale-a, imm-scale-b), "
                                                 "found 8: only .f16 and .bf16 inputs take the transpose operands", opname),
                            "operand-count");
  d.length = static_cast<uint32_t>(opname.size());
  d.hint = "drop the last two operands; tf32 and fp8 operands in shared memory must be K-major";
}

void check_operands(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  const IsaFamily& f = *r.family;
  if (f.name == "wgmma.mma_async") check_wgmma_operands(ctx, ins);
  // elect.sync d|p, membermask: the destination is a pair, the predicate is not optional
  // (ptxas: "Predicate output expected for instruction 'elect'").
  if (f.name == "elect.sync" && !ins.operands.empty()) {
    const Operand& o = ins.operands[0];
    if (!(o.kind == Operand::Kind::expr && o.expr.kind == Expr::Kind::binary && o.expr.text == "|")) {
      std::string opname = ins.full_opcode();
      auto& d = ctx.diags.error(o.loc, fmt::format("'{}' writes a pair 'd|p': the elected lane's index and a predicate "
                                                   "true in that lane", opname),
                                "operand-kind");
      d.hint = "write elect.sync %r_lane|%p_leader, 0xffffffff; (or _|%p_leader without the index)";
      return;
    }
  }
  if (r.type.empty() && family_requires_type(f)) {
    std::vector<std::string_view> types;
    for (auto t : split(f.types, ' '))
      if (!t.empty()) types.push_back(t);
    std::string listed = fmt::format("{}", fmt::join(types.begin(), types.begin() + std::min<size_t>(types.size(), 6), ", "));
    if (types.size() > 6) listed += ", ...";
    auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' needs a type ({})", ins.full_opcode(), listed), "missing-type");
    d.length = static_cast<uint32_t>(ins.full_opcode().size());
    d.hint = fmt::format("write the type after the opcode, as in '{}' ({})", f.example, manual_link(f.anchor));
    return;
  }
  if (f.operands == "*") return;
  const auto& forms = operand_forms(f);
  const std::vector<std::string_view>* form = nullptr;
  size_t n = ins.operands.size();
  std::vector<std::string> counts;
  for (auto& fm : forms) {
    size_t required = 0;
    for (auto k : fm) required += k.back() != '?';
    if (n >= required && n <= fm.size()) {
      form = &fm;
      break;
    }
    counts.push_back(required == fm.size() ? std::to_string(required) : fmt::format("{}-{}", required, fm.size()));
  }
  std::string opname = ins.full_opcode();
  if (!form) {
    std::string expect;
    for (size_t i = 0; i < counts.size(); ++i) expect += (i ? (i + 1 == counts.size() ? " or " : ", ") : "") + counts[i];
    auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' takes {} operand{}, found {}", opname, expect,
                                                   expect == "1" ? "" : "s", n), "operand-count");
    d.length = static_cast<uint32_t>(opname.size());
    d.hint = fmt::format("syntax: {}", manual_link(f.anchor));
    return;
  }
  if ((f.name == "min" || f.name == "max") && n == 4 && r.type != ".f32") {
    auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' takes 3 operands; the three-input form exists only for .f32",
                                                   opname), "operand-count");
    d.length = static_cast<uint32_t>(opname.size());
    return;
  }
  // ld d, [a] and st [a], b: the same two operands the other way round are one mistake.
  if ((f.name == "ld" || f.name == "st") && n == 2) {
    bool st = f.name == "st";
    const Operand& first = ins.operands[0];
    const Operand& second = ins.operands[1];
    bool swapped = st ? first.kind != Operand::Kind::address && second.kind == Operand::Kind::address
                      : first.kind == Operand::Kind::address && second.kind != Operand::Kind::address;
    if (swapped) {
      auto& d = ctx.diags.error(first.loc, fmt::format("the operands of '{}' are the wrong way round: {}", opname,
                                                       st ? "st takes the address first, then the value"
                                                          : "ld takes the destination register first, then the address"),
                                "operand-kind");
      d.length = static_cast<uint32_t>(print(first).size());
      d.hint = fmt::format("write {} {}, {};", opname, print(second), print(first));
      return;
    }
  }
  OperandChecker c{ctx, ins, r, opname};
  bool relaxed = f.name == "ld" || f.name == "st" || f.name == "ldu" || f.name == "cvt";
  bool wide = ins.has_mod(".wide");
  for (size_t i = 0; i < n; ++i) {
    const Operand& o = ins.operands[i];
    char k = (*form)[i][0];
    int pos = static_cast<int>(i) + 1;
    switch (k) {
      case 'x': break;
      case 'm':
        if (o.kind != Operand::Kind::address)
          c.error(o, fmt::format("operand {} of '{}' must be a memory address in brackets", pos, opname),
                  "operand-kind", fmt::format("write [{}]", print(o)));
        break;
      case 'l':
        if (o.kind != Operand::Kind::expr || o.expr.kind != Expr::Kind::name)
          c.error(o, fmt::format("operand {} of '{}' must be a label", pos, opname), "operand-kind");
        break;
      case 'i':
        if (o.kind != Operand::Kind::expr || !literal_of(o.expr) || literal_of(o.expr)->is_float) {
          if (o.kind == Operand::Kind::expr && o.expr.kind != Expr::Kind::name) break;  // constant expression
          c.error(o, fmt::format("operand {} of '{}' must be an integer constant", pos, opname), "operand-kind");
        }
        break;
      case 'p': c.check_pred(o, pos, true); break;
      case 'q': c.check_pred(o, pos, false); break;
      case 'u': {
        if (auto lit = o.kind == Operand::Kind::expr ? literal_of(o.expr) : std::nullopt) {
          if (lit->is_float) c.error(o, fmt::format("operand {} of '{}' must be an integer", pos, opname), "immediate-type");
          break;
        }
        const SymbolInfo* s = c.reg_of(o);
        if (s && (type_bits(s->type) != 32 || type_kind(s->type) == 'f' || type_kind(s->type) == 'p')) {
          auto& d = ctx.diags.error(o.loc, fmt::format("operand {} '{}' is {}, but '{}' needs a 32-bit integer there",
                                                       pos, o.expr.text, s->type, opname), "operand-type");
          d.length = static_cast<uint32_t>(o.expr.text.size());
          d.notes.push_back({s->loc, "declared here"});
        }
        break;
      }
      case 'w':
      case 'd':
      case 'r':
      case 'a':
      case 's': {
        std::string_view type = k == 's' ? (r.src_type.empty() ? r.type : r.src_type) : r.type;
        if (type.empty()) break;
        char kind = k;
        // .wide: the destination, and mad's addend, are twice the instruction type's width.
        if (k == 'w' || (wide && (k == 'd' || (f.name == "mad" && i == 3)))) {
          type = widen(type);
          if (type.empty()) break;
          kind = 'w';
        }
        if (f.name == "cvt" && k == 'd' && r.type.size() > 3 && ends_with(r.type, "x2")) {
          // Packed results (ptxas 13.0: "Arguments mismatch for instruction 'cvt'" otherwise):
          // a register of 32 bits or more for .f16x2/.bf16x2, a .b16 one for a 16-bit pair. From
          // two .f32 sources the register's type matters too: .f16x2 goes to .b32, .b64 or
          // .f16x2, .bf16x2 to .b32 only. (Widening conversions: check_async_ops.cpp.)
          bool pair16 = r.type == ".e4m3x2" || r.type == ".e5m2x2" || r.type == ".e2m3x2" || r.type == ".e3m2x2" ||
                        r.type == ".ue8m0x2";
          int need = r.type == ".f16x2" || r.type == ".bf16x2" ? 32 : pair16 ? 16 : 0;
          const SymbolInfo* s = need && o.kind == Operand::Kind::expr ? c.reg_of(o) : nullptr;
          int have = s ? static_cast<int>(type_bits(s->type)) : 0;
          // A 16-bit pair goes to a .b16 register only (not .u16, .s16 or .f16).
          if (s && !s->vec && (need == 32 ? have < 32 : s->type != ".b16")) {
            auto& d = ctx.diags.error(o.loc, fmt::format("operand {} '{}' is {}, but '{}' writes {} bits{}", pos, o.expr.text,
                                                         s->type, opname, need, need == 32 ? "" : " (a .b16 register)"),
                                      "operand-type");
            d.length = static_cast<uint32_t>(o.expr.text.size());
            d.notes.push_back({s->loc, "declared here"});
          } else if (s && !s->vec && need == 32 && r.src_type == ".f32") {
            bool half = r.type == ".f16x2";
            bool fits = s->type == ".b32" || (half && (s->type == ".b64" || s->type == ".f16x2"));
            if (!fits) {
              auto& d = ctx.diags.error(o.loc, fmt::format("operand {} '{}' is {}, but '{}' writes its pair to {}", pos,
                                                           o.expr.text, s->type, opname,
                                                           half ? "a .b32, .b64 or .f16x2 register" : "a .b32 register"),
                                        "operand-type");
              d.length = static_cast<uint32_t>(o.expr.text.size());
              d.hint = "declare the destination as .b32";
              d.notes.push_back({s->loc, "declared here"});
            }
          }
          break;
        }
        // The two .f32 sources of a packed pair take no wider register, except for .f16x2
        // (ptxas 13.0: "Arguments mismatch" for cvt.rn.satfinite.e4m3x2.f32 %h1, %rd1, %f2).
        bool pair_source = f.name == "cvt" && k == 's' && n == 3 && r.src_type == ".f32" && r.type.size() > 3 &&
                           ends_with(r.type, "x2") && r.type != ".f16x2";
        bool data_operand = relaxed && !pair_source && (k == 'd' || (f.name == "st" && i == 1) || k == 's');
        c.check_vector_or_scalar(o, type, kind, data_operand, pos);
        break;
      }
      default: break;
    }
  }
}

}  // namespace ptxforge::ptx
