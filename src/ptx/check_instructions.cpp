// Checks on one instruction as a whole: is it a known instruction [unknown-opcode], are its
// modifiers allowed [unknown-modifier], do the module's .version and .target provide it
// [needs-version, needs-target], does its state space match the variable it addresses
// [state-space, param-space], and does a direct call match the callee [call-signature].
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "ptx/check_async_ops.h"
#include "ptx/check_context.h"
#include "ptx/check_tcgen05.h"
#include "util/text.h"

namespace ptxforge::ptx {

namespace {

std::vector<std::string_view> family_names() {
  std::vector<std::string_view> out;
  for (auto& f : isa_families()) out.push_back(f.name);
  return out;
}

// Mnemonics from other assembly languages that models sometimes write, with the PTX spelling.
std::string foreign_mnemonic_hint(std::string_view op) {
  static const std::pair<std::string_view, std::string_view> table[] = {
      {"movl", "mov.u32"}, {"movq", "mov.u64"}, {"addl", "add.u32"}, {"addq", "add.u64"}, {"imul", "mul.lo.s32"},
      {"jmp", "bra"},      {"je", "@%p bra"},   {"jne", "@!%p bra"}, {"cmp", "setp"},     {"lea", "mad.wide / add"},
      {"load", "ld"},      {"store", "st"},     {"mv", "mov"},       {"li", "mov"},       {"fadd", "add.f32"},
      {"fmul", "mul.f32"}, {"syncthreads", "bar.sync 0"},           {"__syncthreads", "bar.sync 0"},
      {"return", "ret"},   {"br", "bra"},       {"jump", "bra"},     {"ldg", "ld.global.nc"}, {"stg", "st.global"},
  };
  for (auto& [from, to] : table)
    if (op == from) return fmt::format("PTX spells this '{}'", to);
  // C math functions: PTX has base-2 approximations, so the scaling is part of the answer.
  static const std::pair<std::string_view, std::string_view> math[] = {
      {"exp", "PTX has ex2.approx.f32 (2^x): for e^x multiply x by log2(e) first, mul.f32 %t, %x, 0f3FB8AA3B; "
              "then ex2.approx.f32 %y, %t;"},
      {"expf", "PTX has ex2.approx.f32 (2^x): for e^x multiply x by log2(e) first, mul.f32 %t, %x, 0f3FB8AA3B; "
               "then ex2.approx.f32 %y, %t;"},
      {"exp2", "PTX spells this 'ex2.approx.f32'"},
      {"log", "PTX has lg2.approx.f32 (log2 x): for ln x multiply its result by ln(2), mul.f32 %y, %t, 0f3F317218"},
      {"logf", "PTX has lg2.approx.f32 (log2 x): for ln x multiply its result by ln(2), mul.f32 %y, %t, 0f3F317218"},
      {"log2", "PTX spells this 'lg2.approx.f32'"},
      {"sqrtf", "PTX spells this 'sqrt.rn.f32' (or sqrt.approx.f32)"},
      {"rsqrtf", "PTX spells this 'rsqrt.approx.f32'"},
      {"fabs", "PTX spells this 'abs.f32'"},
      {"fmaxf", "PTX spells this 'max.f32'"},
      {"fminf", "PTX spells this 'min.f32'"},
      {"fmaf", "PTX spells this 'fma.rn.f32'"},
      {"pow", "PTX has no pow: compute 2^(y*log2(x)) with lg2.approx.f32, mul.f32 and ex2.approx.f32"},
  };
  for (auto& [from, text] : math)
    if (op == from) return std::string(text);
  return "";
}

}  // namespace

Resolved resolve(CheckContext& ctx, const Instruction& ins) {
  Resolved r;
  r.family = find_family(ins.opcode, ins.mods, &r.consumed);
  if (!r.family) {
    std::string full = ins.full_opcode();
    if (is_known_opcode(ins.opcode)) {
      // "cp.async.bulk.tensr": the first word is fine, the family is not.
      std::vector<std::string_view> names = family_names();
      std::string best;
      size_t best_d = SIZE_MAX;
      for (auto n : names) {
        if (!starts_with(n, ins.opcode) || n.size() <= ins.opcode.size()) continue;
        std::string prefix(ins.opcode);
        for (size_t i = 0; i < ins.mods.size() && prefix.size() < n.size(); ++i) prefix += ins.mods[i];
        size_t d = edit_distance(prefix, n);
        if (d < best_d) best_d = d, best = std::string(n);
      }
      auto& d = ctx.diags.error(ins.loc, fmt::format("unknown instruction '{}'", full), "unknown-opcode");
      d.length = static_cast<uint32_t>(full.size());
      if (!best.empty() && best_d <= 4) d.hint = fmt::format("did you mean '{}'?", best);
      return r;
    }
    auto& d = ctx.diags.error(ins.loc, fmt::format("unknown instruction '{}'", ins.opcode), "unknown-opcode");
    d.length = static_cast<uint32_t>(ins.opcode.size());
    std::string foreign = foreign_mnemonic_hint(ins.opcode);
    if (!foreign.empty()) {
      d.hint = foreign;
    } else {
      std::string guess = closest_match(ins.opcode, all_opcodes());
      if (!guess.empty()) {
        d.hint = fmt::format("did you mean '{}'?", guess);
        d.fixit = FixIt{ins.loc, static_cast<uint32_t>(ins.opcode.size()), guess};
      }
    }
    return r;
  }
  for (size_t i = r.consumed; i < ins.mods.size(); ++i) {
    if (!is_type_name(ins.mods[i])) continue;
    if (r.type.empty()) r.type = ins.mods[i];
    else if (r.src_type.empty()) r.src_type = ins.mods[i];
  }
  // For most families the type is the last type modifier (mma/wgmma list several; ignored).
  return r;
}

namespace {

void check_modifiers(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  const IsaFamily& f = *r.family;
  if (f.modifiers == "*") return;
  for (size_t i = r.consumed; i < ins.mods.size(); ++i) {
    std::string_view m = ins.mods[i];
    if (family_allows_modifier(f, m)) continue;
    std::vector<std::string_view> allowed;
    for (auto a : split(f.types, ' ')) if (!a.empty()) allowed.push_back(a);
    for (auto a : split(f.modifiers, ' ')) if (!a.empty() && a.back() != '*') allowed.push_back(a);
    auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' does not take the modifier '{}'", f.name, m), "unknown-modifier");
    d.length = static_cast<uint32_t>(ins.full_opcode().size());
    bool vector_width = m.size() > 2 && m[1] == 'v' && m.find_first_not_of("0123456789", 2) == std::string_view::npos;
    std::string guess = closest_match(m, allowed);
    if (vector_width && family_allows_modifier(f, ".v2"))
      d.hint = "PTX vectors have 2, 4 or 8 elements (.v2, .v4, .v8): split the access, e.g. a .v2 and a scalar";
    else if (!guess.empty()) d.hint = fmt::format("did you mean '{}'?", guess);
    else d.hint = fmt::format("see {}", manual_link(f.anchor));
  }
}

void check_version_and_target(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  if (meets_requirements(ins, *r.family, r.consumed, ctx.facts.version, ctx.facts.targets)) return;
  std::vector<IsaRequirement> reqs = requirements_of(ins);
  // The strictest requirement explains itself best.
  if (ctx.facts.version) {
    // A requirement's version can depend on the target (a feature an older target gained later).
    auto needed = [&](const IsaRequirement& q) {
      PtxVersion v = q.ptx;
      for (auto& have : ctx.facts.targets) v = std::max(v, q.ptx_on(have));
      return v;
    };
    const IsaRequirement* worst = nullptr;
    for (auto& q : reqs)
      if (*ctx.facts.version < needed(q) && (!worst || needed(*worst) < needed(q))) worst = &q;
    if (worst) {
      PtxVersion v = needed(*worst);
      std::string on = v == worst->ptx ? "" : fmt::format(" on .target {}", ctx.facts.targets.front().str());
      auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' requires PTX ISA .version {} or later{} (module has {})",
                                                     worst->what, v.str(), on, ctx.facts.version->str()),
                                "needs-version");
      d.length = static_cast<uint32_t>(ins.full_opcode().size());
      d.hint = fmt::format("raise the header to '.version {}'", v.str());
      d.notes.push_back({ctx.facts.version_loc, "version declared here"});
    }
  }
  for (auto& have : ctx.facts.targets) {
    for (auto& q : reqs) {
      if (q.met_by(have)) continue;
      auto& d = ctx.diags.error(ins.loc, fmt::format("'{}' is not supported on .target {}", q.what, have.str()),
                                "needs-target");
      d.length = static_cast<uint32_t>(ins.full_opcode().size());
      if (q.any_of.size() > 1)
        d.hint = fmt::format("it needs .target {} (or a later member of that family)", q.targets_text());
      else if (q.target.suffix == 'a')
        d.hint = fmt::format("it needs exactly .target {} (architecture-specific features need the 'a' target)",
                             q.target.str());
      else if (q.target.suffix == 'f')
        d.hint = fmt::format("it needs a family target such as .target {}", q.target.str());
      else
        d.hint = fmt::format("it needs .target {} or later", q.target.str());
      d.notes.push_back({ctx.facts.target_loc, "target declared here"});
      break;
    }
  }
}

