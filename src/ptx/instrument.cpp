#include "ptx/instrument.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "util/text.h"

namespace ptxforge::ptx {

namespace {

struct Insertion {
  size_t offset;
  std::string text;
  size_t replaces = 0;  // source characters the text stands in for
};

// The counting code for one instruction: the warp's lanes whose guard holds vote, and the
// lowest of them adds 1 to each matching slot. Registers live in a block of their own, so
// they cannot clash with the candidate's (a block's declarations shadow outer ones).
std::string counter_block(const std::optional<Guard>& guard, const std::vector<size_t>& slots, uint64_t increment) {
  std::string out = "{ .reg .pred %__ptxforge_p; .reg .b32 %__ptxforge_m, %__ptxforge_b; activemask.b32 %__ptxforge_m; ";
  if (guard)
    out += fmt::format("vote.sync.ballot.b32 %__ptxforge_b, {}{}, %__ptxforge_m; ", guard->negated ? "!" : "", guard->reg);
  else
    out += "mov.b32 %__ptxforge_b, %__ptxforge_m; ";
  out += "neg.s32 %__ptxforge_m, %__ptxforge_b; and.b32 %__ptxforge_m, %__ptxforge_m, %__ptxforge_b; "
         "mov.u32 %__ptxforge_b, %lanemask_eq; setp.eq.b32 %__ptxforge_p, %__ptxforge_m, %__ptxforge_b; ";
  for (size_t slot : slots)
    out += fmt::format("@%__ptxforge_p red.global.add.u64 [{}+{}], {}; ", kExecutedSymbol, 8 * slot, increment);
  out += "} ";
  return out;
}

}  // namespace

Result<Instrumented> instrument_executed(std::string_view source, const Module& m, const std::vector<std::string>& families,
                                         uint64_t increment) {
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
  std::vector<Insertion> inserts;
  std::optional<SourceLoc> first_function;
  std::string problem;
  for (auto& item : m.items) {
    auto* fn = std::get_if<Function>(&item.node);
    if (!fn) continue;
    if (!first_function) first_function = fn->start.line ? fn->start : fn->loc;
    if (!fn->body) continue;
    for_each_statement(*fn->body, [&](const Statement& s) {
      auto* ins = s.get_if<Instruction>();
      if (!ins) return;
      std::string opcode = ins->full_opcode();
      std::vector<size_t> slots;
      for (size_t i = 0; i < families.size(); ++i)
        if (starts_with_dotted(opcode, families[i])) slots.push_back(i);
      if (slots.empty()) return;
      SourceLoc at = ins->guard ? ins->guard->loc : ins->loc;
      auto off = offset_of(at);
      char expect = ins->guard ? '@' : ins->opcode.empty() ? '\0' : ins->opcode[0];
      if (!off || *off >= source.size() || source[*off] != expect) {
        if (problem.empty()) problem = fmt::format("cannot place a counter before line {}, column {}", at.line, at.col);
        return;
      }
      for (size_t i : slots) ++out.sites[i];
      inserts.push_back({*off, counter_block(ins->guard, slots, increment)});
    });
  }
  if (!problem.empty()) return Error{problem};
  // activemask (PTX 6.2) in a module of an older version: the copy says 6.2.
  if (const Directive* v = m.version(); v && !v->args.empty()) {
    std::string_view number = v->args.front();
    auto at = offset_of(v->loc);
    size_t pos = at ? source.find(number, *at) : std::string_view::npos;
    int major = 0, minor = 0;
    if (pos != std::string_view::npos && std::sscanf(std::string(number).c_str(), "%d.%d", &major, &minor) == 2 &&
        (major < 6 || (major == 6 && minor < 2)))
      inserts.push_back({pos, "6.2", number.size()});
  }
  auto decl_at = first_function ? offset_of(*first_function) : std::nullopt;
  if (!decl_at) return Error{"the module has no function to instrument"};
  inserts.push_back({*decl_at, fmt::format(".global .align 8 .u64 {}[{}]; ", kExecutedSymbol, families.size())});
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
