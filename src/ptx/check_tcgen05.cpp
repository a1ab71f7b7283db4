// tcgen05 rules (see check_tcgen05.h). Each form is a list of modifier groups: a group is
// required or optional, holds one of its values, and a modifier outside every group of the
// form is refused. On top of the groups, the rules ptxas 13.0 enforces per form:
//   alloc     ncols an immediate power of two from 32 to 512; .shared::cta the only space
//   dealloc   ncols a multiple of 32
//   ld/st     .num per shape (.16x128b up to .x64, .16x256b up to .x32), the vector holds
//             shape-registers x num 32-bit registers, .16x32bx2 takes the half-split offset
//   mma       .block_scale with and only with the mx kinds, the scale vector size per kind,
//             the disable-output-lane vector 4 (cta_group::1) or 8 (cta_group::2) wide,
//             scale-input-d an immediate 0..15 and not on .kind::f8f6f4, .ws only with
//             cta_group::1 and collector b0..b3, .ashift only with A in tensor memory
//   commit    a 16-bit ctaMask operand with and only with .multicast::cluster
//   cp        .warpx2::02_13/01_23 on .64x128b, .warpx4 on .32x128b, none on the others;
//             the decompression pair .b8x16 then .b6x16_p32/.b4x16_p64, both or neither
// The groups are those of PTX ISA 9.0 (what ptxas 13.0 knows); a later .version may add
// modifiers, so there only the counting rules (columns, vector sizes) are applied.
#include "ptx/check_tcgen05.h"

#include <bit>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ptx/check_tcgen05_internal.h"
#include "ptx/printer.h"
#include "util/text.h"