// ld/st/atom/red/prefetch naming a variable directly: the instruction's state space must be
// the variable's. Kernel parameters are read with ld.param.
void check_state_space(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  bool memory_op = fam == "ld" || fam == "st" || fam == "atom" || fam == "red" || fam == "ldu";
  if (!memory_op) return;
  std::string_view space;
  for (auto& m : ins.mods)
    if (m == ".global" || m == ".shared" || m == ".shared::cta" || m == ".shared::cluster" || m == ".local" ||
        m == ".const" || m == ".param" || m == ".param::entry" || m == ".param::func")
      space = m;
  for (auto& op : ins.operands) {
    if (op.kind != Operand::Kind::address || op.elems.empty()) continue;
    ExprRefs names;
    collect_names(op.elems[0], names);
    for (const Expr* n : names) {
      const SymbolInfo* s = ctx.scopes.find(n->text);
      if (!s || s->kind == SymbolInfo::Kind::reg || s->kind == SymbolInfo::Kind::function) continue;
      std::string_view var_space = s->space;
      if (space.empty()) continue;  // generic addressing of a variable is fine
      std::string_view base = space.substr(0, space.find("::"));
      if (base == var_space) continue;
      bool is_param = var_space == ".param";
      auto& d = ctx.diags.error(n->loc, fmt::format("'{}' uses {} addressing, but '{}' is a {} {}", ins.full_opcode(),
                                                    space, n->text, var_space, is_param ? "parameter" : "variable"),
                                is_param ? "param-space" : "state-space");
      d.length = static_cast<uint32_t>(n->text.size());
      bool pointer = s->type == ".u64" || s->type == ".b64" || s->type == ".s64";
      if (is_param && fam == "ld" && pointer)
        d.hint = fmt::format("read kernel parameters with ld.param (ld.param{} %rd1, [{}];), then "
                             "cvta.to.global the pointer before ld.global/st.global",
                             s->type, n->text);
      else if (is_param && fam == "ld")
        d.hint = fmt::format("read kernel parameters with ld.param: ld.param{} ..., [{}];", s->type, n->text);
      else
        d.hint = fmt::format("use {} addressing for '{}', or take its generic address with cvta", var_space, n->text);
      d.notes.push_back({s->loc, "declared here"});
    }
  }
}

