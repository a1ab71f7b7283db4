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

#include "ptx/printer.h"
#include "util/text.h"

namespace ptxforge::ptx {

namespace {

struct Group {
  std::string_view what;    // "cta_group", "shape", ...
  std::string_view values;  // space separated
  bool required = false;
};

bool in_list(std::string_view list, std::string_view m) {
  for (auto v : split(list, ' '))
    if (!v.empty() && v == m) return true;
  return false;
}

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

struct Checker {
  CheckContext& ctx;
  const Instruction& ins;
  std::string_view sub;
  std::string name;  // "tcgen05.ld"
  std::vector<std::string_view> chosen;  // per group: the modifier written, "" if none
  const std::vector<Group>* groups = nullptr;

  Diagnostic& at_opcode(std::string msg, const char* id, std::string hint) {
    auto& d = ctx.diags.error(ins.loc, std::move(msg), id);
    d.length = static_cast<uint32_t>(ins.full_opcode().size());
    d.hint = std::move(hint);
    return d;
  }
  Diagnostic& at(const Operand& o, std::string msg, const char* id, std::string hint) {
    auto& d = ctx.diags.error(o.loc, std::move(msg), id);
    d.hint = std::move(hint);
    return d;
  }
  std::string_view get(std::string_view what) const {
    for (size_t i = 0; i < groups->size(); ++i)
      if ((*groups)[i].what == what) return chosen[i];
    return {};
  }
  bool has(std::string_view m) const { return ins.has_mod(m); }

  // A fix-it that appends `mod` to the opcode, when the opcode is written unbroken.
  void append_fixit(Diagnostic& d, std::string_view mod) {
    if (ins.spelling().empty()) return;
    SourceLoc end = ins.loc;
    end.col += static_cast<uint32_t>(ins.spelling().size());
    d.fixit = FixIt{end, 0, std::string(mod)};
  }

