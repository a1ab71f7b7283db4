// The validator's walk: module header, then each function with its scopes, handing every
// declaration and instruction to the checks.
#include "ptx/validator.h"

#include "ptx/check_context.h"

namespace ptxforge::ptx {

namespace {

void walk_block(CheckContext& ctx, const Block& b) {
  ctx.scopes.push();
  push_label_scope(ctx, b);
  for (auto& s : b.stmts) {
    if (auto* d = s.get_if<VarDecl>()) {
      declare(ctx, *d);
      check_variable_rules(ctx, *d, false);
    } else if (auto* ins = s.get_if<Instruction>()) {
      Resolved r = check_instruction(ctx, *ins);
      if (r.family) check_structure(ctx, *ins, r);
      ctx.fn_instructions.emplace_back(ins, r);
    } else if (auto* inner = s.get_if<Block>()) {
      walk_block(ctx, *inner);
    } else if (auto* dir = s.get_if<Directive>()) {
      if (dir->name == ".branchtargets") check_branch_targets_directive(ctx, *dir);
    }
  }
  ctx.label_scopes.pop_back();
  ctx.scopes.pop();
}

void walk_function(CheckContext& ctx, const Function& f) {
  ctx.fn = &f;
  ctx.fn_instructions.clear();
  collect_prototypes(ctx, f);
  collect_branch_tables(ctx, f);
  ctx.scopes.push();
  for (auto& p : f.rets) declare(ctx, p);
  for (auto& p : f.params) declare(ctx, p);
  walk_block(ctx, *f.body);
  ctx.scopes.pop();
  if (ctx.want_warnings()) check_function_pitfalls(ctx, f);
  ctx.fn = nullptr;
}

}  // namespace

void validate(const Module& m, Diagnostics& diags, const ValidateOptions& opts) {
  CheckContext ctx(m, diags, opts);
  check_module_header(ctx);
  check_module_rules(ctx);
  ctx.scopes.push();  // module scope
  declare_functions(ctx);
  for (size_t i = 0; i < m.items.size(); ++i) {
    ctx.item_index = i;
    if (auto* d = std::get_if<VarDecl>(&m.items[i].node)) {
      declare(ctx, *d);
      check_variable_rules(ctx, *d, true);
    }
    if (auto* f = std::get_if<Function>(&m.items[i].node); f && f->body) walk_function(ctx, *f);
  }
}

}  // namespace ptxforge::ptx
