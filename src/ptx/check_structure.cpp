// Rules on single instructions that the ISA table cannot express, each one found by giving
// ptxas 13.0 the defect and confirmed in the PTX ISA manual:
//   special registers are read-only and only mov/cvt read them [special-reg-dest, special-reg-operand];
//   bra takes a label, brx.idx a .branchtargets label [branch-target];
//   the constant space and kernel parameters are not written [read-only-space];
//   generic addressing names no .const or .param variable [state-space, param-space];
//   .global and generic addresses are 64-bit [address-width];
//   mbarrier state and phase operands have fixed widths [mbarrier-operand];
//   a function is declared before an instruction names it [use-before-declaration].
#include <fmt/format.h>

#include "ptx/check_context.h"
#include "ptx/printer.h"
#include "util/text.h"

namespace ptxforge::ptx {

namespace {

// A special register named by an operand: %tid.x, %clock64 (WARP_SZ is a constant, not a
// register; a declared register of the same name hides the special register).
const Expr* special_register(CheckContext& ctx, const Operand& o) {
  if (o.kind != Operand::Kind::expr || o.expr.kind != Expr::Kind::name) return nullptr;
  std::string_view t = o.expr.text;
  if (t.empty() || t[0] != '%' || !is_special_register(t) || ctx.scopes.find(t)) return nullptr;
  return &o.expr;
}

// Whether an earlier check already reported an error at this operand (operand-type on
// 'add.f32 %f1, %tid.x, ...'): one finding per defect.
bool already_reported(const CheckContext& ctx, SourceLoc loc) {
  auto& list = ctx.diags.list();
  for (auto it = list.rbegin(); it != list.rend() && it->loc.line == loc.line; ++it)
    if (it->severity == Severity::error && it->loc.col == loc.col) return true;
  return false;
}

bool writes_first_operand(const IsaFamily& f) {
  auto& forms = operand_forms(f);
  if (forms.empty() || forms[0].empty()) return false;
  char k = forms[0][0].empty() ? 0 : forms[0][0][0];
  return k == 'd' || k == 'p' || k == 'w';
}

void check_special_registers(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  const IsaFamily& f = *r.family;
  // mov and cvt read a special register only as an integer (mov.f32 and cvt.rn.f32.u32 from
  // %tid.x are refused).
  bool cvt_float = f.name == "cvt" && (type_kind(r.type) == 'f' || type_kind(r.src_type) == 'f');
  bool reader = (f.name == "mov" && type_kind(r.type) != 'f') || (f.name == "cvt" && !cvt_float);
  for (size_t i = 0; i < ins.operands.size(); ++i) {
    const Expr* e = special_register(ctx, ins.operands[i]);
    if (!e) continue;
    if (i == 0 && writes_first_operand(f)) {
      auto& d = ctx.diags.error(e->loc, fmt::format("'{}' is a read-only special register and cannot be a destination",
                                                    e->text), "special-reg-dest");
      d.length = static_cast<uint32_t>(e->text.size());
      d.hint = fmt::format("special registers are only read (mov.u32 %r1, {};); write to a register declared with .reg",
                           e->text);
      continue;
    }
    if (f.name == "mov" && is_vector_special_register(e->text) && ins.operands[0].kind != Operand::Kind::vector) {
      auto& d = ctx.diags.error(e->loc, fmt::format("'{}' is a vector of four; a scalar mov reads one component",
                                                    e->text), "special-reg-operand");
      d.length = static_cast<uint32_t>(e->text.size());
      d.hint = fmt::format("read one component: mov.u32 %r1, {}.x; (or .y, .z)", e->text);
      continue;
    }
    if (f.name == "mov" && is_vector_special_register(e->text) && ins.operands[0].elems.size() != 4) {
      auto& d = ctx.diags.error(e->loc, fmt::format("'{}' is a vector of four; a vector mov of it needs .v4 and four "
                                                    "registers", e->text), "special-reg-operand");
      d.length = static_cast<uint32_t>(e->text.size());
      d.hint = fmt::format("mov.v4.u32 {{%r1, %r2, %r3, %r4}}, {}; or one component: mov.u32 %r1, {}.x;", e->text,
                           e->text);
      continue;
    }
    if (reader || already_reported(ctx, e->loc)) continue;
    std::string_view st = special_register_type(e->text);
    auto& d = ctx.diags.error(e->loc, fmt::format("special register '{}' cannot be an operand of '{}'; only mov and "
                                                  "integer cvt read special registers", e->text, ins.full_opcode()),
                              "special-reg-operand");
    d.length = static_cast<uint32_t>(e->text.size());
    d.hint = fmt::format("copy it into a register first: mov{} %r, {}; then use that register", st, e->text);
  }
}

void check_branches(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  if (fam == "bra" && ins.operands.size() == 1) {
    const Operand& o = ins.operands[0];
    if (o.kind != Operand::Kind::expr) return;
    std::string_view t = o.expr.text;
    bool reg = o.expr.kind == Expr::Kind::name && !t.empty() && t[0] == '%' && ctx.scopes.find(t);
    bool table = o.expr.kind == Expr::Kind::name && ctx.branch_tables.count(t);
    bool literal = o.expr.kind == Expr::Kind::integer;
    if (!reg && !table && !literal) return;
    auto& d = ctx.diags.error(o.loc, fmt::format("'bra' needs a label, not {}", reg ? fmt::format("the register '{}'", t)
                                                 : table ? fmt::format("the .branchtargets list '{}'", t)
                                                         : std::string("a number")),
                              "branch-target");
    d.length = static_cast<uint32_t>(std::max<size_t>(1, t.size()));
    d.hint = "a computed branch is 'brx.idx %r, tbl;' with 'tbl: .branchtargets L0, L1, ...;' and a 32-bit index into it";
    return;
  }
  if (fam == "brx.idx" && ins.operands.size() == 2) {
    const Operand& o = ins.operands[1];
    if (o.kind != Operand::Kind::expr || o.expr.kind != Expr::Kind::name) return;
    std::string_view t = o.expr.text;
    if (ctx.branch_tables.count(t)) return;
    bool label = ctx.find_label(t) != nullptr;
    if (!label && (t.empty() || t[0] != '%')) return;  // an undeclared name: undeclared-label says so
    auto& d = ctx.diags.error(o.loc, fmt::format("'brx.idx' needs a label of a .branchtargets list, and '{}' is {}", t,
                                                 label ? "a plain label" : "a register"),
                              "branch-target");
    d.length = static_cast<uint32_t>(t.size());
    d.hint = "declare the targets: 'tbl: .branchtargets L0, L1;' then 'brx.idx %r1, tbl;'";
  }
}

std::string_view state_space_of(const Instruction& ins) {
  for (auto& m : ins.mods)
    if (m == ".global" || m == ".shared" || m == ".shared::cta" || m == ".shared::cluster" || m == ".local" ||
        m == ".const" || m == ".param" || m == ".param::entry" || m == ".param::func")
      return m;
  return "";
}

}  // namespace

const Expr* address_base(const Operand& o) {
  if (o.kind != Operand::Kind::address || o.elems.size() != 1 || o.elems[0].kind != Operand::Kind::expr) return nullptr;
  const Expr* e = &o.elems[0].expr;
  while (e->kind == Expr::Kind::binary && !e->args.empty()) e = &e->args[0];
  return e->kind == Expr::Kind::name ? e : nullptr;
}

namespace {

const Operand* first_address(const Instruction& ins) {
  for (auto& o : ins.operands)
    if (o.kind == Operand::Kind::address) return &o;
  return nullptr;
}

void check_read_only(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  bool writes = fam == "st" || fam == "atom" || fam == "red";
  if (!writes) return;
  std::string_view space = state_space_of(ins);
  const Operand* addr = first_address(ins);
  const Expr* base = addr ? address_base(*addr) : nullptr;
  const SymbolInfo* var = base ? ctx.scopes.find(base->text) : nullptr;
  if (space == ".const") {
    auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' writes to the constant space, which is read-only",
                                                   ins.full_opcode()), "read-only-space");
    d.length = static_cast<uint32_t>(ins.full_opcode().size());
    d.hint = "the host fills .const memory before the launch; keep data the kernel writes in .global or .shared";
    return;
  }
  if (space.substr(0, 6) != ".param") return;
  if (fam != "st") {
    auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' is not allowed on the parameter space", ins.full_opcode()),
                              "read-only-space");
    d.length = static_cast<uint32_t>(ins.full_opcode().size());
    d.hint = "atomics work on .global and .shared memory (or generic addresses of them)";
    return;
  }
  // st.param to a function's own input parameter (return parameters are written).
  if (!var || var->kind != SymbolInfo::Kind::param || !ctx.fn) return;
  for (auto& p : ctx.fn->params)
    if (&p == var->decl) {
      auto& d = ctx.diags.error(base->loc, fmt::format("'{}' is an input parameter of '{}' and cannot be written",
                                                       base->text, ctx.fn->name), "read-only-space");
      d.length = static_cast<uint32_t>(base->text.size());
      d.hint = fmt::format("load it into a register (ld.param ... [{}]) and work on the register", base->text);
      d.notes.push_back({var->loc, "declared here"});
      return;
    }
}

