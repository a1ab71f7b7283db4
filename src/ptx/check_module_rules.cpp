// Rules on a module's shape rather than on one instruction, each confirmed against ptxas 13.0:
// performance directives belong to kernels, with 1-3 positive sizes and no conflicting pair,
// and .noreturn to functions without return values [function-directive];
// variables live in spaces that allow them [variable-space]; initializers appear only on
// .global/.const variables [initializer-space], hold no more elements than the declaration
// [initializer-count] and have its shape and kind of literal [initializer-type]; arrays have
// a size unless .extern [incomplete-array]; registers are not arrays and .extern stays at
// module scope, kernel parameters are .param and none is .pred [variable-space]; the
// header comes first, in order [header-order]; a .loc's function_name is a label a debug
// section defines [undeclared-label] and its inlined_at an earlier .loc's location
// [loc-inlined-at].
// It also records where each function is first declared, for use-before-declaration.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "ptx/check_context.h"
#include "util/text.h"

namespace ptxforge::ptx {

namespace {

bool entry_only(std::string_view d) {
  return d == ".maxntid" || d == ".reqntid" || d == ".minnctapersm" || d == ".maxnreg" || d == ".reqnctapercluster" ||
         d == ".explicitcluster" || d == ".maxclusterrank" || d == ".blocksareclusters" || d == ".maxnctapersm";
}

// The numbers of a directive such as ".maxntid 128, 1, 1"; nullopt when a word is not a number.
std::optional<std::vector<uint64_t>> directive_numbers(const Directive& d) {
  std::vector<uint64_t> out;
  for (auto& w : d.args) {
    if (w == ",") continue;
    std::string text(w);
    char* end = nullptr;
    uint64_t v = std::strtoull(text.c_str(), &end, 0);
    if (text.empty() || *end != 0) return std::nullopt;
    out.push_back(v);
  }
  return out;
}

// Kernel directive arguments: ptxas wants 1..3 sizes (one for the counts) and no zero
// ("Positive non-zero value expected"), and refuses .maxntid with .reqntid and
// .reqnctapercluster with .maxclusterrank ("Conflicting directives").
void check_entry_directive_args(CheckContext& ctx, const Function& f) {
  const Directive* seen_maxntid = nullptr;
  const Directive* seen_cluster = nullptr;
  for (auto& d : f.perf) {
    std::string_view n = d.name;
    bool dims = n == ".maxntid" || n == ".reqntid" || n == ".reqnctapercluster";
    bool count = n == ".maxnreg" || n == ".minnctapersm" || n == ".maxclusterrank";
    if (!dims && !count) continue;
    auto report = [&](std::string msg, std::string hint) {
      auto& diag = ctx.diags.error(d.loc, std::move(msg), "function-directive");
      diag.length = static_cast<uint32_t>(n.size());
      diag.hint = std::move(hint);
    };
    auto numbers = directive_numbers(d);
    if (numbers && (numbers->empty() || numbers->size() > (dims ? 3u : 1u))) {
      report(fmt::format("'{}' takes {} number{}, not {}", n, dims ? "1 to 3" : "exactly one", dims ? "s" : "",
                         numbers->size()),
             dims ? fmt::format("write '{} 128' or '{} 16, 8, 1' (x, y, z)", n, n) : fmt::format("write '{} 2'", n));
      continue;
    }
    bool positive = n != ".reqnctapercluster" && n != ".maxclusterrank";
    if (numbers && positive)
      for (uint64_t v : *numbers)
        if (v == 0) {
          report(fmt::format("'{}' needs positive sizes, and one is 0", n), "every dimension is at least 1");
          break;
        }
    bool threads = n == ".maxntid" || n == ".reqntid";
    bool cluster = n == ".reqnctapercluster" || n == ".maxclusterrank";
    const Directive*& earlier = threads ? seen_maxntid : seen_cluster;
    if ((threads || cluster) && earlier && earlier->name != n) {
      report(fmt::format("'{}' and '{}' cannot both be given", earlier->name, n),
             threads ? "keep .reqntid when the block size is fixed, .maxntid when it is only bounded"
                     : "keep .reqnctapercluster when the cluster shape is fixed, .maxclusterrank when it is bounded");
      ctx.diags.list().back().notes.push_back({earlier->loc, "the other directive is here"});
    }
    if (threads || cluster) earlier = &d;
  }
}

// Kernel parameters live in .param, function parameters in .param or .reg; no parameter is a .param .pred ("Predicate variable
// must be in register state space"); a .func may take .reg parameters.
void check_parameters(CheckContext& ctx, const Function& f) {
  auto check = [&](const VarDecl& p) {
    if (f.is_entry && p.space != ".param") {
      auto& diag = ctx.diags.error(p.loc, fmt::format("kernel parameters are .param, not {}", p.space), "variable-space");
      diag.hint = "declare it '.param .u64 name' (pointers) or '.param .u32 name' and read it with ld.param";
    } else if (!f.is_entry && p.space != ".param" && p.space != ".reg") {
      auto& diag = ctx.diags.error(p.loc, fmt::format("function parameters are .param or .reg, not {}", p.space),
                                   "variable-space");
      diag.hint = "pass a pointer to the memory instead: '.param .u64 ptr'";
    } else if (p.space == ".param" && p.type == ".pred") {
      auto& diag = ctx.diags.error(p.loc, "a .param parameter cannot be .pred", "variable-space");
      diag.hint = f.is_entry ? "pass a .u32 (0 or 1) and compare it with setp"
                             : "pass a .u32 (0 or 1), or declare the parameter '.reg .pred'";
    }
  };
  for (auto& p : f.params) check(p);
  for (auto& p : f.rets) check(p);
}

// .version, then .target, then (optionally) .address_size, each once, before anything else.
void check_header_order(CheckContext& ctx) {
  if (!ctx.module.version() || !ctx.module.target()) return;  // missing-version / missing-target say it
  const auto& items = ctx.module.items;
  for (size_t i = 0; i < items.size(); ++i) {
    auto* d = std::get_if<Directive>(&items[i].node);
    if (!d || (d->name != ".version" && d->name != ".target" && d->name != ".address_size")) continue;
    size_t want = d->name == ".version" ? 0 : d->name == ".target" ? 1 : 2;
    if (i == want) continue;
    auto& diag = ctx.diags.error(d->loc, want == 0   ? std::string("'.version' must be the first line of the module, once")
                                         : want == 1 ? std::string("'.target' must come right after .version, once")
                                                     : std::string("'.address_size' must come right after .target, once"),
                                 "header-order");
    diag.length = static_cast<uint32_t>(d->name.size());
    diag.hint = "start the module with '.version 8.0', '.target sm_90a', '.address_size 64' in that order";
  }
}

void check_function_directives(CheckContext& ctx, const Function& f) {
  if (f.is_entry) check_entry_directive_args(ctx, f);
  for (auto& d : f.perf) {
    if (!f.is_entry && entry_only(d.name)) {
      auto& diag = ctx.diags.error(d.loc, fmt::format("'{}' applies to kernels (.entry) only, not to the .func '{}'",
                                                      d.name, f.name), "function-directive");
      diag.length = static_cast<uint32_t>(d.name.size());
      diag.hint = fmt::format("put {} on the .entry that calls '{}', or drop it", d.name, f.name);
    } else if (!f.is_entry && d.name == ".noreturn" && f.has_ret_list && !f.rets.empty()) {
      auto& diag = ctx.diags.error(d.loc, fmt::format("'.noreturn' cannot mark '{}', which has return parameters", f.name),
                                   "function-directive");
      diag.length = static_cast<uint32_t>(d.name.size());
      diag.hint = "a function that never returns has no return values: drop them or drop .noreturn";
    } else if (f.is_entry && d.name == ".noreturn") {
      auto& diag = ctx.diags.error(d.loc, fmt::format("'.noreturn' applies to .func only, not to the kernel '{}'", f.name),
                                   "function-directive");
      diag.length = static_cast<uint32_t>(d.name.size());
      diag.hint = "remove .noreturn from the .entry";
    } else if (f.is_entry && d.name == ".maxnctapersm") {
      auto& diag = ctx.diags.error(d.loc, "'.maxnctapersm' was removed in PTX ISA 2.1", "function-directive");
      diag.length = static_cast<uint32_t>(d.name.size());
      diag.hint = "write .minnctapersm instead";
    }
  }
}

struct LiteralKind {
  bool literal = false;     // an integer or floating literal, possibly negated
  bool floating = false;
};

LiteralKind literal_kind(const Expr& e) {
  const Expr* x = &e;
  while (x->kind == Expr::Kind::unary && (x->text == "-" || x->text == "+") && !x->args.empty()) x = &x->args[0];
  if (x->kind == Expr::Kind::integer) return {true, false};
  if (x->kind == Expr::Kind::floating) return {true, true};
  return {};
}

struct InitChecker {
  CheckContext& ctx;
  const VarDecl& d;
  const Declarator& n;
  bool reported = false;

