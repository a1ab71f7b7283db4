#include "ptx/instrument.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "util/text.h"

namespace ptxforge::ptx {

namespace {

struct Insertion {
  size_t offset;
  std::string text;
  size_t replaces = 0;  // source characters the text stands in for
};

// A register's width in bits from the function's .reg declarations (`%rd<8>` covers %rd0..7),
// 0 when it is not declared there.
int register_bits(const Function& fn, std::string_view reg) {
  int bits = 0;
  for_each_statement(*fn.body, [&](const Statement& s) {
    auto* v = s.get_if<VarDecl>();
    if (!v || v->space != ".reg") return;
    for (auto& d : v->names) {
      std::string_view name = d.name;
      bool match = d.range ? starts_with(reg, name) && reg.size() > name.size() &&
                                 reg.find_first_not_of("0123456789", name.size()) == std::string_view::npos
                           : reg == name;
      if (match) bits = ends_with(v->type, "64") ? 64 : 32;
    }
  });
  return bits;
}

// For a DSMEM access, the instruction that puts the target CTA's rank into %__ptxforge_c:
// mapa names it (its last operand); a .shared::cluster load or store names an address, whose
// owner getctarank gives. Empty where the instruction is not a DSMEM access. An address this
// cannot read (a variable: the CTA's own) gives "own", which never counts.
std::string target_rank(const Function& fn, const Instruction& ins) {
  std::string_view op = ins.opcode;
  if (op == "mapa" && ins.operands.size() == 3 && ins.operands[2].kind == Operand::Kind::expr)
    return fmt::format("mov.u32 %__ptxforge_c, {}; ", ins.operands[2].expr.text);
  bool access = (op == "ld" || op == "st" || op == "atom" || op == "red") && ins.has_mod(".shared::cluster");
  if (!access) return {};
  for (auto& o : ins.operands) {
    if (o.kind != Operand::Kind::address) continue;
    const Expr* base = o.elems.empty() || o.elems[0].kind != Operand::Kind::expr ? nullptr : &o.elems[0].expr;
    while (base && base->kind == Expr::Kind::binary && !base->args.empty()) base = &base->args[0];
    if (!base || base->kind != Expr::Kind::name || !starts_with(base->text, "%")) return "own";
    int bits = register_bits(fn, base->text);
    if (bits == 64)
      return fmt::format("{{ .reg .b64 %__ptxforge_w; getctarank.shared::cluster.u64 %__ptxforge_w, {}; "
                         "cvt.u32.u64 %__ptxforge_c, %__ptxforge_w; }} ",
                         base->text);
    if (bits == 32) return fmt::format("getctarank.shared::cluster.u32 %__ptxforge_c, {}; ", base->text);
    return "own";
  }
  return "own";
}

// The counting code for one instruction: the warp's lanes whose guard holds vote (and, for a
// DSMEM access, whose target is another CTA), and the lowest of them adds the increment to
// the slot. Registers live in a block of their own, so they cannot clash with the
// candidate's (a block's declarations shadow outer ones).
std::string counter_block(const std::optional<Guard>& guard, const std::string& rank, size_t slot, uint64_t increment) {
  std::string out = "{ .reg .pred %__ptxforge_p; .reg .b32 %__ptxforge_m, %__ptxforge_b, %__ptxforge_c; "
                    "activemask.b32 %__ptxforge_m; ";
  if (guard)
    out += fmt::format("vote.sync.ballot.b32 %__ptxforge_b, {}{}, %__ptxforge_m; ", guard->negated ? "!" : "", guard->reg);
  else
    out += "mov.b32 %__ptxforge_b, %__ptxforge_m; ";
  if (!rank.empty()) {
    if (rank == "own")
      out += "mov.b32 %__ptxforge_b, 0; ";
    else
      out += rank + "mov.u32 %__ptxforge_m, %cluster_ctarank; setp.ne.u32 %__ptxforge_p, %__ptxforge_c, %__ptxforge_m; "
                    "activemask.b32 %__ptxforge_m; vote.sync.ballot.b32 %__ptxforge_c, %__ptxforge_p, %__ptxforge_m; "
                    "and.b32 %__ptxforge_b, %__ptxforge_b, %__ptxforge_c; ";
  }
  out += "neg.s32 %__ptxforge_m, %__ptxforge_b; and.b32 %__ptxforge_m, %__ptxforge_m, %__ptxforge_b; "
         "mov.u32 %__ptxforge_b, %lanemask_eq; setp.eq.b32 %__ptxforge_p, %__ptxforge_m, %__ptxforge_b; ";
  out += fmt::format("@%__ptxforge_p red.global.add.u64 [%__ptxforge_base+{}], {}; ", 8 * slot, increment);
  out += "} ";
  return out;
}

}  // namespace

Result<Instrumented> instrument_executed(std::string_view source, const Module& m, const std::vector<std::string>& families,
                                         uint64_t increment, const WorkClassifier& classify) {
  if (source.find("__ptxforge_") != std::string_view::npos)
    return Error{"the candidate uses a name that begins with __ptxforge_, which the harness reserves for its counters"};
  if (families.empty()) return Error{"no instruction families to count"};
  std::vector<size_t> line_start{0};
  for (size_t i = 0; i < source.size(); ++i)
    if (source[i] == '\n') line_start.push_back(i + 1);
  auto offset_of = [&](SourceLoc loc) -> std::optional<size_t> {
    if (loc.line == 0 || loc.line > line_start.size() || loc.col == 0) return std::nullopt;
    size_t off = line_start[loc.line - 1] + loc.col - 1;
    return off <= source.size() ? std::optional<size_t>(off) : std::nullopt;
  };

  Instrumented out;
  out.sites.assign(families.size(), 0);
  std::map<std::pair<std::vector<size_t>, std::string>, size_t> slot_of;
  std::vector<Insertion> inserts;
  std::string problem;
  int entries = 0;
  bool dsmem = false;
  for (auto& item : m.items) {
    auto* fn = std::get_if<Function>(&item.node);
    if (!fn || !fn->body) continue;
    for_each_statement(*fn->body, [&](const Statement& s) {
      auto* ins = s.get_if<Instruction>();
      if (!ins) return;
      std::string opcode = ins->full_opcode();
      std::vector<size_t> matched;
      for (size_t i = 0; i < families.size(); ++i)
        if (starts_with_dotted(opcode, families[i])) matched.push_back(i);
      if (matched.empty()) return;
      SourceLoc at = ins->guard ? ins->guard->loc : ins->loc;
      if (!fn->is_entry) {
        if (problem.empty())
          problem = fmt::format("{} on line {} is inside the device function '{}': executions are counted in entries only",
                                opcode, at.line, std::string_view(fn->name));
        return;
      }
      auto off = offset_of(at);
      char expect = ins->guard ? '@' : ins->opcode.empty() ? '\0' : ins->opcode[0];
      if (!off || *off >= source.size() || source[*off] != expect) {
        if (problem.empty()) problem = fmt::format("cannot place a counter before line {}, column {}", at.line, at.col);
        return;
      }
      for (size_t i : matched) ++out.sites[i];
      auto key = std::make_pair(matched, classify ? classify(*fn, *ins) : std::string());
      auto [it, fresh] = slot_of.emplace(key, out.slots.size());
      if (fresh) out.slots.push_back({matched, key.second, 0});
      ++out.slots[it->second].sites;
      std::string rank = target_rank(*fn, *ins);
      dsmem = dsmem || (!rank.empty() && rank != "own");
      inserts.push_back({*off, counter_block(ins->guard, rank, it->second, increment)});
    });
    if (!fn->is_entry) continue;
    // The hidden parameter goes last in the parameter list (the candidate's own keep their
    // offsets), and its value into a register at the top of the body.
    ++entries;
    auto name_at = offset_of(fn->loc), body_at = offset_of(fn->body->loc);
    if (!name_at || !body_at || *body_at <= *name_at || source[*body_at] != '{') {
      if (problem.empty()) problem = fmt::format("cannot find the parameter list of entry '{}'", std::string_view(fn->name));
      continue;
    }
    std::string_view head = source.substr(*name_at, *body_at - *name_at);
    size_t close = head.rfind(')');
    std::string param = fmt::format(".param .u64 {}", kCountersParam);
    if (!fn->has_param_list || close == std::string_view::npos)
      inserts.push_back({*name_at + fn->name.size(), "(" + param + ")"});
    else
      inserts.push_back({*name_at + close, (fn->params.empty() ? " " : ", ") + param});
    inserts.push_back({*body_at + 1, fmt::format(" .reg .b64 %__ptxforge_base; ld.param.u64 %__ptxforge_base, [{}]; ",
                                                 kCountersParam)});
  }
  if (!problem.empty()) return Error{problem};
  if (entries == 0) return Error{"the module has no entry to instrument"};
  // activemask (PTX 6.2), getctarank and %cluster_ctarank (7.8) in a module of an older
  // version: the copy says the version it needs.
  const int need_major = dsmem ? 7 : 6, need_minor = dsmem ? 8 : 2;
  if (const Directive* v = m.version(); v && !v->args.empty()) {
    std::string_view number = v->args.front();
    auto at = offset_of(v->loc);
    size_t pos = at ? source.find(number, *at) : std::string_view::npos;
    int major = 0, minor = 0;
    if (pos != std::string_view::npos && std::sscanf(std::string(number).c_str(), "%d.%d", &major, &minor) == 2 &&
        (major < need_major || (major == need_major && minor < need_minor)))
      inserts.push_back({pos, fmt::format("{}.{}", need_major, need_minor), number.size()});
  }
  std::stable_sort(inserts.begin(), inserts.end(), [](const Insertion& a, const Insertion& b) { return a.offset < b.offset; });
  size_t done = 0;
  for (auto& ins : inserts) {
    out.ptx.append(source.substr(done, ins.offset - done));
    out.ptx += ins.text;
    done = ins.offset + ins.replaces;
  }
  out.ptx.append(source.substr(done));
  return out;
}

}  // namespace ptxforge::ptx