// Generic addressing reaches .global, .shared and .local variables by name, but ptxas refuses
// a .const or .param variable named in a generic ld/st/atom ("State space mismatch").
void check_generic_variable(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  bool memory = fam == "ld" || fam == "st" || fam == "atom" || fam == "red" || fam == "ldu" || fam == "prefetch" ||
                fam == "prefetchu";
  if (!memory || !state_space_of(ins).empty()) return;
  const Operand* addr = first_address(ins);
  const Expr* base = addr ? address_base(*addr) : nullptr;
  const SymbolInfo* var = base ? ctx.scopes.find(base->text) : nullptr;
  if (!var || (var->kind != SymbolInfo::Kind::variable && var->kind != SymbolInfo::Kind::param)) return;
  if (var->space != ".const" && var->space != ".param") return;
  bool param = var->space == ".param";
  auto& d = ctx.diags.error(base->loc, fmt::format("'{}' uses generic addressing, but '{}' is a {} {}; name it with {}{}",
                                                   ins.full_opcode(), base->text, var->space,
                                                   param ? "parameter" : "variable", fam, var->space),
                            param ? "param-space" : "state-space");
  d.length = static_cast<uint32_t>(base->text.size());
  d.hint = "generic addresses name .global, .shared and .local variables only";
  d.notes.push_back({var->loc, "declared here"});
}

