// prove_executed_on_engine: the CPU engine's per-instruction counts of the verify run, mapped to
// the candidate's instructions by their PTX line and column, tallied per case and family, and
// judged like the GPU's instrumented counts (eval/prove_detail.h).
#include "eval/prove_engine.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/prove_work.h"
#include "util/text.h"

namespace ptxforge::eval {

using prove_detail::CaseTally;
using prove_detail::ExecutedProblem;

namespace {

// An instruction of the candidate and the function it is in (work_class reads both).
struct Site {
  const ptx::Function* fn = nullptr;
  const ptx::Instruction* ins = nullptr;
};

std::map<std::pair<uint32_t, uint32_t>, Site> sites_of(const ptx::Module& m) {
  std::map<std::pair<uint32_t, uint32_t>, Site> out;
  for (auto& item : m.items) {
    auto* fn = std::get_if<ptx::Function>(&item.node);
    if (!fn || !fn->body) continue;
    ptx::for_each_statement(*fn->body, [&](const ptx::Statement& s) {
      if (auto* ins = s.get_if<ptx::Instruction>()) out[{ins->loc.line, ins->loc.col}] = Site{fn, ins};
    });
  }
  return out;
}

// "3 cases on size sets small, tail and 2 held-back cases": held-back sets are counted, never named
// (the note reaches the model).
std::string cases_text(const gpu::VerifyReport& v) {
  std::vector<std::string> shown;
  size_t held = 0;
  for (auto& c : v.cases) {
    if (!c.shown) ++held;
    else if (std::find(shown.begin(), shown.end(), c.size_set) == shown.end()) shown.push_back(c.size_set);
  }
  std::string out = fmt::format("{} case{}", v.cases.size(), v.cases.size() == 1 ? "" : "s");
  if (!shown.empty()) out += fmt::format(" on size set{} {}", shown.size() == 1 ? "" : "s", fmt::join(shown, ", "));
  if (held) out += fmt::format("{}{} of them on held-back sizes", shown.empty() ? " " : ", ", held);
  return out;
}

}  // namespace

std::optional<ExecutedProblem> prove_executed_on_engine(StageContext& ctx, const std::optional<toolchain::SassListing>& sass) {
  RunRecord& r = ctx.record;
  const auto& families = ctx.task.required_instructions;
  auto plain = [](std::string s) { return ExecutedProblem{s, s}; };
  if (!r.verify || r.verify->cases.empty()) return plain("the CPU engine returned no cases to count executions in");
  const gpu::VerifyReport& v = *r.verify;
  // Which families each counted instruction is of, and its work class. An instruction the
  // engine counts must be one of the candidate's, with the same opcode: counts that do not fit
  // it prove nothing (the engine read other PTX than the stages did).
  auto sites = sites_of(ctx.candidate.module);
  struct Counted {
    size_t index;                 // into VerifyReport::counts and each case's `executed`
    std::vector<size_t> families;
    std::string work;
  };
  std::vector<Counted> counted;
  for (size_t k = 0; k < v.counts.size(); ++k) {
    const gpu::InstructionCount& n = v.counts[k];
    auto at = sites.find({n.line, n.col});
    if (at == sites.end() || at->second.ins->full_opcode() != n.opcode)
      return plain(fmt::format("the CPU engine counted '{}' at line {}, column {}, where the candidate has {}", n.opcode,
                               n.line, n.col, at == sites.end() ? std::string("no instruction")
                                                                : "'" + at->second.ins->full_opcode() + "'"));
    Counted c{k, {}, ""};
    for (size_t i = 0; i < families.size(); ++i)
      if (starts_with_dotted(n.opcode, families[i])) c.families.push_back(i);
    if (c.families.empty()) continue;
    c.work = work_class(*at->second.fn, *at->second.ins);
    counted.push_back(std::move(c));
  }
  // As on a GPU: what ptxas deleted from the binary counts nothing (a family with none of its
  // opcodes in the reachable SASS, a wgmma shape it lacks).
  auto live = [&](size_t family, const std::string& work) {
    if (!sass) return true;
    if (r.proofs[family].in_sass == false) return false;
    return shape_in_sass(work, *sass);
  };
  std::vector<CaseTally> tallies;
  for (auto& c : v.cases) {
    if (c.executed.size() != v.counts.size())
      return plain(fmt::format("the CPU engine returned {} per-case counts for {} instructions (size set '{}')",
                               c.executed.size(), v.counts.size(), c.shown ? c.size_set : std::string("held back")));
    CaseTally t{&c, nullptr, std::vector<uint64_t>(families.size(), 0), std::vector<uint64_t>(families.size(), 0)};
    for (auto& s : ctx.task.sizes)
      if (s.name == c.size_set) t.set = &s;
    for (const Counted& ins : counted) {
      uint64_t n = c.executed[ins.index];
      if (n == 0) continue;
      for (size_t i : ins.families) {
        if (!live(i, ins.work)) continue;
        t.warps[i] += n;
        if (!t.set) continue;
        auto weight = work_weight(ins.work, unit_of_family(families[i]), ctx.task, ctx.candidate.launch, *t.set);
        if (!weight) return plain(weight.error().message);
        t.work[i] += n * *weight;
      }
    }
    tallies.push_back(std::move(t));
  }
  r.executed_by = VerifiedBy::cpu_engine;
  bool floors = std::any_of(families.begin(), families.end(), [&](auto& f) { return ctx.task.min_executed.count(f) > 0; });
  r.executed_note = fmt::format("counted by the CPU engine: its exact per-instruction counts of the verify run over {}{}",
                                cases_text(v),
                                floors ? "; the [min_work] floors were evaluated on these sizes (the engine's CPU size "
                                         "sets, not the GPU's)"
                                       : "");
  return prove_detail::judge_tallies(ctx, tallies);
}

}  // namespace ptxforge::eval