  void error(const Operand& o, std::string msg, const char* id, std::string hint) {
    if (reported) return;  // one finding per declarator: the first explains the rest
    reported = true;
    auto& diag = ctx.diags.error(o.loc, std::move(msg), id);
    diag.hint = std::move(hint);
  }

  std::string declared() const {
    std::string s = fmt::format("{}{} {}", d.vec ? fmt::format(".v{} ", d.vec) : "", d.type, n.name);
    for (auto& dim : n.dims) s += dim ? fmt::format("[{}]", *dim) : "[]";
    return s;
  }

  // `level` indexes n.dims; past the dims comes the vector level (when .vN), then scalars.
  void check(const Operand& o, size_t level) {
    bool array_level = level < n.dims.size();
    bool vector_level = !array_level && d.vec && level == n.dims.size();
    if (array_level || vector_level) {
      if (o.kind != Operand::Kind::vector) {
        error(o, fmt::format("'{}' needs a {{...}} initializer here, not a single value", declared()),
              "initializer-type", "arrays and vectors are initialized with braces, one level per dimension: "
                                  "a[2][2] = {{1, 2}, {3, 4}}");
        return;
      }
      size_t count = o.elems.size();
      if (array_level && n.dims[level] && count > *n.dims[level]) {
        error(o, fmt::format("{} initializers for {} elements of '{}'", count, *n.dims[level], declared()),
              "initializer-count", "drop the extra values, or enlarge the array (a[] takes its size from the initializer)");
        return;
      }
      if (vector_level && count != d.vec) {
        error(o, fmt::format("{} initializers for the {}-element vector '{}'", count, d.vec, declared()),
              "initializer-count", fmt::format("a .v{} initializer lists exactly {} values", d.vec, d.vec));
        return;
      }
      for (auto& e : o.elems) check(e, level + 1);
      return;
    }
    if (o.kind == Operand::Kind::vector) {
      error(o, fmt::format("'{}' is {}, so its initializer is a single value, not a {{...}} list", declared(),
                           n.dims.empty() ? "a scalar" : "initialized one level per dimension"),
            "initializer-type", n.dims.empty() ? "write '= 1', or declare an array: a[2] = {1, 2}" : "");
      return;
    }
    if (o.kind != Operand::Kind::expr) return;
    LiteralKind lit = literal_kind(o.expr);
    if (!lit.literal) return;  // symbols and expressions: ptxas judges them; no alarm
    char kind = type_kind(d.type);
    if (kind == 'f' && !lit.floating)
      error(o, fmt::format("integer literal initializing the {} variable '{}'", d.type, n.name), "initializer-type",
            "write a floating-point literal (1.0) or a bit pattern (0f3F800000)");
    else if ((kind == 'u' || kind == 's') && lit.floating)
      error(o, fmt::format("floating-point literal initializing the {} variable '{}'", d.type, n.name), "initializer-type",
            fmt::format("write an integer, or declare the variable .b{} to hold a float's bits", type_bits(d.type)));
  }
};

void check_initializer(CheckContext& ctx, const VarDecl& d, const Declarator& n) {
  InitChecker c{ctx, d, n};
  if (d.space != ".global" && d.space != ".const") {
    c.error(*n.init, fmt::format("'{}' is in {}, which takes no initializer", n.name, d.space), "initializer-space",
            d.space == ".reg" ? "assign it with mov after the declaration"
                              : "only .global and .const variables have initial values; store the value at run time "
                                "(e.g. st.shared), or move the variable to .global/.const");
    return;
  }
  if (d.type == ".f16" || d.type == ".f16x2" || d.type == ".bf16" || d.type == ".bf16x2") {
    c.error(*n.init, fmt::format("a {} variable cannot have an initializer", d.type), "initializer-type",
            fmt::format("declare it .b{} and give the bit pattern (e.g. 0x3C00 for 1.0 in .f16)", type_bits(d.type)));
    return;
  }
  c.check(*n.init, 0);
}

// Three numbers of a .loc's words from `at` on (file, line, column), by value; nullopt when
// they are not all numbers.
std::optional<std::array<uint64_t, 3>> loc_numbers(const List<Text>& args, size_t at) {
  if (args.size() < at + 3) return std::nullopt;
  std::array<uint64_t, 3> out{};
  for (size_t i = 0; i < 3; ++i) {
    std::string word(args[at + i]);
    char* end = nullptr;
    out[i] = std::strtoull(word.c_str(), &end, 0);
    if (word.empty() || *end != '\0') return std::nullopt;
  }
  return out;
}

// `.loc F L C, function_name N, inlined_at F2 L2 C2` (inlined code in -lineinfo and -G modules):
// - N must be a label that a debug section defines (nvcc's $L__info_stringK: in .debug_str).
//   ptxas: "Unresolved label 'N' used in function_name attribute". Any `name:` at the start of
//   a section line counts as defined; a code label of that name does not (ptxas rejects it
//   too). One error per name, at its first .loc, as ptxas gives one.
// - F2 L2 C2 must be the location of an earlier .loc in the module, in any function (ptxas:
//   "Source location F2 L2 C2 used in inlined_at directive must be used in a preceding .loc
//   directive"), reported at each .loc, as ptxas does.
bool names_function(const Directive& loc) { return loc.args.size() > 5 && loc.args[4] == "function_name"; }

void check_loc_directives(CheckContext& ctx) {
  std::vector<const Directive*> locs;  // every .loc, in source order
  std::vector<const Directive*> sections;
  auto note_loc = [&](const Directive& d) {
    if (d.name == ".loc") locs.push_back(&d);
  };
  for (auto& item : ctx.module.items) {
    if (auto* d = std::get_if<Directive>(&item.node)) {
      note_loc(*d);
      if (d->name == ".section") sections.push_back(d);
    } else if (auto* f = std::get_if<Function>(&item.node); f && f->body) {
      for_each_statement(*f->body, [&](const Statement& s) {
        if (auto* d = s.get_if<Directive>()) note_loc(*d);
      });
    }
  }
  // Modules built with -G have tens of thousands of plain .locs and no inlined_at or
  // function_name: then there is nothing to look up.
  bool inlined = std::any_of(locs.begin(), locs.end(), [](const Directive* d) { return d->args.size() > 4; });
  if (!inlined) return;
  std::set<std::array<uint64_t, 3>> seen;  // the locations of the .locs so far
  for (const Directive* d : locs) {
    if (auto own = loc_numbers(d->args, 0)) seen.insert(*own);
    auto at = std::find(d->args.begin(), d->args.end(), Text("inlined_at"));
    if (at == d->args.end()) continue;
    auto where = loc_numbers(d->args, static_cast<size_t>(at - d->args.begin()) + 1);
    if (!where || seen.count(*where)) continue;
    auto& e = ctx.diags.error(d->loc,
                              fmt::format("inlined_at {} {} {} is not the location of an earlier .loc", (*where)[0],
                                          (*where)[1], (*where)[2]),
                              "loc-inlined-at");
    e.length = 4;  // ".loc"
    e.hint = fmt::format("inlined_at names the call site: put '.loc {} {} {}' on the call's code before this .loc",
                         (*where)[0], (*where)[1], (*where)[2]);
  }
  if (std::none_of(locs.begin(), locs.end(), [](const Directive* d) { return names_function(*d); })) return;
  FlatSet<std::string_view> defined;  // labels at the start of debug-section lines
  for (const Directive* d : sections)
    for_each_section_line(*d, [&](std::string_view line) {
      size_t colon = line.find(':');
      if (colon != std::string_view::npos && colon > 0) defined.insert(trim(line.substr(0, colon)));
    });
  FlatSet<std::string_view> reported;
  for (const Directive* d : locs) {
    if (!names_function(*d)) continue;
    std::string_view name = d->args[5];
    if (defined.count(name) || !reported.insert(name).second) continue;
    auto& e = ctx.diags.error(d->loc, fmt::format(".loc names function '{}', a label no debug section defines", name),
                              "undeclared-label");
    e.length = 4;  // ".loc"
    e.hint = fmt::format("define '{}:' in the .debug_str section (before the function's name string), or drop the "
                         "', function_name ..., inlined_at ...' part of the .loc",
                         name);
  }
}

// A kernel's parameter space: each parameter at its alignment (its .align, else its element
// size), all of them at most 4352 bytes (0x1100) before PTX 8.1 and 32764 (0x7ffc) from 8.1 on
// (ptxas: "Entry function 'k' uses too much parameter space"). Reported at the parameter that
// crosses the limit.
void check_parameter_space(CheckContext& ctx, const Function& f) {
  if (!f.is_entry || !f.body || !ctx.facts.version) return;
  const bool old = *ctx.facts.version < PtxVersion{8, 1};
  const uint64_t limit = old ? 0x1100 : 0x7ffc;
  uint64_t end = 0;
  for (auto& p : f.params) {
    uint64_t elem = static_cast<uint64_t>(type_bits(p.type)) / 8 * (p.vec ? p.vec : 1);
    if (p.space != ".param" || elem == 0) return;  // reported elsewhere
    for (auto& n : p.names) {
      uint64_t count = 1;
      for (auto& dim : n.dims) {
        if (!dim || *dim == 0) return;  // no size: reported elsewhere
        count = std::min<uint64_t>(count * std::min<uint64_t>(*dim, limit + 1), limit + 1);
      }
      uint64_t align = p.align ? p.align : elem;
      end = (end + align - 1) / align * align + elem * count;
      if (end <= limit) continue;
      auto& d = ctx.diags.error(n.loc, fmt::format("the parameters of kernel '{}' pass the {} bytes PTX {} allows at '{}'",
                                                   f.name, limit, ctx.facts.version->str(), n.name),
                                "param-space");
      d.length = static_cast<uint32_t>(n.name.size());
      d.hint = old ? "raise the header to '.version 8.1' or later (32764 bytes of parameters), or pass the data "
                     "through a pointer to global memory"
                   : "pass the data through a pointer to global memory ('.param .u64 name')";
      return;
    }
  }
}

}  // namespace

void check_module_rules(CheckContext& ctx) {
  check_header_order(ctx);
  check_loc_directives(ctx);
  for (size_t i = 0; i < ctx.module.items.size(); ++i) {
    auto* f = std::get_if<Function>(&ctx.module.items[i].node);
    if (!f) continue;
    if (ctx.function_first_item.emplace(f->name, i).second) ctx.last_first_item = i;
    ctx.percent_function_name |= f->name.starts_with('%');
    check_function_directives(ctx, *f);
    check_parameters(ctx, *f);
    check_parameter_space(ctx, *f);
  }
}

namespace {

bool has_linkage(const VarDecl& d, std::string_view word) {
  for (auto& l : d.linkage)
    if (l == word) return true;
  return false;
}

// An array needs a size unless it is .extern (dynamic shared memory) or sized by its
// initializer; a [0] dimension is no size either ("Non-external variable has incomplete type").
// An inner dimension of 0 is refused even on .extern ("Array of incomplete type").
void check_array_size(CheckContext& ctx, const VarDecl& d, const Declarator& n) {
  if (n.dims.empty()) return;
  if (d.space != ".global" && d.space != ".const" && d.space != ".shared" && d.space != ".local") return;
  bool inner_zero = false;
  for (size_t i = 1; i < n.dims.size(); ++i) inner_zero = inner_zero || (n.dims[i] && *n.dims[i] == 0);
  bool is_extern = has_linkage(d, ".extern");
  bool unsized = (n.dims[0] && *n.dims[0] == 0) || (!n.dims[0] && !n.init);
  if (!inner_zero && (is_extern || !unsized)) return;
  auto& diag = ctx.diags.error(n.loc, fmt::format("'{}' is an array without a size", n.name), "incomplete-array");
  diag.length = static_cast<uint32_t>(n.name.size());
  diag.hint = d.space == ".shared"
                  ? "dynamic shared memory is declared at module scope as '.extern .shared .align 16 .b8 smem[];' "
                    "and sized by the launch"
                  : "give the array its element count, or an initializer (a[] = {1, 2} takes its size from it)";
}

// The module's .const variables share one 64 KiB bank (ptxas: "File uses too much global
// constant data (0x11170 bytes, 0x10000 max)"), module-scope and function-scope ones alike,
// used or not. Counted without the padding between them, a lower bound on ptxas's layout, so
// that what is reported is over for certain; .extern ones (defined elsewhere when linked) and
// those whose size is unknown here count nothing. Reported at the declarator that passes it.
void count_const_bytes(CheckContext& ctx, const VarDecl& d) {
  constexpr uint64_t kBank = 0x10000;
  if (d.space != ".const" || ctx.const_reported || has_linkage(d, ".extern")) return;
  uint64_t elem = static_cast<uint64_t>(type_bits(d.type)) / 8 * (d.vec ? d.vec : 1);
  for (auto& n : d.names) {
    uint64_t bytes = elem;
    for (auto& dim : n.dims) bytes = dim && *dim ? std::min<uint64_t>(bytes * std::min<uint64_t>(*dim, kBank + 1), kBank + 1) : 0;
    ctx.const_bytes = std::min<uint64_t>(ctx.const_bytes + bytes, kBank + 1);
    if (ctx.const_bytes <= kBank) continue;
    auto& diag = ctx.diags.error(n.loc, fmt::format("'{}' takes the module's .const data past the 64 KiB of the "
                                                    "constant bank", n.name),
                                 "const-space");
    diag.length = static_cast<uint32_t>(n.name.size());
    diag.hint = "keep large tables in .global memory (read-only loads: ld.global.nc), and .const for small ones";
    ctx.const_reported = true;
    return;
  }
}

}  // namespace

void check_variable_rules(CheckContext& ctx, const VarDecl& d, bool module_scope) {
  count_const_bytes(ctx, d);
  if (!module_scope && has_linkage(d, ".extern") && d.space != ".param") {
    auto& diag = ctx.diags.error(d.loc, ".extern declarations belong at module scope, not inside a function",
                                 "variable-space");
    diag.hint = "move it above the functions, e.g. '.extern .shared .align 16 .b8 smem[];'";
    return;
  }
  if (d.space == ".reg")
    for (auto& n : d.names)
      // `%r[6]` alone is reported by declare() [reg-array], which also declares the range meant.
      if (!n.dims.empty() && !(n.dims.size() == 1 && n.dims[0] && !n.range)) {
        auto& diag = ctx.diags.error(n.loc, fmt::format("register '{}' cannot be an array", n.name), "variable-space");
        diag.length = static_cast<uint32_t>(n.name.size());
        diag.hint = fmt::format("declare numbered registers instead: '.reg {} {}<N>;' gives {}0 .. {}(N-1)", d.type,
                                n.name, n.name, n.name);
        return;
      }
  if (module_scope && (d.space == ".local" || d.space == ".param")) {
    auto& diag = ctx.diags.error(d.loc, fmt::format("{} variables cannot be declared at module scope", d.space),
                                 "variable-space");
    diag.hint = d.space == ".local" ? "declare .local variables inside the function that uses them"
                                    : "parameters belong in a function's parameter list";
  } else if (d.type == ".pred" && (d.space == ".global" || d.space == ".shared" || d.space == ".const" ||
                                   d.space == ".local")) {
    auto& diag = ctx.diags.error(d.loc, fmt::format(".pred variables live in registers, not in {}", d.space),
                                 "variable-space");
    diag.hint = "declare it '.reg .pred %p;', or store a .u8/.u32 flag in memory";
  }
  for (auto& n : d.names) {
    check_array_size(ctx, d, n);
    if (n.init && has_linkage(d, ".extern")) {
      auto& diag = ctx.diags.error(n.init->loc, fmt::format("the .extern declaration of '{}' takes no initializer", n.name),
                                   "initializer-space");
      diag.hint = "initialize the variable where it is defined (without .extern)";
    } else if (n.init) {
      check_initializer(ctx, d, n);
    }
  }
}

}  // namespace ptxforge::ptx
