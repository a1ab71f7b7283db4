// The prove stage: a task's required instruction families must be in the candidate's PTX, in
// the SASS ptxas made of it, and executed on the GPU. Text alone proves little: a `wgmma`
// behind a branch that can never be taken is in the PTX, but ptxas drops it, and the listing
// then lacks HGMMA; one behind a branch on a runtime value stays in the SASS, but no warp runs
// it, and the instrumented copy's counter for it stays at zero. Where no disassembler is
// installed the stage says "SASS proof unavailable". On the CPU engine the executed proof reads
// the engine's own counts of the run that verified the candidate (eval/prove_engine.h); where
// neither verified it, execution was not proven.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/prove_detail.h"
#include "eval/prove_engine.h"
#include "eval/prove_work.h"
#include "eval/sanitize.h"
#include "eval/stages.h"
#include "gpu/worker_client.h"
#include "ptx/instrument.h"
#include "ptx/parser.h"
#include "task/seeds.h"
#include "toolchain/ptxas.h"
#include "toolchain/ncu.h"
#include "toolchain/sass.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {

std::vector<InstructionProof> prove_in_ptx(const std::string& ptx, const std::vector<std::string>& families) {
  std::vector<InstructionProof> out;
  for (auto& f : families) {
    InstructionProof p;
    p.family = f;
    out.push_back(std::move(p));
  }
  if (families.empty()) return out;
  Diagnostics diags;
  ptx::Module m = ptx::parse(ptx, diags);
  for (auto& item : m.items) {
    auto* fn = std::get_if<ptx::Function>(&item.node);
    if (!fn || !fn->body) continue;
    ptx::for_each_statement(*fn->body, [&](const ptx::Statement& s) {
      auto* ins = s.get_if<ptx::Instruction>();
      if (!ins) return;
      std::string full = ins->full_opcode();
      for (auto& p : out) {
        if (starts_with_dotted(full, p.family)) {
          p.in_ptx = true;
          ++p.ptx_count;
        }
      }
    });
  }
  return out;
}

void prove_in_sass(const toolchain::SassListing& listing, std::vector<InstructionProof>& proofs) {
  for (auto& p : proofs) {
    auto opcodes = toolchain::sass_for_family(p.family);
    if (!opcodes) continue;  // no row: in_sass stays unset
    p.sass_opcodes.assign(opcodes->begin(), opcodes->end());
    p.sass_count = 0;
    for (auto op : *opcodes) p.sass_count += listing.count(op);
    p.in_sass = p.sass_count > 0;
  }
}