namespace ptxforge::ptx {

namespace tcgen05_rules {

const Group kCta{"cta_group", ".cta_group::1 .cta_group::2", true};
const Group kSync{"sync", ".sync", true};
const Group kAligned{"aligned", ".aligned", true};
const Group kAlignedOpt{"aligned", ".aligned", false};
const Group kB32{"type", ".b32", true};
const Group kLdShape{"shape", ".16x64b .16x128b .16x256b .32x32b .16x32bx2", true};
const Group kNum{"num", ".x1 .x2 .x4 .x8 .x16 .x32 .x64 .x128", true};
constexpr std::string_view kCollectors =
    ".collector::a::fill .collector::a::use .collector::a::lastuse .collector::a::discard "
    ".collector::b0::fill .collector::b0::use .collector::b0::lastuse .collector::b0::discard "
    ".collector::b1::fill .collector::b1::use .collector::b1::lastuse .collector::b1::discard "
    ".collector::b2::fill .collector::b2::use .collector::b2::lastuse .collector::b2::discard "
    ".collector::b3::fill .collector::b3::use .collector::b3::lastuse .collector::b3::discard";

// The modifier groups of each form, by the word after "tcgen05.".
const std::vector<Group>* groups_of(std::string_view sub) {
  static const std::vector<Group> alloc = {kCta, kSync, kAligned, {"state space", ".shared::cta"}, kB32};
  static const std::vector<Group> dealloc = {kCta, kSync, kAligned, kB32};
  static const std::vector<Group> relinquish = {kCta, kSync, kAligned};
  static const std::vector<Group> ld = {kSync, kAlignedOpt, kLdShape, kNum, {"pack", ".pack::16b"}, kB32};
  static const std::vector<Group> st = {kSync, kAlignedOpt, kLdShape, kNum, {"unpack", ".unpack::16b"}, kB32};
  static const std::vector<Group> wait = {{"wait kind", ".wait::ld .wait::st", true}, kSync, kAligned};
  static const std::vector<Group> fence = {
      {"fence kind", ".fence::before_thread_sync .fence::after_thread_sync", true}};
  static const std::vector<Group> cp = {kCta,
                                        {"shape", ".128x256b .4x256b .128x128b .64x128b .32x128b", true},
                                        {"warp", ".warpx2::02_13 .warpx2::01_23 .warpx4"},
                                        {"destination format", ".b8x16"},
                                        {"source format", ".b6x16_p32 .b4x16_p64"}};
  static const std::vector<Group> shift = {kCta, {"direction", ".down", true}};
  static const std::vector<Group> commit = {kCta,
                                            {"completion", ".mbarrier::arrive::one", true},
                                            {"state space", ".shared::cluster"},
                                            {"multicast", ".multicast::cluster"},
                                            {"type", ".b64", true}};
  static const std::vector<Group> mma = {
      {"ws", ".ws"},
      {"sp", ".sp"},
      kCta,
      {"kind", ".kind::f16 .kind::tf32 .kind::f8f6f4 .kind::i8 .kind::mxf8f6f4 .kind::mxf4 .kind::mxf4nvf4", true},
      {"block_scale", ".block_scale"},
      {"scale vector size", ".scale_vec::1X .scale_vec::2X .scale_vec::4X .block16 .block32"},
      {"collector usage", kCollectors},
      {"ashift", ".ashift"}};
  if (sub == "alloc") return &alloc;
  if (sub == "dealloc") return &dealloc;
  if (sub == "relinquish_alloc_permit") return &relinquish;
  if (sub == "ld") return &ld;
  if (sub == "st") return &st;
  if (sub == "wait") return &wait;
  if (sub == "fence") return &fence;
  if (sub == "cp") return &cp;
  if (sub == "shift") return &shift;
  if (sub == "commit") return &commit;
  if (sub == "mma") return &mma;
  return nullptr;
}

// Any modifier of any tcgen05 form: one that is known but not in this form is "illegal here",
// anything else is unknown (a typo, "did you mean").
bool known_anywhere(std::string_view m) {
  for (auto sub : {"alloc", "ld", "st", "wait", "fence", "cp", "shift", "commit", "mma"})
    for (auto& g : *groups_of(sub))
      if (in_list(g.values, m)) return true;
  return false;
}

// A fix-it that appends `mod` to the opcode, when the opcode is written unbroken.
void Checker::append_fixit(Diagnostic& d, std::string_view mod) {
  if (ins.spelling().empty()) return;
  SourceLoc end = ins.loc;
  end.col += static_cast<uint32_t>(ins.spelling().size());
  d.fixit = FixIt{end, 0, std::string(mod)};
}

// Classifies the modifiers into groups; false when one was unknown, duplicated or missing.
bool Checker::modifiers(size_t first, bool strict) {
  chosen.assign(groups->size(), {});
  std::vector<bool> guessed(groups->size(), false);  // a misspelling stands for the group
  bool ok = true;
  for (size_t i = first; i < ins.mods.size(); ++i) {
    std::string_view m = ins.mods[i];
    if (i == first && "." + std::string(sub) == m) continue;  // the family word itself
    size_t g = 0;
    while (g < groups->size() && !in_list((*groups)[g].values, m)) ++g;
    if (g == groups->size()) {
      if (!strict) continue;
      ok = false;
      if (known_anywhere(m)) {
        at_opcode(fmt::format("'{}' does not take the modifier '{}'", name, m), "illegal-modifier",
                  fmt::format("remove '{}'; see {}", m, manual_link(find_anchor())));
      } else {
        std::vector<std::string_view> all;
        for (auto& gr : *groups)
          for (auto v : split(gr.values, ' '))
            if (!v.empty()) all.push_back(v);
        std::string guess = closest_match(m, all);
        for (size_t gi = 0; gi < groups->size(); ++gi)
          if (!guess.empty() && in_list((*groups)[gi].values, guess)) guessed[gi] = true;
        at_opcode(fmt::format("'{}' does not take the modifier '{}'", name, m), "unknown-modifier",
                  guess.empty() ? fmt::format("see {}", manual_link(find_anchor()))
                                : fmt::format("did you mean '{}'?", guess));
      }
      continue;
    }
    // A repeated .sync is accepted ("Multiple .aligned modifiers specified" for .aligned); a
    // second value of any other group is not.
    bool repeatable = (*groups)[g].what == "sync";
    if (!chosen[g].empty() && strict && !repeatable) {
      ok = false;
      at_opcode(fmt::format("'{}' has two {} modifiers, '{}' and '{}'", name, (*groups)[g].what, chosen[g], m),
                "illegal-modifier", fmt::format("keep one {} modifier", (*groups)[g].what));
      continue;
    }
    chosen[g] = m;
  }
  if (!strict) return ok;
  for (size_t g = 0; g < groups->size(); ++g) {
    const Group& gr = (*groups)[g];
    if (!gr.required || !chosen[g].empty() || guessed[g]) continue;
    ok = false;
    bool single = gr.values.find(' ') == std::string_view::npos;
    auto& d = at_opcode(
        single ? fmt::format("'{}' needs the modifier '{}'", name, gr.values)
               : fmt::format("'{}' needs a {} modifier", name, gr.what),
        "missing-modifier",
        single ? fmt::format("add '{}'", gr.values) : fmt::format("add one of: {}", gr.values));
    if (single) append_fixit(d, gr.values);
  }
  return ok;
}

std::string_view Checker::find_anchor() const {
  for (auto& f : isa_families())
    if (f.name.substr(0, 8) == "tcgen05." && f.name.substr(8) == sub) return f.anchor;
  return {};
}

bool Checker::count(size_t lo, size_t hi, std::string_view form) {
  size_t n = ins.operands.size();
  if (n >= lo && n <= hi) return true;
  at_opcode(fmt::format("'{}' takes {} operand{}, not {}", name,
                        lo == hi ? std::to_string(lo) : fmt::format("{} to {}", lo, hi), hi == 1 ? "" : "s", n),
            "operand-count", fmt::format("write it as: {}", form));
  return false;
}

// An address operand [..]; a tensor-memory address holds a 32-bit register.
void Checker::address(const Operand& o, std::string_view role, bool tmem32) {
  if (o.kind != Operand::Kind::address) {
    at(o, fmt::format("{} of '{}' is an address in brackets", role, name), "operand-kind",
       fmt::format("write [{}]", o.kind == Operand::Kind::expr ? o.expr.text : std::string_view("%r1")));
    return;
  }
  if (o.elems.empty() || o.elems[0].kind != Operand::Kind::expr) return;
  const Expr* e = &o.elems[0].expr;
  if (!tmem32) {
    // A shared-memory address: an integer register ("Illegal to use symbol '%p1' of type .pred
    // as address operand"; ptxas reports a 16-bit one elsewhere, so it is not judged here).
    if (e->kind == Expr::Kind::binary && !e->args.empty()) e = &e->args[0];
    const SymbolInfo* s = e->kind == Expr::Kind::name ? ctx.scopes.find(e->text) : nullptr;
    if (s && s->kind == SymbolInfo::Kind::reg && (type_kind(s->type) == 'p' || type_kind(s->type) == 'f'))
      at(o, fmt::format("{} of '{}' is an address: '{}' is {}", role, name, e->text, s->type), "operand-type",
         "address shared memory through a .b32 or .b64 register");
    return;
  }
  if (e->kind == Expr::Kind::integer) {
    at(o, fmt::format("{} of '{}' is a tensor-memory address in a register, not a constant", role, name),
       "operand-kind", "pass the address tcgen05.alloc wrote, in a .b32 register: [%r1]");
    return;
  }
  if (e->kind == Expr::Kind::binary && !e->args.empty()) e = &e->args[0];
  if (e->kind != Expr::Kind::name) return;
  const SymbolInfo* s = ctx.scopes.find(e->text);
  // A predicate: ptxas refuses it at this line ("Arguments mismatch for instruction 'add'"), once
  // per module (RuleAgreement.TensorMemoryAddressesThroughAPredicate judges a module a case).
  if (s && s->kind == SymbolInfo::Kind::reg && type_kind(s->type) == 'p') {
    at(o, fmt::format("{} of '{}' is a tensor-memory address: '{}' is a predicate", role, name, e->text),
       "operand-type", "pass the address tcgen05.alloc wrote, in a .b32 register: [%r1]");
    return;
  }
  // 16 or 64 bits; a float register ptxas reports at another line, so it is left alone.
  if (s && s->kind == SymbolInfo::Kind::reg && type_bits(s->type) != 32 && type_kind(s->type) != 'f')
    at(o, fmt::format("{} of '{}' is a tensor-memory address, which is 32 bits; '{}' is {}", role, name, e->text,
                      s->type),
       "operand-type", "tensor-memory addresses (from tcgen05.alloc) are .b32: use a 32-bit register");
}

void Checker::not_address(const Operand& o, std::string_view role) {
  if (o.kind == Operand::Kind::address || o.kind == Operand::Kind::vector)
    at(o, fmt::format("{} of '{}' is a register or immediate, not {}", role, name,
                      o.kind == Operand::Kind::address ? "an address" : "a vector"),
       "operand-kind", "drop the brackets");
}

// A register or immediate of `bits` (an integer register: ptxas refuses float ones here).
void Checker::scalar(const Operand& o, std::string_view role, int bits, bool allow_float) {
  not_address(o, role);
  const SymbolInfo* s = reg(o);
  if (!s) return;
  char k = type_kind(s->type);
  int b = type_bits(s->type);
  if (b == bits && (k != 'f' || allow_float) && k != 'p') return;
  at(o, fmt::format("{} of '{}' is a {}-bit {}register; '{}' is {}", role, name, bits,
                    allow_float ? "" : "integer ", o.expr.text, s->type),
     "operand-type", fmt::format("use a .b{} register", bits));
}

void Checker::predicate(const Operand& o, std::string_view role) {
  not_address(o, role);
  const SymbolInfo* s = reg(o);
  if (s && s->type != ".pred")
    at(o, fmt::format("{} of '{}' is a predicate; '{}' is {}", role, name, o.expr.text, s->type), "operand-type",
       "set a predicate first: setp.ne.b32 %p1, %r1, 0;");
}

// A {vector} of `want` 32-bit registers (immediates and _ also allowed where ptxas takes them).
void Checker::vector(const Operand& o, std::string_view role, size_t want, std::string why) {
  if (o.kind != Operand::Kind::vector) {
    at(o, fmt::format("{} of '{}' is a {{vector}} of {} registers", role, name, want), "operand-kind",
       fmt::format("write {{{}}}", want == 1 ? "%r1" : "%r1, ..."));
    return;
  }
  if (o.elems.size() != want) {
    at(o, fmt::format("{} of '{}' has {} register{}; {} needs {}", role, name, o.elems.size(),
                      o.elems.size() == 1 ? "" : "s", why, want),
       "vector-width", fmt::format("list exactly {} .b32 registers", want));
    return;
  }
  for (auto& e : o.elems) {
    const SymbolInfo* s = reg(e);
    if (s && type_bits(s->type) != 32)
      at(e, fmt::format("{} of '{}' holds 32-bit registers; '{}' is {}", role, name, e.expr.text, s->type),
         "operand-type", "use .b32 (or .f32) registers");
  }
}

void Checker::run_alloc() {
  bool alloc = sub == "alloc";
  if (sub == "relinquish_alloc_permit") {
    count(0, 0, "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
    return;
  }
  if (!count(2, 2, alloc ? "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [smem_slot], 128;"
                         : "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %taddr, 128;"))
    return;
  if (alloc) address(ins.operands[0], "the first operand (where the address is written)", false);
  else scalar(ins.operands[0], "taddr", 32);
  const Operand& n = ins.operands[1];
  scalar(n, "ncols", 32);
  auto v = literal(n);
  if (!v) return;
  if (alloc && (*v < 32 || *v > 512 || !std::has_single_bit(static_cast<uint64_t>(*v)))) {
    int64_t up = 32;
    while (up < *v && up < 512) up *= 2;
    auto& d = at(n, fmt::format("tcgen05.alloc of {} columns: the column count is a power of two from 32 to 512",
                                *v),
                 "immediate-value", fmt::format("allocate {} columns", up));
    d.length = static_cast<uint32_t>(print(n).size());
    d.fixit = FixIt{n.loc, d.length, std::to_string(up)};
  } else if (!alloc && *v % 32 != 0) {
    auto& d = at(n, fmt::format("tcgen05.dealloc of {} columns: the column count is a multiple of 32", *v),
                 "immediate-value", "free exactly the column count that tcgen05.alloc allocated");
    d.length = static_cast<uint32_t>(print(n).size());
  }
}

void Checker::run_ld_st() {
  bool ld = sub == "ld";
  std::string_view shape = get("shape"), num = get("num");
  if (shape.empty() || num.empty()) return;
  int n = std::atoi(std::string(num.substr(2)).c_str());
  int per = shape == ".16x128b" ? 2 : shape == ".16x256b" ? 4 : 1;
  if (per * n > 128) {
    at_opcode(fmt::format("'{}' with shape {} goes up to .x{}, not {}", name, shape, 128 / per, num),
              "illegal-modifier", fmt::format("split it into two loads of .x{}", n / 2));
    return;
  }
  bool split_off = shape == ".16x32bx2";
  std::string form = ld ? fmt::format("tcgen05.ld.sync.aligned{}{}.b32 {{...}}, [%taddr]{};", shape, num,
                                      split_off ? ", 16" : "")
                        : fmt::format("tcgen05.st.sync.aligned{}{}.b32 [%taddr],{} {{...}};", shape, num,
                                      split_off ? " 16," : "");
  size_t want = split_off ? 3 : 2;
  if (!count(want, want, form)) return;
  const Operand& vec = ld ? ins.operands[0] : ins.operands.back();
  const Operand& addr = ld ? ins.operands[1] : ins.operands[0];
  address(addr, "taddr", true);
  if (split_off) {
    const Operand& imm = ld ? ins.operands[2] : ins.operands[1];
    if (imm.kind != Operand::Kind::expr || reg(imm))
      at(imm, fmt::format("the half-split offset of '{}' is an immediate", name), "operand-kind",
         "write the column offset of the second half as a constant");
  }
  vector(vec, ld ? "the destination" : "the source", static_cast<size_t>(per * n),
         fmt::format("{}{} ({} register{} per repetition x {})", shape, num, per, per == 1 ? "" : "s", n));
}

}  // namespace tcgen05_rules

void check_tcgen05(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  if (fam.substr(0, 8) != "tcgen05.") return;
  using tcgen05_rules::Checker;
  Checker c{ctx, ins, fam.substr(8), std::string(fam)};
  // tcgen05.ld.red (sm_103a/sm_110a) has its own grammar: left to ptxas.
  if (c.sub == "ld" && ins.has_mod(".red")) return;
  c.groups = tcgen05_rules::groups_of(c.sub);
  if (!c.groups) return;
  // The groups are PTX ISA 9.0's; a later version may add modifiers (see the file comment).
  // A version newer than the newest known is not recorded (bad-version says so), nor is one
  // missing or malformed: the modifiers are then not judged either.
  bool strict = ctx.facts.version && *ctx.facts.version <= PtxVersion{9, 0};
  if (c.sub == "mma" && ins.has_mod(".ws")) c.name = "tcgen05.mma.ws";
  if (!c.modifiers(r.consumed, strict) && strict) return;
  c.one_cta_group();
  if (c.sub == "alloc" || c.sub == "dealloc" || c.sub == "relinquish_alloc_permit") c.run_alloc();
  else if (c.sub == "ld" || c.sub == "st") c.run_ld_st();
  else if (!strict) return;
  else if (c.sub == "wait" || c.sub == "fence") c.count(0, 0, fmt::format("{};", ins.full_opcode()));
  else if (c.sub == "shift") {
    if (c.count(1, 1, "tcgen05.shift.cta_group::1.down [%taddr];")) c.address(ins.operands[0], "taddr", false);
  } else if (c.sub == "mma") c.run_mma();
  else if (c.sub == "commit") c.run_commit();
  else if (c.sub == "cp") c.run_cp();
}

}  // namespace ptxforge::ptx