// Under .address_size 64, .global and generic addresses in a register must be 64-bit: ptxas
// rejects a 32-bit one for the whole module ("32-Bit ABI ... is not supported"). Addresses of
// .shared, .local, .const and .param may be 32-bit registers.
void check_address_width(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  // cvta converts 64-bit addresses; its .u32 form is the 32-bit ABI.
  if (fam == "cvta" && r.type == ".u32") {
    auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' converts 32-bit addresses, which ptxas does not support",
                                                   ins.full_opcode()), "address-width");
    d.length = static_cast<uint32_t>(ins.full_opcode().size());
    d.hint = "use cvta with .u64 and 64-bit registers; a 32-bit .shared offset needs no cvta";
    return;
  }
  // mov.u32 of a .global variable's address (an offset from it is accepted, oddly); no
  // address at all goes into a float register.
  if (fam == "mov" && ins.operands.size() == 2 && ins.operands[1].kind == Operand::Kind::expr &&
      type_kind(r.type) == 'f') {
    ExprRefs names;
    collect_names(ins.operands[1], names);
    for (const Expr* n : names) {
      const SymbolInfo* s = ctx.scopes.find(n->text);
      if (!s || (s->kind != SymbolInfo::Kind::variable && s->kind != SymbolInfo::Kind::param)) continue;
      auto& d = ctx.diags.error(n->loc, fmt::format("'{}' cannot take the address of '{}': addresses are integers",
                                                    ins.full_opcode(), n->text), "operand-type");
      d.length = static_cast<uint32_t>(n->text.size());
      d.hint = fmt::format("take the address with mov.u64 %rd1, {}; and load the value with ld", n->text);
      return;
    }
    return;
  }
  if (fam == "mov" && type_bits(r.type) == 32 && ins.operands.size() == 2 &&
      ins.operands[1].kind == Operand::Kind::expr && ins.operands[1].expr.kind == Expr::Kind::name) {
    const Expr& n = ins.operands[1].expr;
    const SymbolInfo* s = ctx.scopes.find(n.text);
    if (s && s->kind == SymbolInfo::Kind::variable && s->space == ".global") {
      auto& d = ctx.diags.error(n.loc, fmt::format("the address of the .global variable '{}' is 64-bit, but '{}' "
                                                   "makes it 32-bit", n.text, ins.full_opcode()), "address-width");
      d.length = static_cast<uint32_t>(n.text.size());
      d.hint = fmt::format("take it into a 64-bit register: mov.u64 %rd1, {};", n.text);
    }
    return;
  }
  bool memory = fam == "ld" || fam == "st" || fam == "atom" || fam == "red" || fam == "ldu" || fam == "prefetch" ||
                fam == "prefetchu" || starts_with(fam, "mbarrier.");
  if (!memory) return;
  std::string_view space = state_space_of(ins);
  if (!space.empty() && space != ".global") return;
  if (fam == "prefetch" && (ins.has_mod(".tensormap") || ins.has_mod(".local"))) return;
  const Operand* addr = first_address(ins);
  const Expr* base = addr ? address_base(*addr) : nullptr;
  if (!base) return;
  const SymbolInfo* s = ctx.scopes.find(base->text);
  if (!s || s->kind != SymbolInfo::Kind::reg || s->vec) return;
  auto [bits, kind] = type_facts(s->type);
  if (bits != 32 || (kind != 'u' && kind != 's' && kind != 'b')) return;
  auto& d = ctx.diags.error(base->loc, fmt::format("'{}' is a 32-bit register, but {} addresses are 64-bit",
                                                   base->text, space.empty() ? "generic" : ".global"),
                            "address-width");
  d.length = static_cast<uint32_t>(base->text.size());
  d.hint = fmt::format("compute a 64-bit address, e.g. 'mul.wide.u32 %rd2, {}, 4; add.s64 %rd3, %rd1, %rd2;' "
                       "(%rd1 the base pointer) and use [%rd3]; only .shared/.local/.const/.param addresses may be "
                       "32-bit", base->text);
  d.notes.push_back({s->loc, fmt::format("'{}' declared {} here", base->text, s->type)});
}