namespace {

StageResult verdict(StageStatus s, std::string summary) {
  StageResult r;
  r.id = StageId::prove;
  r.status = s;
  r.summary = std::move(summary);
  return r;
}

using prove_detail::CaseTally;
using prove_detail::ExecutedProblem;
using prove_detail::floor_for;
using prove_detail::group_indices;
using prove_detail::group_name;

// The executed proof: a copy of the candidate with a counter before every instruction of a
// required family (ptx/instrument.h), assembled like the candidate and run once over the
// verify cases (one seed). It must still verify, with the outputs of the timed binary; its
// counters, one per work class, fill p.executed and weigh each execution by its work
// (eval/prove_work.h). `sass` is the timed binary's reachable SASS where it was listed: a
// family with none of its opcodes there, or a wgmma shape absent from it, counts nothing,
// since ptxas deleted those instructions from the binary that was timed.
std::optional<ExecutedProblem> prove_executed(StageContext& ctx, const std::optional<toolchain::SassListing>& sass) {
  RunRecord& r = ctx.record;
  const auto& families = ctx.task.required_instructions;
  auto plain = [](std::string s) { return ExecutedProblem{s, s}; };
  // A secret odd increment: a slot the kernel wrote to by address no longer divides by it.
  const uint64_t increment = (task::fresh_seed() % (uint64_t{1} << 30)) * 2 + 1001;
  auto inst = ptx::instrument_executed(ctx.candidate.ptx, ctx.candidate.module, families, increment, work_class);
  if (!inst) return plain("cannot count executions: " + inst.error().message);
  std::string ptx_path = ctx.work_dir + "/instrumented.ptx", cubin_path = ctx.work_dir + "/instrumented.cubin";
  if (auto s = write_file(ptx_path, inst->ptx); !s) return plain(s.error().message);
  toolchain::AssembleOptions aopts;
  aopts.arch = r.arch;
  aopts.source_name = ptx_path;
  auto asmr = toolchain::assemble(inst->ptx, aopts);
  // The counters need a few registers; where that takes an entry past the candidate's own
  // count (which its launches were sized for), the copy is held to the candidate's count.
  int own = 0;
  bool grew = false;
  for (auto& f : ctx.candidate.resources) own = std::max(own, f.is_entry ? f.registers : 0);
  if (asmr && asmr->ok)
    for (auto& f : asmr->functions)
      for (auto& g : ctx.candidate.resources)
        grew = grew || (f.is_entry && g.is_entry && f.name == g.name && f.registers > g.registers);
  if (grew && own > 0) {
    aopts.extra_args.push_back(fmt::format("-maxrregcount={}", std::max(own, 24)));
    asmr = toolchain::assemble(inst->ptx, aopts);
  }
  if (!asmr) return plain("the copy with execution counters does not assemble: " + asmr.error().message);
  if (!asmr->ok) {
    std::string first = asmr->diags.list().empty() ? "ptxas failed" : asmr->diags.list().front().message;
    return plain("the copy with execution counters does not assemble: " + first);
  }
  if (auto s = write_file(cubin_path, asmr->cubin); !s) return plain(s.error().message);

  gpu::Job job = *ctx.job;
  job.kind = gpu::JobKind::verify;
  job.candidate_cubin = cubin_path;
  job.seeds = 1;
  job.executed_slots = static_cast<int>(inst->slots.size());
  gpu::Outcome out = ctx.worker.run(job, ctx.opts.verify_timeout);
  if (out.failure) {
    ExecutedProblem p;
    p.person = fmt::format("the copy with execution counters failed on the GPU: {}: {}{}", to_string(out.failure->kind),
                           out.failure->message, out.failure->where.empty() ? "" : " (" + out.failure->where + ")");
    p.model = out.failure->held_back ? fmt::format("the copy with execution counters failed on the GPU: {} (on a held-back size)",
                                                   to_string(out.failure->kind))
                                     : p.person;
    return p;
  }
  if (!out.verify || out.verify->cases.empty()) return plain("the copy with execution counters returned no cases");
  for (auto& c : out.verify->cases)
    if (!c.pass) {
      std::string why = c.problems.empty() ? "wrong results" : c.problems.front();
      for (auto& o : c.outputs)
        if (!o.pass && c.problems.empty()) why = fmt::format("'{}' has {} of {} elements wrong", o.output, o.mismatches, o.count);
      ExecutedProblem p;
      p.person = fmt::format("the copy with execution counters does not verify (size set '{}'{}): {}; the counters change "
                             "no thread's path, so the kernel depends on something they disturb (timing, a race)",
                             c.size_set, c.shown ? "" : ", held back", why);
      p.model = c.shown ? p.person
                        : "the copy with execution counters does not verify on a held-back size; the counters change no "
                          "thread's path, so the kernel depends on something they disturb (timing, a race)";
      return p;
    }
  // The copy's outputs must be the timed binary's on the same inputs (seed 1 of each case): a
  // kernel that tells the copy apart and takes another path there proves nothing.
  if (r.verify)
    for (auto& c : out.verify->cases)
      for (auto& v : r.verify->cases)
        if (v.size_set == c.size_set && v.seed == c.seed && v.trivial.empty() && v.output_digest && c.output_digest &&
            v.output_digest != c.output_digest) {
          std::string person = fmt::format(
              "the copy with execution counters gave other outputs than the candidate on the same inputs (size set "
              "'{}'{}): the kernel takes another path when it is counted, or its results depend on timing",
              c.size_set, c.shown ? "" : ", held back");
          return ExecutedProblem{person, c.shown ? person
                                                 : "the copy with execution counters gave other outputs than the "
                                                   "candidate on the same inputs (a held-back size): the kernel takes "
                                                   "another path when it is counted, or its results depend on timing"};
        }
  // Per case: the counts per slot (each a multiple of the increment, or the kernel wrote to
  // them), weighed by each slot's work on the case's sizes; prove_detail judges the floors.
  // What the timed binary lacks counts nothing: a family none of whose opcodes is in its
  // reachable SASS (an alternative ptxas deleted), a wgmma shape it does not hold.
  auto live = [&](size_t family, const ptx::CounterSlot& slot) {
    if (!sass) return true;
    if (r.proofs[family].in_sass == false) return false;
    return shape_in_sass(slot.work, *sass);
  };
  std::vector<CaseTally> tallies;
  for (auto& c : out.verify->cases) {
    if (c.executed.size() != inst->slots.size())
      return plain(fmt::format("the worker returned {} execution counters for {} counter slots", c.executed.size(),
                               inst->slots.size()));
    CaseTally t{&c, nullptr, std::vector<uint64_t>(families.size(), 0), std::vector<uint64_t>(families.size(), 0)};
    for (auto& s : ctx.task.sizes)
      if (s.name == c.size_set) t.set = &s;
    for (size_t k = 0; k < inst->slots.size(); ++k) {
      const ptx::CounterSlot& slot = inst->slots[k];
      if (c.executed[k] % increment != 0)
        return plain(fmt::format("the execution counter of {} was changed by something other than the inserted code: the "
                                 "kernel writes to memory it was not given",
                                 families[slot.families.front()]));
      uint64_t n = c.executed[k] / increment;
      for (size_t i : slot.families) {
        if (!live(i, slot)) continue;
        t.warps[i] += n;
        if (!t.set) continue;
        auto weight = work_weight(slot.work, unit_of_family(families[i]), ctx.task, ctx.candidate.launch, *t.set);
        if (!weight) return plain(weight.error().message);
        t.work[i] += n * *weight;
      }
    }
    tallies.push_back(std::move(t));
  }
  if (auto problem = prove_detail::judge_tallies(ctx, tallies)) return problem;
  r.executed_by = VerifiedBy::gpu;
  r.executed_note = fmt::format("counted in an instrumented copy over {}", out.verify->cases.size() == 1 ? std::string("1 case")
                                                                                    : fmt::format("{} cases", out.verify->cases.size()));
  return std::nullopt;
}

// `--prove ncu`: the candidate (not the copy) runs the verify job's smallest shown case in a
// worker started under ncu; every required family with SASS opcodes must have some thread
// executing one with its predicate on. Returns a problem that fails the stage; where ncu
// cannot run, r.ncu_note says why and nothing fails.
std::optional<ExecutedProblem> prove_with_ncu(StageContext& ctx) {
  RunRecord& r = ctx.record;
  auto not_run = [&](std::string why) -> std::optional<ExecutedProblem> {
    r.ncu_note = "ncu cross-check not run: " + why;
    return std::nullopt;
  };
  std::optional<std::string> ncu = ctx.opts.ncu.empty() ? find_cuda_tool("ncu") : ctx.opts.ncu;
  if (!ncu) return not_run("ncu is not installed");
  if (ctx.worker_argv.empty()) return not_run("no worker process to profile");
  const task::SizeSet* smallest = shown_size_set_by_bytes(ctx.task, /*largest=*/false);
  if (!smallest) return not_run("the task shows no size set");
  gpu::Job job = *ctx.job;
  job.kind = gpu::JobKind::verify;
  job.seeds = 1;
  job.size_sets = {smallest->name};
  job.executed_slots = 0;
  std::vector<std::string> entries;
  for (auto& l : ctx.candidate.launch.launches)
    if (std::find(entries.begin(), entries.end(), l.entry) == entries.end()) entries.push_back(l.entry);
  std::string report = ctx.work_dir + "/ncu";
  gpu::WorkerClient profiled(toolchain::ncu_profile_argv(*ncu, report, entries,
                                                         static_cast<int>(ctx.candidate.launch.launches.size()), ctx.worker_argv));
  gpu::Outcome out = profiled.run(job, ctx.opts.verify_timeout * 20);  // replaying each kernel for every counter pass
  profiled.finish(std::chrono::seconds(120));
  if (out.failure)
    return not_run(fmt::format("the profiled run failed: {}: {}", to_string(out.failure->kind), out.failure->message));
  auto counters = toolchain::read_source_counters(*ncu, report + ".ncu-rep");
  if (!counters) return not_run(counters.error().message);
  std::vector<std::string> unseen;
  const auto& families = ctx.task.required_instructions;
  std::vector<uint64_t> warps(r.proofs.size(), 0);
  std::vector<std::optional<uint64_t>> floors(r.proofs.size());
  for (size_t i = 0; i < r.proofs.size(); ++i) {
    InstructionProof& p = r.proofs[i];
    if (p.sass_opcodes.empty()) continue;  // no opcode to count: no floor to hold it to here
    uint64_t threads = 0;
    for (auto& op : p.sass_opcodes) {
      toolchain::OpcodeCounts c = toolchain::counts_for(*counters, op);
      threads += c.predicated_on;
      warps[i] += c.warp_executions;
    }
    p.ncu_threads = threads;
    // ncu counts SASS warp executions: only a floor in that unit compares with them (the
    // instrumented copy has held work floors to each instruction's work already).
    if (unit_of_family(p.family) != WorkUnit::executions) continue;
    if (auto floor = floor_for(ctx.task, p.family, *smallest); floor && *floor) floors[i] = *floor;
    if (threads == 0 && p.executed == true)
      unseen.push_back(fmt::format("{} (the instrumented copy counted {} warp executions over every case, ncu no thread "
                                   "executing {} with its predicate on)",
                                   p.family, p.executed_warps, fmt::join(p.sass_opcodes, "/")));
  }
  // The floors again, on the machine code that really ran: instructions ptxas deleted (an mma
  // whose result is unused) count in the instrumented copy's PTX-level tally, not here.
  for (auto& g : group_indices(ctx.task)) {
    auto share = floor_share(g, warps, floors);
    if (!share || *share >= 1.0) continue;
    std::vector<std::string> ran;
    for (size_t i : g)
      ran.push_back(fmt::format("{} warp executions of {} where the task's work needs at least {}", warps[i],
                                fmt::join(r.proofs[i].sass_opcodes, "/"), *floors[i]));
    unseen.push_back(fmt::format("{} (ncu counted {})", group_name(families, g), fmt::join(ran, "; or ")));
  }
  r.ncu_note = fmt::format("ncu SourceCounters over the candidate's launches of size set '{}', 1 seed", smallest->name);
  if (!unseen.empty())
    return ExecutedProblem{fmt::format("ncu disagrees on size set '{}': {}", smallest->name, fmt::join(unseen, "; ")),
                           fmt::format("ncu disagrees on size set '{}': {}", smallest->name, fmt::join(unseen, "; "))};
  return std::nullopt;
}

// A family that only does anything between the CTAs of a cluster (barrier.cluster, mapa,
// getctarank, an access to .shared::cluster).
bool is_cluster_family(std::string_view f) {
  return starts_with_dotted(f, "barrier.cluster") || starts_with_dotted(f, "mapa") || starts_with_dotted(f, "getctarank") ||
         f.find(".shared::cluster") != std::string_view::npos;
}

// A task that requires a cluster family needs clusters of more than one CTA on every size set:
// a "cluster" of one block satisfies barrier.cluster and mapa without any cluster work. The
// problem names the first size set where no launch of the candidate has one.
std::optional<ExecutedProblem> one_block_clusters(const StageContext& ctx) {
  std::vector<std::string> needs;
  for (auto& f : ctx.task.required_instructions)
    if (is_cluster_family(f)) needs.push_back(f);
  if (needs.empty()) return std::nullopt;
  for (auto& set : ctx.task.sizes) {
    bool many = false;
    for (auto& l : ctx.candidate.launch.launches) {
      if (!l.has_cluster) continue;
      auto dims = l.cluster.evaluate(set.values);
      many = many || (dims && (*dims)[0] * (*dims)[1] * (*dims)[2] > 1);
    }
    if (many) continue;
    std::string person = fmt::format("{} need clusters of more than one CTA, and no launch on size set '{}'{} has one: "
                                     "a one-block cluster does no work between CTAs",
                                     fmt::join(needs, ", "), set.name, set.shown ? "" : " (held back)");
    return ExecutedProblem{person, set.shown ? person
                                             : fmt::format("{} need clusters of more than one CTA, and no launch on a "
                                                           "held-back size has one",
                                                           fmt::join(needs, ", "))};
  }
  return std::nullopt;
}

StageResult failed(ExecutedProblem p) {
  StageResult s = verdict(StageStatus::failed, std::move(p.person));
  if (p.model != s.summary) {
    s.held_back = true;
    s.model_summary = std::move(p.model);
  }
  return s;
}

}  // namespace

