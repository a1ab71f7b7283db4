// Checks on declarations: the module header (.version, .target, .address_size and their
// compatibility), and names declared twice in one scope [duplicate-decl, duplicate-label,
// duplicate-function], register ranges included (%r<5> twice, or %r<5> and %r3).
#include <algorithm>

#include <fmt/format.h>

#include "ptx/check_context.h"
#include "ptx/isa.h"
#include "util/text.h"

namespace ptxforge::ptx {

void check_module_header(CheckContext& ctx) {
  const Directive* v = ctx.module.version();
  const Directive* t = ctx.module.target();
  // ptxas rejects every module without them, even an empty file or one of bare directives.
  if (!v) {
    // Where the directive belongs, as ptxas points: the module's first line that is not blank
    // or a comment (prose left before '.version' lands here too).
    SourceLoc at{1, 1};
    uint32_t line = 1;
    bool in_block = false;
    for (std::string_view l : split(std::string_view(ctx.module.source), '\n')) {
      std::string_view t = trim(l);
      if (in_block) {
        if (t.find("*/") != std::string_view::npos) in_block = false;
      } else if (starts_with(t, "/*")) {
        in_block = t.find("*/", 2) == std::string_view::npos;
      } else if (!t.empty() && !starts_with(t, "//")) {
        at = {line, static_cast<uint32_t>(l.find_first_not_of(" \t\r") + 1)};
        break;
      }
      ++line;
    }
    auto& d = ctx.diags.error(at, "missing .version directive", "missing-version");
    d.hint = "a module starts with '.version 8.0' (or later), '.target sm_90a' and '.address_size 64'; "
             "'ptxforge fmt --add-header' adds them";
  } else {
    ctx.facts.version_loc = v->loc;
    auto pv = v->args.empty() ? std::nullopt : PtxVersion::parse(v->args[0]);
    if (!pv) {
      ctx.diags.error(v->loc, fmt::format("'.version {}' is not a PTX ISA version", v->args.empty() ? "" : v->args[0]),
                      "bad-version").hint = "write major.minor, e.g. .version 8.0";
    } else if (*pv > kNewestPtx) {
      auto& d = ctx.diags.error(v->loc, fmt::format("PTX ISA .version {} is newer than the newest supported ({})",
                                                    pv->str(), kNewestPtx.str()), "bad-version");
      d.hint = fmt::format("CUDA 13.0's ptxas accepts up to .version {}", kNewestPtx.str());
    } else {
      ctx.facts.version = pv;
    }
  }
  if (!t) {
    auto& d = ctx.diags.error({1, 1}, "missing .target directive", "missing-target");
    d.hint = "add '.target sm_90a' (or the architecture you compile for) after .version";
  } else {
    ctx.facts.target_loc = t->loc;
    for (auto& name : ctx.module.target_names()) {
      if (name == "texmode_unified" || name == "texmode_independent" || name == "debug" || name == "map_f64_to_f32")
        continue;
      auto tg = Target::parse(name);
      if (!tg || !min_version_for(*tg)) {
        std::vector<std::string_view> names;
        std::vector<std::string> storage;
        for (auto& k : known_targets()) storage.push_back(k.str());
        for (auto& s : storage) names.push_back(s);
        auto& d = ctx.diags.error(t->loc, fmt::format("unknown target '{}'", name), "bad-target");
        std::string guess = closest_match(name, names);
        d.hint = guess.empty() ? "targets look like sm_80, sm_90, sm_90a, sm_100a" : fmt::format("did you mean '{}'?", guess);
        continue;
      }
      ctx.facts.targets.push_back(*tg);
      auto need = min_version_for(*tg);
      if (ctx.facts.version && *ctx.facts.version < *need) {
        auto& d = ctx.diags.error(t->loc, fmt::format("PTX .version {} does not support .target {}",
                                                      ctx.facts.version->str(), name), "version-target");
        d.hint = fmt::format(".target {} needs .version {} or later", name, need->str());
        d.notes.push_back({ctx.facts.version_loc, "version declared here"});
      }
    }
  }
  for (auto& it : ctx.module.items) {
    auto* d = std::get_if<Directive>(&it.node);
    if (!d || d->name != ".address_size") continue;
    if (d->args.empty() || (d->args[0] != "32" && d->args[0] != "64")) {
      ctx.diags.error(d->loc, ".address_size must be 32 or 64", "address-size");
    } else if (d->args[0] == "32") {
      // CUDA 13's ptxas has no 32-bit ABI on any target ("32-Bit ABI ... is not supported").
      auto& diag = ctx.diags.error(d->loc, ".address_size 32 is not supported by CUDA 13's ptxas", "address-size");
      diag.hint = "write '.address_size 64' and keep addresses in 64-bit registers (.b64/.u64)";
    }
  }
}

namespace {
Diagnostic& report_duplicate(CheckContext& ctx, const std::string& name, SourceLoc loc, const SymbolInfo& earlier,
                             const char* id) {
  auto& d = ctx.diags.error(loc, fmt::format("'{}' is already declared in this scope", name), id);
  d.length = static_cast<uint32_t>(name.size());
  d.notes.push_back({earlier.loc, "previous declaration is here"});
  return d;
}
// Registers, variables and parameters are declared with the fundamental types; .bf16, .tf32,
// the fp8/fp6/fp4 types and packed .u16x2/.f32x2 are instruction types only (ptxas: "Type .e4m3
// may only be used as an instruction type", or a syntax error for .bf16 and .tf32). ptxas
// drops an unused .shared variable before it looks at the type, so there only the names it
// cannot even parse are reported.
void check_declared_type(CheckContext& ctx, const VarDecl& d) {
  static constexpr std::string_view kDeclarable[] = {".b8",  ".b16", ".b32", ".b64", ".b128", ".u8",  ".u16",  ".u32",
                                                     ".u64", ".s8",  ".s16", ".s32", ".s64",  ".f16", ".f16x2", ".f32",
                                                     ".f64", ".pred"};
  static constexpr std::string_view kUnparsable[] = {".bf16", ".bf16x2", ".tf32", ".e2m1",   ".e2m3", ".e3m2", ".ue8m0",
                                                     ".ue4m3", ".s2f6x2", ".f8f6f4", ".b1", ".u4",   ".s4"};
  std::string_view type = d.type;
  // No PTX type at all (`.f22`, `.float`, `.i32`): a syntax error to ptxas in every state space.
  if (!type.empty() && !is_type_name(type)) {
    auto& e = ctx.diags.error(d.loc, fmt::format("'{}' is not a PTX type", type), "decl-type");
    std::vector<std::string_view> names(std::begin(kDeclarable), std::end(kDeclarable));
    std::string near = closest_match(type, names);
    e.hint = near.empty() ? "declare one of .b8 .. .b128, .u8 .. .u64, .s8 .. .s64, .f16, .f16x2, .f32, .f64 or .pred"
                          : fmt::format("did you mean '{}'?", near);
    return;
  }
  // .b128 is declarable from PTX 8.3 on; ptxas reports each declaration before then, ahead of
  // the instructions that use it, except a .shared one it can drop unused (an instruction that
  // uses it is reported at that instruction).
  if (type == ".b128" && d.space != ".shared" && ctx.facts.version && *ctx.facts.version < PtxVersion{8, 3}) {
    auto& e = ctx.diags.error(d.loc, fmt::format("type .b128 requires PTX ISA .version 8.3 or later (module has {})",
                                                 ctx.facts.version->str()),
                              "needs-version");
    e.hint = "raise the header to '.version 8.3'";
    e.notes.push_back({ctx.facts.version_loc, "version declared here"});
    return;
  }
  auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), type) != std::end(list); };
  int bits = type_bits(type);
  if (!in(kUnparsable)) {
    if (bits == 0 || type_kind(type) == 'o' || in(kDeclarable) || d.space == ".shared") return;
  }
  auto& e = ctx.diags.error(d.loc, fmt::format("'{}' is an instruction type only, not a {} type", type,
                                               d.space == ".reg" ? "register" : d.space == ".param" ? "parameter" : "variable"),
                            "decl-type");
  std::string carrier = fmt::format(".b{}", std::max(8, bits));
  e.hint = bits < 8 ? fmt::format("declare it {} and pack the {}-bit values into it", carrier, bits ? bits : 4)
                    : fmt::format("declare it {} ({} values live in {} registers and memory)", carrier, type, carrier);
}
}  // namespace