// Parameter counts of a prototype: ".callprototype (.param .b32 _) _ (.param .b32 _, ...)".
std::pair<size_t, size_t> prototype_counts(const Directive& d) {
  size_t groups = 0, rets = 0, params = 0;
  bool in_group = false, has_ret_group = !d.args.empty() && d.args[0] == "(";
  for (auto& w : d.args) {
    if (w == "(") in_group = true, ++groups;
    else if (w == ")") in_group = false;
    else if (in_group && w == ".param") (has_ret_group && groups == 1 ? rets : params)++;
  }
  return {params, rets};
}

void check_indirect_call(CheckContext& ctx, const Instruction& ins, const Operand& callee, const Operand* proto,
                         size_t nargs, size_t nrets) {
  if (!proto || proto->kind != Operand::Kind::expr || proto->expr.kind != Expr::Kind::name) {
    auto& d = ctx.diags.error(callee.loc, fmt::format("indirect call through '{}' names no prototype", callee.expr.text),
                              "call-signature");
    d.length = static_cast<uint32_t>(callee.expr.text.size());
    d.hint = "declare one (proto: .callprototype (.param .b32 _) _ (.param .b32 _);) and pass it last: "
             "call (r), %rd1, (a), proto;";
    return;
  }
  std::string_view pname = proto->expr.text;
  auto it = ctx.prototypes.find(pname);
  if (it == ctx.prototypes.end()) {
    if (ctx.find_label(pname)) return;  // a .calltargets list
    auto& d = ctx.diags.error(proto->loc, fmt::format("'{}' is not a .callprototype in this function", pname),
                              "undeclared-label");
    d.length = static_cast<uint32_t>(pname.size());
    return;
  }
  auto [params, rets] = prototype_counts(*it->second);
  if (params == nargs && rets == nrets) return;
  auto& d = ctx.diags.error(ins.loc, fmt::format("indirect call passes {} argument{} and {} return value{}, but "
                                                 "prototype '{}' takes {} and returns {}",
                                                 nargs, nargs == 1 ? "" : "s", nrets, nrets == 1 ? "" : "s", pname,
                                                 params, rets),
                            "call-signature");
  d.length = static_cast<uint32_t>(ins.full_opcode().size());
  d.notes.push_back({it->second->loc, "prototype declared here"});
}