// mbarrier operands that the table types loosely: the state is a 64-bit value, the phase
// parity a 32-bit one, and a .shared::cluster arrive returns nothing ('_').
void check_mbarrier(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  if (!starts_with(fam, "mbarrier.")) return;
  auto want = [&](size_t i, int bits, const char* what) {
    if (i >= ins.operands.size()) return;
    const Operand& o = ins.operands[i];
    if (o.kind != Operand::Kind::expr || o.expr.kind != Expr::Kind::name) return;
    const SymbolInfo* s = ctx.scopes.find(o.expr.text);
    if (!s || s->kind != SymbolInfo::Kind::reg || s->vec) return;
    auto [b, k] = type_facts(s->type);
    if (!b || k == 'o' || (b == bits && k != 'f' && k != 'p')) return;
    auto& d = ctx.diags.error(o.loc, fmt::format("the {} operand of '{}' is a {}-bit integer, and '{}' is {}", what,
                                                 ins.full_opcode(), bits, o.expr.text, s->type), "mbarrier-operand");
    d.length = static_cast<uint32_t>(o.expr.text.size());
    d.hint = bits == 64 ? "keep the mbarrier state in a .b64 register (the value mbarrier.arrive returned)"
                        : "the phase parity is a .b32 register (or 0/1); cvt or mov it into one";
    d.notes.push_back({s->loc, fmt::format("'{}' declared {} here", o.expr.text, s->type)});
  };
  bool parity = ins.has_mod(".parity");
  if ((fam == "mbarrier.try_wait" || fam == "mbarrier.test_wait") && !ins.operands.empty() &&
      ins.operands[0].kind == Operand::Kind::sink) {
    auto& d = ctx.diags.error(ins.operands[0].loc, fmt::format("'{}' must return its result in a predicate, not '_'",
                                                               ins.full_opcode()), "mbarrier-operand");
    d.hint = "wait in a loop on the predicate: 'W: mbarrier.try_wait... %p1, [bar], ...; @!%p1 bra W;'";
    return;
  }
  if (fam == "mbarrier.try_wait" || fam == "mbarrier.test_wait") {
    want(2, parity ? 32 : 64, parity ? "phase parity" : "state");
  } else if (fam == "mbarrier.arrive" || fam == "mbarrier.arrive_drop") {
    if (ins.operands.empty() || ins.operands[0].kind == Operand::Kind::address) return;
    if (ins.has_mod(".shared::cluster") && ins.operands[0].kind != Operand::Kind::sink) {
      const Operand& o = ins.operands[0];
      auto& d = ctx.diags.error(o.loc, fmt::format("'{}' on .shared::cluster returns no state: its destination must be '_'",
                                                   ins.full_opcode()), "mbarrier-operand");
      d.length = static_cast<uint32_t>(std::max<size_t>(1, o.expr.text.size()));
      d.hint = fmt::format("write '{} _, [addr];'", ins.full_opcode());
      return;
    }
    want(0, 64, "state");
  } else if (fam == "mbarrier.pending_count") {
    want(1, 64, "state");
  }
}