std::optional<double> floor_share(const std::vector<size_t>& members, const std::vector<uint64_t>& warps,
                                  const std::vector<std::optional<uint64_t>>& floors) {
  double share = 0;
  for (size_t i : members) {
    if (!floors[i]) return std::nullopt;
    share += *floors[i] == 0 ? 1.0 : static_cast<double>(warps[i]) / static_cast<double>(*floors[i]);
  }
  return share;
}

StageResult prove(StageContext& ctx) {
  RunRecord& r = ctx.record;
  const auto& families = ctx.task.required_instructions;
  const auto groups = group_indices(ctx.task);
  r.proofs = prove_in_ptx(ctx.candidate.ptx, families);
  for (auto& g : groups)
    for (size_t i : g)
      for (size_t j : g)
        if (j != i) r.proofs[i].alternatives.push_back(families[j]);
  if (families.empty()) return verdict(StageStatus::passed, "no required instructions");
  // A group stands while one of its families passes every check so far.
  auto standing = [&](const std::vector<size_t>& g, auto&& passes) {
    return std::any_of(g.begin(), g.end(), [&](size_t i) { return passes(r.proofs[i]); });
  };
  std::vector<std::string> missing;
  for (auto& g : groups)
    if (!standing(g, [](const InstructionProof& p) { return p.in_ptx; })) missing.push_back(group_name(families, g));
  if (!missing.empty())
    return verdict(StageStatus::failed, fmt::format("missing from the PTX: {}", fmt::join(missing, "; ")));

  // In the SASS.
  std::string where;
  std::optional<toolchain::SassListing> reachable_sass;
  auto cubin = read_file(ctx.candidate.cubin_path);
  Result<toolchain::SassListing> listing = cubin ? toolchain::disassemble(*cubin) : Result<toolchain::SassListing>(cubin.error());
  // Only the launched entries and what they call count: a required opcode in a second entry
  // that is never launched, or in a device function nothing calls, proves nothing.
  if (listing) {
    std::vector<std::string> launched, entries;
    for (auto& l : ctx.candidate.launch.launches)
      if (std::find(launched.begin(), launched.end(), l.entry) == launched.end()) launched.push_back(l.entry);
    for (auto& item : ctx.candidate.module.items)
      if (auto* fn = std::get_if<ptx::Function>(&item.node); fn && fn->is_entry) entries.emplace_back(fn->name);
    std::string tool = listing->tool;
    listing = listing->reachable_from(launched, entries);
    if (listing) listing->tool = tool + ", functions reachable from the launched entries";
  }
  if (!listing) {
    r.sass_note = "SASS proof unavailable: " + listing.error().message;
    where = fmt::format("occur in the PTX ({})", r.sass_note);
  } else {
    r.sass_note = listing->tool;
    reachable_sass = *listing;
    prove_in_sass(*listing, r.proofs);
    std::vector<std::string> dropped, unmapped;
    for (auto& g : groups) {
      if (standing(g, [](const InstructionProof& p) { return p.in_ptx && p.in_sass != false; })) continue;
      for (size_t i : g)
        if (r.proofs[i].in_ptx)
          dropped.push_back(fmt::format("{} (none of {})", families[i], fmt::join(r.proofs[i].sass_opcodes, ", ")));
    }
    for (auto& p : r.proofs)
      if (p.in_ptx && !p.in_sass) unmapped.push_back(p.family);
    if (!dropped.empty())
      return verdict(StageStatus::failed,
                     fmt::format("in the PTX but not in the SASS ptxas emitted: {}; ptxas removes code that can never run "
                                 "or whose results are never used",
                                 fmt::join(dropped, "; ")));
    where = unmapped.empty() ? fmt::format("occur in the PTX and the SASS ({})", listing->tool)
                             : fmt::format("occur in the PTX and the SASS ({}; {} by no SASS opcode)", listing->tool,
                                           fmt::join(unmapped, ", "));
  }

  if (auto problem = one_block_clusters(ctx)) return failed(std::move(*problem));

  // Executed: on a GPU from an instrumented copy, on the CPU engine from the counts of the
  // run that verified it (eval/prove_engine.h).
  const bool engine = r.verified_by == VerifiedBy::cpu_engine;
  auto not_proven = [&](std::string why) {
    r.executed_note = "execution not proven: " + std::move(why);
    return verdict(StageStatus::passed,
                   fmt::format("all {} required instruction families {}; {}", groups.size(), where, r.executed_note));
  };
  if (!engine && ctx.on_engine) {
    if (r.failure && r.failure->kind == gpu::FailureKind::unsupported)
      return not_proven("not executed on the CPU engine: unsupported (" + r.failure->message + ")");
    return not_proven("the candidate did not pass verify on the CPU engine");
  }
  if (!engine && (!r.gpu_verified || !ctx.job)) return not_proven("the candidate was not verified on a GPU");
  if (auto problem = engine ? prove_executed_on_engine(ctx, reachable_sass) : prove_executed(ctx, reachable_sass)) {
    r.executed_note = problem->person;
    return failed(std::move(*problem));
  }
  std::vector<std::string> idle;
  for (auto& g : groups) {
    if (standing(g, [](const InstructionProof& p) { return p.executed.value_or(false); })) continue;
    for (size_t i : g)
      if (r.proofs[i].in_ptx)
        idle.push_back(fmt::format(
            "{} {}", families[i],
            r.proofs[i].in_sass == true ? "is in the SASS but never executed" : "is in the PTX but never executed"));
  }
  if (!idle.empty())
    return verdict(StageStatus::failed,
                   fmt::format("{}: {} counted no warp running it on any verify case", fmt::join(idle, "; "),
                               engine ? "the CPU engine" : "the instrumented copy"));
  std::vector<std::string> counts;
  for (auto& p : r.proofs)
    if (p.in_ptx) counts.push_back(fmt::format("{} {}", p.family, p.executed_warps));
  std::string plain = fmt::format("all {} required instruction families {} and executed{}", groups.size(), where,
                                  engine ? " on the CPU engine" : "");
  std::string summary = fmt::format("{} (warp executions: {})", plain, fmt::join(counts, ", "));
  if (ctx.opts.prove_ncu && !engine) {
    if (auto problem = prove_with_ncu(ctx)) return failed(std::move(*problem));
    bool not_run = starts_with(r.ncu_note, "ncu cross-check not run");
    summary += "; " + (not_run ? r.ncu_note : "ncu agrees");
    plain += not_run ? "; ncu cross-check not run" : "; ncu agrees";
  }
  StageResult s = verdict(StageStatus::passed, summary);
  // The counts add up every verify case, held-back ones included: a model that knows how a
  // count scales with the sizes would read the held-back sizes back from them.
  bool held_back_counted =
      engine ? std::any_of(r.verify->cases.begin(), r.verify->cases.end(), [](auto& c) { return !c.shown; })
             : ctx.opts.held_back && ctx.task.size_sets(true).size() > ctx.task.size_sets(false).size();
  if (held_back_counted) {
    s.held_back = true;
    s.model_summary = plain;
  }
  return s;
}

}  // namespace ptxforge::eval