  // Classifies the modifiers into groups; false when one was unknown, duplicated or missing.
  bool modifiers(size_t first, bool strict) {
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
      // A repeated .sync or .aligned is accepted; a second value of any other group is not.
      bool repeatable = (*groups)[g].what == "sync" || (*groups)[g].what == "aligned";
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

  std::string_view find_anchor() const {
    for (auto& f : isa_families())
      if (f.name.substr(0, 8) == "tcgen05." && f.name.substr(8) == sub) return f.anchor;
    return {};
  }

  // ---- operands ----
  const SymbolInfo* reg(const Operand& o) const {
    if (o.kind != Operand::Kind::expr || o.expr.kind != Expr::Kind::name) return nullptr;
    const SymbolInfo* s = ctx.scopes.find(o.expr.text);
    return s && s->kind == SymbolInfo::Kind::reg ? s : nullptr;
  }
  static bool is_literal(const Operand& o) {
    const Expr* e = &o.expr;
    if (o.kind != Operand::Kind::expr) return false;
    if (e->kind == Expr::Kind::unary && e->text == "-" && e->args.size() == 1) e = &e->args[0];
    return e->kind == Expr::Kind::integer;
  }
  static std::optional<int64_t> literal(const Operand& o) {
    if (!is_literal(o)) return std::nullopt;
    bool neg = o.expr.kind == Expr::Kind::unary;
    auto v = integer_literal_value(neg ? o.expr.args[0].text : o.expr.text);
    if (!v) return std::nullopt;
    return neg ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
  }

  bool count(size_t lo, size_t hi, std::string_view form) {
    size_t n = ins.operands.size();
    if (n >= lo && n <= hi) return true;
    at_opcode(fmt::format("'{}' takes {} operand{}, not {}", name,
                          lo == hi ? std::to_string(lo) : fmt::format("{} to {}", lo, hi), hi == 1 ? "" : "s", n),
              "operand-count", fmt::format("write it as: {}", form));
    return false;
  }
  // An address operand [..]; a tensor-memory address holds a 32-bit register.
  void address(const Operand& o, std::string_view role, bool tmem32) {
    if (o.kind != Operand::Kind::address) {
      at(o, fmt::format("{} of '{}' is an address in brackets", role, name), "operand-kind",
         fmt::format("write [{}]", o.kind == Operand::Kind::expr ? o.expr.text : std::string_view("%r1")));
      return;
    }
    if (!tmem32 || o.elems.empty() || o.elems[0].kind != Operand::Kind::expr) return;
    const Expr* e = &o.elems[0].expr;
    if (e->kind == Expr::Kind::integer) {
      at(o, fmt::format("{} of '{}' is a tensor-memory address in a register, not a constant", role, name),
         "operand-kind", "pass the address tcgen05.alloc wrote, in a .b32 register: [%r1]");
      return;
    }
    if (e->kind == Expr::Kind::binary && !e->args.empty()) e = &e->args[0];
    if (e->kind != Expr::Kind::name) return;
    const SymbolInfo* s = ctx.scopes.find(e->text);
    if (s && s->kind == SymbolInfo::Kind::reg && type_bits(s->type) == 64)
      at(o, fmt::format("{} of '{}' is a tensor-memory address, which is 32 bits; '{}' is {}", role, name, e->text,
                        s->type),
         "operand-type", "tensor-memory addresses (from tcgen05.alloc) are .b32: use a 32-bit register");
  }
  void not_address(const Operand& o, std::string_view role) {
    if (o.kind == Operand::Kind::address || o.kind == Operand::Kind::vector)
      at(o, fmt::format("{} of '{}' is a register or immediate, not {}", role, name,
                        o.kind == Operand::Kind::address ? "an address" : "a vector"),
         "operand-kind", "drop the brackets");
  }
  // A register or immediate of `bits` (an integer register: ptxas refuses float ones here).
  void scalar(const Operand& o, std::string_view role, int bits, bool allow_float = false) {
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
  void predicate(const Operand& o, std::string_view role) {
    not_address(o, role);
    const SymbolInfo* s = reg(o);
    if (s && s->type != ".pred")
      at(o, fmt::format("{} of '{}' is a predicate; '{}' is {}", role, name, o.expr.text, s->type), "operand-type",
         "set a predicate first: setp.ne.b32 %p1, %r1, 0;");
  }
  // A {vector} of `want` 32-bit registers (immediates and _ also allowed where ptxas takes them).
  void vector(const Operand& o, std::string_view role, size_t want, std::string why) {
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

  void run_alloc() {
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

  void run_ld_st() {
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

  void run_mma() {
    bool ws = !get("ws").empty(), sp = !get("sp").empty(), bs = !get("block_scale").empty();
    std::string_view kind = get("kind"), cta = get("cta_group"), sv = get("scale vector size"),
                     coll = get("collector usage");
    bool mx = kind == ".kind::mxf8f6f4" || kind == ".kind::mxf4" || kind == ".kind::mxf4nvf4";
    bool bad = false;
    auto refuse = [&](std::string msg, std::string hint) {
      at_opcode(std::move(msg), "illegal-modifier", std::move(hint));
      bad = true;
    };
    if (ws && cta == ".cta_group::2")
      refuse("'tcgen05.mma.ws' runs on one CTA only: it does not take .cta_group::2", "use .cta_group::1");
    if (ws && bs)
      refuse("'tcgen05.mma.ws' has no block-scaled form: it does not take .block_scale",
             "use tcgen05.mma (without .ws) for .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4");
    if (has(".ashift") && (coll == ".collector::a::fill" || coll == ".collector::a::use"))
      refuse(fmt::format("'.ashift' cannot be combined with {}: A is shifted as it is read from tensor memory", coll),
             "use .collector::a::lastuse or ::discard, or drop the collector usage");
    if (!kind.empty() && mx && !bs) {
      auto& d = at_opcode(fmt::format("'tcgen05.mma{}' is block-scaled: it needs .block_scale", kind),
                          "missing-modifier",
                          fmt::format("write tcgen05.mma{}{}.block_scale ... [d], a, b, idesc, [scale_a], [scale_b], "
                                      "enable_d;", cta.empty() ? ".cta_group::1" : cta, kind));
      (void)d;
      bad = true;
    }
    if (!kind.empty() && !mx && bs)
      refuse(fmt::format("'{}' does not take .block_scale: only .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4 "
                         "are block-scaled", kind),
             "remove .block_scale, or use a block-scaled kind");
    if (!sv.empty() && !kind.empty() && !mx)
      refuse(fmt::format("'{}' does not take {}", kind, sv), fmt::format("remove {}", sv));
    if (mx && bs) {
      std::string_view ok = kind == ".kind::mxf8f6f4" ? ".scale_vec::1X .block32"
                            : kind == ".kind::mxf4"   ? ".scale_vec::2X .block32"
                                                      : ".scale_vec::2X .scale_vec::4X .block16 .block32";
      if (!sv.empty() && !in_list(ok, sv))
        refuse(fmt::format("'{}' does not take {}: its scale vector size is one of {}", kind, sv, ok),
               fmt::format("use {}", split(ok, ' ')[0]));
      if (sv.empty() && kind == ".kind::mxf4nvf4") {
        at_opcode("'.kind::mxf4nvf4' needs a scale vector size", "missing-modifier",
                  "add .scale_vec::4X (one ue4m3 scale per 16 elements) or .scale_vec::2X (ue8m0 per 32)");
        bad = true;
      }
      PtxVersion v88{8, 8};
      bool needs88 = sv == ".block16" || sv == ".block32" || (sv.empty() && kind != ".kind::mxf4nvf4");
      if (needs88 && ctx.facts.version && *ctx.facts.version < v88) {
        at_opcode(fmt::format("'{}' {} requires PTX ISA .version 8.8 or later (module has {})", kind,
                              sv.empty() ? "without a scale vector size" : fmt::format("with {}", sv),
                              ctx.facts.version->str()),
                  "needs-version",
                  fmt::format("write {} explicitly, or raise the header to '.version 8.8'",
                              kind == ".kind::mxf4" ? ".scale_vec::2X" : ".scale_vec::1X"));
        bad = true;
      }
    }
    if (!coll.empty()) {
      bool b = coll.substr(0, 13) == ".collector::b";
      if (ws && !b)
        refuse("'tcgen05.mma.ws' reuses B through the collector buffers b0..b3, not .collector::a",
               "use .collector::b0::fill (or ::use, ::lastuse, ::discard) with b0..b3");
      if (!ws && b)
        refuse(fmt::format("'{}' is a .ws collector: without .ws the collector is .collector::a", coll),
               "use .collector::a::fill (or ::use, ::lastuse, ::discard)");
    }
    if (bad) return;
    mma_targets(kind, sv, sp);
    // Operands: [d], a, b, ([sp-meta]), idesc, then per form.
    size_t head = sp ? 5 : 4;
    if (ins.operands.size() < head + 1) {
      count(head + 1, head + 3, "tcgen05.mma.cta_group::1.kind::f16 [%d], %adesc, %bdesc, %idesc, %p;");
      return;
    }
    const auto& ops = ins.operands;
    address(ops[0], "d (the accumulator in tensor memory)", true);
    if (ops[1].kind == Operand::Kind::address) address(ops[1], "a (in tensor memory)", true);
    else scalar(ops[1], "a-desc (the shared-memory matrix descriptor)", 64);
    scalar(ops[2], "b-desc (the shared-memory matrix descriptor)", 64);
    if (sp) address(ops[3], "sp-meta (the sparsity metadata in tensor memory)", true);
    scalar(ops[head - 1], "idesc (the instruction descriptor)", 32);
    if (has(".ashift") && ops[1].kind != Operand::Kind::address)
      at(ops[1], "'.ashift' shifts A in tensor memory: A must be [a-tmem], not a descriptor", "operand-kind",
         "load A into tensor memory and pass [%a_tmem], or drop .ashift");
    std::vector<const Operand*> rest;
    for (size_t i = head; i < ops.size(); ++i) rest.push_back(&ops[i]);
    if (bs) {
      if (!count(head + 3, head + 3, "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [d], a, b, idesc, "
                                     "[scale_a_tmem], [scale_b_tmem], enable_d;"))
        return;
      address(*rest[0], "scale-A (scale factors in tensor memory)", true);
      address(*rest[1], "scale-B (scale factors in tensor memory)", true);
      predicate(*rest[2], "enable-input-d");
      return;
    }
    if (ws) {
      if (!count(head + 1, head + 2, "tcgen05.mma.ws.cta_group::1.kind::f16 [d], a, b, idesc, enable_d{, "
                                     "zero_column_mask};"))
        return;
      predicate(*rest[0], "enable-input-d");
      if (rest.size() == 2) scalar(*rest[1], "zero-column-mask-desc", 64);
      return;
    }
    size_t i = 0;
    if (rest[0]->kind == Operand::Kind::vector) {
      size_t want = cta == ".cta_group::2" ? 8 : 4;
      vector(*rest[0], "disable-output-lane", want,
             fmt::format("{} (one bit per output lane of {} CTA{})", cta.empty() ? ".cta_group::1" : cta,
                         want == 8 ? "two" : "one", want == 8 ? "s" : ""));
      ++i;
    }
    // Without a vector ptxas also takes a seventh operand ([d], a, b, idesc, p, p, imm), a form
    // the manual does not describe: it is left alone.
    if (!count(head + i + 1, head + 3, "tcgen05.mma.cta_group::1.kind::f16 [d], a, b, idesc{, "
                                                 "{disable_output_lane}}, enable_d{, scale_input_d};"))
      return;
    if (rest.size() - i > 2) {
      if (kind == ".kind::f16" || kind == ".kind::tf32") scale_target();  // its last operand scales D
      return;
    }
    predicate(*rest[i], "enable-input-d");
    if (i + 1 >= rest.size()) return;
    const Operand& sc = *rest[i + 1];
    if (kind == ".kind::f8f6f4") {
      at(sc, "scale-input-d is for .kind::f16 and .kind::tf32; '.kind::f8f6f4' does not take it", "operand-count",
         "drop the last operand");
      return;
    }
    // ptxas 13.0 takes a last immediate on .kind::i8 (the manual has no scale-input-d there)
    // except after a disable-output-lane vector on .sp.
    if (kind == ".kind::i8" && sp && i == 1) {
      at(sc, "scale-input-d is for .kind::f16 and .kind::tf32; 'tcgen05.mma.sp.kind::i8' does not take it",
         "operand-count", "drop the last operand");
      return;
    }
    if (kind != ".kind::f16" && kind != ".kind::tf32" && kind != ".kind::i8") return;
    if (!is_literal(sc)) {
      at(sc, "scale-input-d of 'tcgen05.mma' is an immediate from 0 to 15 (D is scaled by 2^-n)", "operand-kind",
         "write the shift as a constant");
      return;
    }
    if (kind != ".kind::i8") scale_target();
    if (auto v = literal(sc); v && kind != ".kind::i8" && (*v < 0 || *v > 15))
      at(sc, fmt::format("scale-input-d of 'tcgen05.mma' is from 0 to 15, not {}", *v), "immediate-value",
         "D is scaled by 2^-n: use n from 0 to 15");
  }

  // Parts of tcgen05.mma that some tcgen05 targets lack. Each list names only the targets on
  // which ptxas 13.0 was seen to refuse the feature (a target not named is not judged).
  void lacks(std::string_view list, std::string what, std::string_view where) {
    for (auto& t : ctx.facts.targets) {
      if (!in_list(list, t.str())) continue;
      auto& d = at_opcode(fmt::format("{} is not supported on .target {}", what, t.str()), "needs-target",
                          fmt::format("it needs .target {}", where));
      d.notes.push_back({ctx.facts.target_loc, "target declared here"});
      return;
    }
  }
  void mma_targets(std::string_view kind, std::string_view sv, bool sp) {
    if (ctx.facts.targets.empty()) return;
    if (kind == ".kind::i8") lacks("sm_100f sm_103a sm_103f sm_110f", "'tcgen05.mma.kind::i8'", "sm_100a or sm_110a");
    if (sv.substr(0, 11) == ".scale_vec:")
      lacks("sm_100f sm_103f sm_110f", fmt::format("'{}'", sv),
            "sm_100a, sm_103a or sm_110a; family targets write the block size: .block32 (or .block16 for mxf4nvf4)");
    if (sp && (kind == ".kind::mxf4" || kind == ".kind::mxf4nvf4"))
      lacks("sm_100f sm_103f sm_110f", fmt::format("'tcgen05.mma.sp{}'", kind), "sm_100a, sm_103a or sm_110a");
  }
  // scale-input-d: not on sm_110a/sm_110f.
  void scale_target() { lacks("sm_110a sm_110f", "scale-input-d of 'tcgen05.mma'", "sm_100a/sm_100f or sm_103a/sm_103f"); }

  // A function's tcgen05 instructions all use .cta_group::1 or all .cta_group::2 (ptxas refuses
  // the mix for the whole function, without a line; the first that differs is the line here).
  void one_cta_group() {
    std::string_view cta = get("cta_group");
    if (cta.empty() || !ctx.fn) return;
    if (ctx.tcgen05_fn != ctx.fn) {
      ctx.tcgen05_fn = ctx.fn;
      ctx.tcgen05_cta_group = cta;
      ctx.tcgen05_cta_loc = ins.loc;
      return;
    }
    if (cta == ctx.tcgen05_cta_group) return;
    auto& d = at_opcode(fmt::format("'{}' uses {}, but this function's tcgen05 instructions use {}: a function "
                                    "works on one CTA or on a CTA pair, not both", name, cta, ctx.tcgen05_cta_group),
                        "illegal-modifier",
                        fmt::format("use {} here too (every tcgen05 instruction of a function, alloc to commit, "
                                    "takes the same .cta_group)", ctx.tcgen05_cta_group));
    d.notes.push_back({ctx.tcgen05_cta_loc, fmt::format("first {} here", ctx.tcgen05_cta_group)});
  }

  void run_commit() {
    bool mc = has(".multicast::cluster");
    if (!count(mc ? 2 : 1, mc ? 2 : 1,
               mc ? "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
                    "[mbar], %ctaMask;   (%ctaMask a .b16 register)"
                  : "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar];"))
      return;
    address(ins.operands[0], "the mbarrier", false);
    if (!mc) return;
    const Operand& mask = ins.operands[1];
    const SymbolInfo* s = reg(mask);
    if (!s || type_bits(s->type) != 16)
      at(mask, fmt::format("the ctaMask of '{}' is a 16-bit register{}", name,
                           s ? fmt::format("; '{}' is {}", mask.expr.text, s->type) : std::string()),
         "operand-type", "put the mask of destination CTAs in a .b16 register: mov.b16 %h1, 3;");
  }

  void run_cp() {
    std::string_view shape = get("shape"), warp = get("warp"), dst = get("destination format"),
                     src = get("source format");
    bool bad = false;
    if (!shape.empty()) {
      std::string_view need = shape == ".64x128b" ? ".warpx2::02_13 or .warpx2::01_23"
                              : shape == ".32x128b" ? ".warpx4"
                                                    : "";
      if (need.empty() && !warp.empty()) {
        at_opcode(fmt::format("'tcgen05.cp{}' takes no warp multicast modifier ('{}')", shape, warp),
                  "illegal-modifier", "warp multicast is for .64x128b (.warpx2::..) and .32x128b (.warpx4)");
        bad = true;
      } else if (!need.empty() && (warp.empty() || need.find(warp) == std::string_view::npos)) {
        at_opcode(warp.empty() ? fmt::format("'tcgen05.cp{}' needs {}", shape, need)
                               : fmt::format("'tcgen05.cp{}' takes {}, not {}", shape, need, warp),
                  warp.empty() ? "missing-modifier" : "illegal-modifier", fmt::format("use {}", need));
        bad = true;
      }
    }
    if (dst.empty() != src.empty()) {
      at_opcode("'tcgen05.cp' decompresses with a pair of formats: .b8x16 and a source format", "missing-modifier",
                "write both, destination first: .b8x16.b6x16_p32 or .b8x16.b4x16_p64");
      bad = true;
    } else if (!dst.empty()) {
      for (auto& m : ins.mods) {
        if (m == dst) break;
        if (m == src) {
          at_opcode("'tcgen05.cp' names the destination format first: .b8x16 before the source format",
                    "illegal-modifier", fmt::format("write .b8x16{}", src));
          bad = true;
          break;
        }
      }
    }
    if (bad) return;
    if (!count(2, 2, "tcgen05.cp.cta_group::1.128x256b [%taddr], %sdesc;")) return;
    address(ins.operands[0], "taddr", false);
    scalar(ins.operands[1], "s-desc (the shared-memory matrix descriptor)", 64);
  }
};

}  // namespace

void check_tcgen05(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  if (fam.substr(0, 8) != "tcgen05.") return;
  Checker c{ctx, ins, fam.substr(8), std::string(fam)};
  // tcgen05.ld.red (sm_103a/sm_110a) has its own grammar: left to ptxas.
  if (c.sub == "ld" && ins.has_mod(".red")) return;
  c.groups = groups_of(c.sub);
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