// ".func (.param .b32 r) f(.param .b32 a);": the declaration that makes a later definition usable.
std::string prototype_of(const Function& f) {
  auto list = [](const List<VarDecl>& decls) {
    std::string out;
    for (auto& d : decls) {
      std::string one = print(d);
      while (!one.empty() && (one.back() == ';' || one.back() == '\n' || one.back() == ' ')) one.pop_back();
      out += (out.empty() ? "" : ", ") + one;
    }
    return out;
  };
  std::string proto = ".func ";
  if (f.has_ret_list) proto += "(" + list(f.rets) + ") ";
  proto += std::string(f.name) + "(" + list(f.params) + ");";
  return proto;
}

// ptxas reads a module top to bottom: a function named before its declaration or definition
// is an unknown symbol ("Call to 'f' requires call prototype").
void check_declaration_order(CheckContext& ctx, const Instruction& ins) {
  if (ctx.last_first_item <= ctx.item_index) return;  // every function is declared by now
  auto is_register = [&](std::string_view name) { return name.starts_with('%') && !ctx.percent_function_name; };
  for (auto& o : ins.operands) {
    if (o.kind == Operand::Kind::expr && o.expr.kind == Expr::Kind::name && is_register(o.expr.text)) continue;
    ExprRefs names;
    collect_names(o, names);
    for (const Expr* n : names) {
      if (is_register(n->text)) continue;
      auto it = ctx.function_first_item.find(n->text);
      if (it == ctx.function_first_item.end() || it->second <= ctx.item_index) continue;
      const SymbolInfo* s = ctx.scopes.find(n->text);
      if (!s || s->kind != SymbolInfo::Kind::function) continue;  // a local name hides it
      auto& d = ctx.diags.error(n->loc, fmt::format("function '{}' is used before it is declared", n->text),
                                "use-before-declaration");
      d.length = static_cast<uint32_t>(n->text.size());
      d.hint = fmt::format("move its definition up, or declare it above this function: '{}'", prototype_of(*s->fn));
      d.notes.push_back({s->loc, "declared here"});
    }
  }
}

}  // namespace

void collect_branch_tables(CheckContext& ctx, const Function& f) {
  ctx.branch_tables.clear();
  const Label* previous_label = nullptr;
  for_each_statement(*f.body, [&](const Statement& s) {
    if (auto* d = s.get_if<Directive>(); d && previous_label && d->name == ".branchtargets")
      ctx.branch_tables.insert(previous_label->name);
    previous_label = s.get_if<Label>();
  });
}

void check_structure(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  check_special_registers(ctx, ins, r);
  check_branches(ctx, ins, r);
  check_read_only(ctx, ins, r);
  check_generic_variable(ctx, ins, r);
  check_address_width(ctx, ins, r);
  check_mbarrier(ctx, ins, r);
  check_declaration_order(ctx, ins);
}

}  // namespace ptxforge::ptx