void declare(CheckContext& ctx, const VarDecl& d) {
  check_declared_type(ctx, d);
  bool is_reg = d.space == ".reg";
  bool is_param = d.space == ".param";
  for (auto& n : d.names) {
    SymbolInfo info;
    info.kind = is_reg ? SymbolInfo::Kind::reg : is_param ? SymbolInfo::Kind::param : SymbolInfo::Kind::variable;
    info.decl = &d;
    info.space = d.space;
    info.type = d.type;
    info.vec = d.vec;
    info.loc = n.loc;
    if (is_reg && !n.dims.empty() && n.dims.size() == 1 && n.dims[0] && !n.range) {
      // `.reg .b32 %r[6];` means a range: report it once here, then declare the range the
      // writer meant so that the uses of %r0..%r5 do not each report an undeclared register.
      uint64_t count = *n.dims[0];
      auto& e = ctx.diags.error(n.loc, fmt::format("registers are declared as a range '{}<{}>', not an array '{}[{}]'",
                                                   n.name, count, n.name, count), "reg-array");
      e.length = static_cast<uint32_t>(n.name.size());
      e.hint = fmt::format("write '.reg {} {}<{}>;' to declare {}0 .. {}{}", d.type, n.name, count, n.name, n.name,
                           count ? count - 1 : 0);
      if (count > 0 && count <= (1u << 24)) ctx.scopes.top().add_range(n.name, static_cast<uint32_t>(count), info);
      continue;
    }
    if (n.range) {
      if (const SymbolInfo* prev = ctx.scopes.top().add_range(n.name, *n.range, info)) {
        auto& diag = report_duplicate(ctx, fmt::format("{}<{}>", n.name, *n.range), n.loc, *prev, "duplicate-decl");
        diag.hint = fmt::format(
            "'{}<N>' declares {}0 .. {}(N-1); declare each prefix once per scope, with the largest N you need",
            n.name, n.name, n.name);
      }
      continue;
    }
    if (n.name == "_") continue;  // prototype placeholders
    // A function's parameters and the declarations at the top of its body share one scope
    // for ptxas (".reg .b64 p;" next to ".param .u64 p" is a duplicate definition).
    if (ctx.fn && ctx.scopes.depth() == kFunctionBodyDepth)
      if (const SymbolInfo* param = ctx.scopes.at(kFunctionBodyDepth - 2).find(n.name)) {
        report_duplicate(ctx, std::string(n.name), n.loc, *param, "duplicate-decl");
        continue;
      }
    // .extern declarations may be repeated by a definition.
    if (const SymbolInfo* prev = ctx.scopes.top().add(n.name, info)) {
      bool extern_pair = prev->decl && (std::find(prev->decl->linkage.begin(), prev->decl->linkage.end(), ".extern") !=
                                            prev->decl->linkage.end() ||
                                        std::find(d.linkage.begin(), d.linkage.end(), ".extern") != d.linkage.end());
      if (!extern_pair) report_duplicate(ctx, std::string(n.name), n.loc, *prev, "duplicate-decl");
    }
  }
}