void check_call(CheckContext& ctx, const Instruction& ins) {
  // call{.uni} (rets), f, (args) [, proto]  |  call f, (args)  |  call f
  const Operand* ret_list = nullptr;
  const Operand* callee = nullptr;
  const Operand* args = nullptr;
  size_t i = 0;
  if (i < ins.operands.size() && ins.operands[i].kind == Operand::Kind::list) ret_list = &ins.operands[i++];
  if (i < ins.operands.size()) callee = &ins.operands[i++];
  if (i < ins.operands.size() && ins.operands[i].kind == Operand::Kind::list) args = &ins.operands[i++];
  if (!callee || callee->kind != Operand::Kind::expr || callee->expr.kind != Expr::Kind::name) {
    ctx.diags.error(ins.loc, "call needs a function name or a register holding its address", "call-signature");
    return;
  }
  std::string_view name = callee->expr.text;
  size_t nargs = args ? args->elems.size() : 0;
  size_t nrets = ret_list ? ret_list->elems.size() : 0;
  if (name[0] == '%') {
    check_indirect_call(ctx, ins, *callee, i < ins.operands.size() ? &ins.operands[i] : nullptr, nargs, nrets);
    return;
  }
  auto it = ctx.functions.find(name);
  if (it == ctx.functions.end()) {
    auto& d = ctx.diags.error(callee->loc, fmt::format("call to undeclared function '{}'", name), "undeclared-function");
    d.length = static_cast<uint32_t>(name.size());
    d.hint = "declare it first, e.g. '.extern .func (.param .b32 r) f(.param .b32 a);'";
    return;
  }
  const Function& f = *it->second;
  if (f.is_entry) {
    ctx.diags.error(callee->loc, fmt::format("'{}' is a kernel (.entry) and cannot be called", name), "call-signature");
    return;
  }
  if (nargs != f.params.size() || nrets != f.rets.size()) {
    auto& d = ctx.diags.error(callee->loc,
                              fmt::format("call to '{}' passes {} argument{} and {} return value{}, but it takes {} and "
                                          "returns {}",
                                          name, nargs, nargs == 1 ? "" : "s", nrets, nrets == 1 ? "" : "s",
                                          f.params.size(), f.rets.size()),
                              "call-signature");
    d.length = static_cast<uint32_t>(name.size());
    d.notes.push_back({f.loc, "declared here"});
  }
}

}  // namespace

Resolved check_instruction(CheckContext& ctx, const Instruction& ins) {
  std::string_view spelling = ins.spelling();
  Resolved r;
  if (auto it = spelling.empty() ? ctx.clean_spellings.end() : ctx.clean_spellings.find(spelling);
      it != ctx.clean_spellings.end()) {
    r = it->second;
  } else {
    size_t before = ctx.diags.list().size();
    r = resolve(ctx, ins);
    if (!r.family) {
      check_names(ctx, ins, r);
      return r;
    }
    if (r.family->detailed) check_modifiers(ctx, ins, r);
    if (ctx.diags.list().size() == before) check_modifier_rules(ctx, ins, r);
    check_version_and_target(ctx, ins, r);
    if (!spelling.empty() && ctx.diags.list().size() == before) ctx.clean_spellings.emplace(spelling, r);
  }
  check_names(ctx, ins, r);
  if (r.family->detailed) check_operands(ctx, ins, r);
  check_immediate_values(ctx, ins, r);
  if (r.family->name.starts_with("tcgen05.")) check_tcgen05(ctx, ins, r);
  if (r.family->name == "mma" || r.family->name == "wgmma.mma_async" || r.family->name == "ldmatrix" ||
      r.family->name == "stmatrix")
    check_fragments(ctx, ins, r);
  check_state_space(ctx, ins, r);
  check_async_ops(ctx, ins, r);
  if (r.family->name == "call") check_call(ctx, ins);
  return r;
}

void check_branch_targets_directive(CheckContext& ctx, const Directive& d) {
  for (auto& a : d.args) {
    if (a == "," || a.empty() || !(std::isalpha(static_cast<unsigned char>(a[0])) || a[0] == '$' || a[0] == '_'))
      continue;
    if (!ctx.find_label(a))
      ctx.diags.error(d.loc, fmt::format(".branchtargets names '{}', which is not a label in this function", a),
                      "undeclared-label");
  }
}

}  // namespace ptxforge::ptx
