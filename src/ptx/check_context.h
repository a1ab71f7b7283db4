// Shared state of one validation run, passed to every check. Internal to the validator.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ptx/ast.h"
#include "ptx/isa.h"
#include "ptx/symbols.h"
#include "ptx/target.h"
#include "ptx/validator.h"
#include "util/diagnostic.h"
#include "util/flat_map.h"
#include "util/small_vector.h"

namespace ptxforge::ptx {

struct ModuleFacts {
  std::optional<PtxVersion> version;
  std::vector<Target> targets;  // usually one
  SourceLoc version_loc, target_loc;
};

// An instruction resolved against the table.
struct Resolved {
  const IsaFamily* family = nullptr;
  size_t consumed = 0;           // modifiers that are part of the family name
  std::string_view type;         // the instruction type (last type modifier), "" if none
  std::string_view src_type;     // cvt/set/slct/dp4a: the second type
};

struct CheckContext {
  CheckContext(const Module& m, Diagnostics& d, const ValidateOptions& o) : module(m), diags(d), opts(o) {}
  const Module& module;
  Diagnostics& diags;
  const ValidateOptions& opts;
  ModuleFacts facts;
  ScopeStack scopes;
  const Function* fn = nullptr;
  // Keyed by views into the module.
  // Labels are block-scoped like variables: one frame per enclosing `{ }`, innermost last.
  // A label is visible in its block (also before its definition) and in blocks inside it.
  std::vector<FlatMap<std::string_view, SourceLoc>> label_scopes;
  const SourceLoc* find_label(std::string_view name) const {
    for (auto it = label_scopes.rbegin(); it != label_scopes.rend(); ++it)
      if (auto f = it->find(name); f != it->end()) return &f->second;
    return nullptr;
  }
  // A label of the current function in any block, visible here or not (for the error of a
  // branch into a block). Only a failed lookup asks, so the map is built on the first.
  const Label* find_label_anywhere(std::string_view name);
  FlatMap<std::string_view, const Label*> function_labels;
  const Function* function_labels_of = nullptr;  // the function they were collected from
  FlatMap<std::string_view, const Directive*> prototypes;  // label: .callprototype ...
  FlatMap<std::string_view, const Function*> functions;
  // The current function's instructions in source order with their resolution, filled by the
  // walk for the function-wide checks that follow it (check_llm_pitfalls.cpp).
  std::vector<std::pair<const Instruction*, Resolved>> fn_instructions;
  // Opcode spellings ("ld.global.nc.v4.f32") whose resolution and every check that depends on
  // the spelling alone (modifiers, version and target) passed: a later instruction spelled the
  // same reuses the resolution and skips those checks. The module's header is fixed while it
  // is validated, so the answer cannot change.
  FlatMap<std::string_view, Resolved> clean_spellings;
  // Module items are declared in order for ptxas: the index of the item being checked and
  // the first item that declares each function.
  size_t item_index = 0;
  FlatMap<std::string_view, size_t> function_first_item;
  size_t last_first_item = 0;          // the largest index in function_first_item
  bool percent_function_name = false;  // a function named like a register (%f): legal, rare
  FlatSet<std::string_view> branch_tables;  // labels of .branchtargets in the current function
  // check_tcgen05.cpp: the first tcgen05 .cta_group of `tcgen05_fn` (a function uses one).
  const Function* tcgen05_fn = nullptr;
  std::string_view tcgen05_cta_group;
  SourceLoc tcgen05_cta_loc;
  // check_module_rules.cpp: the .const bytes declared so far (the bank holds 64 KiB), and
  // whether passing it was reported.
  uint64_t const_bytes = 0;
  bool const_reported = false;
  bool want_warnings() const { return opts.warnings; }
};

// Scope depth of the declarations at the top of a function body: module, parameters, body.
inline constexpr size_t kFunctionBodyDepth = 3;

// The register or variable an address starts from: [%rd1], [%rd1+8], [buf+4]; null for
// another operand (check_structure.cpp).
const Expr* address_base(const Operand& o);

// Names found in an instruction's operands; most instructions have a handful.
using ExprRefs = SmallVector<const Expr*, 8>;

// check_declarations.cpp
void check_module_header(CheckContext& ctx);
void declare(CheckContext& ctx, const VarDecl& d);
void declare_functions(CheckContext& ctx);
void collect_prototypes(CheckContext& ctx, const Function& f);
void push_label_scope(CheckContext& ctx, const Block& b);  // the labels defined directly in `b`

// check_instructions.cpp
Resolved resolve(CheckContext& ctx, const Instruction& ins);
Resolved check_instruction(CheckContext& ctx, const Instruction& ins);
void check_branch_targets_directive(CheckContext& ctx, const Directive& d);

// check_modifier_rules.cpp: modifiers a form requires or refuses (missing-/illegal-modifier)
void check_modifier_rules(CheckContext& ctx, const Instruction& ins, const Resolved& r);

// check_immediates.cpp: immediates outside an instruction's own limits (immediate-value)
void check_immediate_values(CheckContext& ctx, const Instruction& ins, const Resolved& r);

// check_operands.cpp
void check_operands(CheckContext& ctx, const Instruction& ins, const Resolved& r);
void check_names(CheckContext& ctx, const Instruction& ins, const Resolved& r);
// Names in an operand: registers, symbols, labels (each with its location).
void collect_names(const Operand& o, ExprRefs& out);
void collect_names(const Expr& e, ExprRefs& out);
// The manual's type-compatibility rule for a register of type `reg` used as `ins` (not ld/st/cvt).
bool compatible_types(std::string_view reg, std::string_view ins);

// check_structure.cpp: rules on single instructions beyond the ISA table (special registers,
// branch targets, read-only spaces, address widths, mbarrier operands, declaration order).
void collect_branch_tables(CheckContext& ctx, const Function& f);
void check_structure(CheckContext& ctx, const Instruction& ins, const Resolved& r);

// check_module_rules.cpp: .address_size, entry-only directives, initializers, module-scope spaces.
void check_module_rules(CheckContext& ctx);
void check_variable_rules(CheckContext& ctx, const VarDecl& d, bool module_scope);

// check_fragments.cpp
void check_fragments(CheckContext& ctx, const Instruction& ins, const Resolved& r);

// check_llm_pitfalls.cpp
void check_function_pitfalls(CheckContext& ctx, const Function& f);

}  // namespace ptxforge::ptx