void declare_functions(CheckContext& ctx) {
  for (auto& it : ctx.module.items) {
    auto* f = std::get_if<Function>(&it.node);
    if (!f) continue;
    auto [pos, inserted] = ctx.functions.emplace(f->name, f);
    if (!inserted && f->body && pos->second->body) {
      auto& d = ctx.diags.error(f->loc, fmt::format("function '{}' is defined twice", f->name), "duplicate-function");
      d.length = static_cast<uint32_t>(f->name.size());
      d.notes.push_back({pos->second->loc, "first definition is here"});
    }
    if (f->body) pos->second = f;  // prefer the definition over a prototype
    SymbolInfo info;
    info.kind = SymbolInfo::Kind::function;
    info.fn = f;
    info.loc = f->loc;
    (void)ctx.scopes.module().add(f->name, info);
  }
}

void collect_prototypes(CheckContext& ctx, const Function& f) {
  ctx.prototypes.clear();
  const Label* previous_label = nullptr;
  for_each_statement(*f.body, [&](const Statement& s) {
    if (auto* d = s.get_if<Directive>(); d && previous_label && d->name == ".callprototype")
      ctx.prototypes.emplace(previous_label->name, d);
    previous_label = s.get_if<Label>();
  });
}

const Label* CheckContext::find_label_anywhere(std::string_view name) {
  if (function_labels_of != fn) {
    function_labels.clear();
    if (fn && fn->body)
      for_each_statement(*fn->body, [&](const Statement& s) {
        if (auto* l = s.get_if<Label>()) function_labels.emplace(l->name, l);
      });
    function_labels_of = fn;
  }
  auto it = function_labels.find(name);
  return it == function_labels.end() ? nullptr : it->second;
}

// PTX ISA "Labels and Function Names" / ptxas: a label belongs to the block that defines it.
// Sibling blocks may reuse a name (every inlined asm wait loop does), an inner block may
// shadow an outer label, and a branch cannot reach into a block from outside it.
void push_label_scope(CheckContext& ctx, const Block& b) {
  auto& frame = ctx.label_scopes.emplace_back();
  size_t labels = 0;
  for (auto& s : b.stmts) labels += s.is<Label>();
  frame.reserve(labels);
  for (auto& s : b.stmts) {
    auto* l = s.get_if<Label>();
    if (!l) continue;
    auto [it, inserted] = frame.emplace(l->name, l->loc);
    if (!inserted) {
      auto& d = ctx.diags.error(l->loc, fmt::format("label '{}' is defined twice in one block of '{}'", l->name,
                                                    ctx.fn ? ctx.fn->name : Text()),
                                "duplicate-label");
      d.length = static_cast<uint32_t>(l->name.size());
      d.notes.push_back({it->second, "first definition is here"});
      d.hint = "labels are scoped to their { } block: rename one, or put each copy in its own block";
    }
  }
}

}  // namespace ptxforge::ptx
