// The time job (docs/design.md, "Timing"). Every trial starts from fresh state, written on the
// stream before the L2 flush and the start event; the events bracket the kernel launches
// alone. Some trials' outputs are saved right after their stop event and checked afterwards.
#include "gpu/executor_detail.h"

#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpu/cubin_globals.h"
#include "gpu/timing_plan.h"
#include "task/seeds.h"
#include "util/text.h"

namespace ptxforge::gpu::detail {

using task::Param;

namespace {

// The input sets one size set is timed on: drawn on the host from seeds derived from the
// run's seed, uploaded once to staging buffers, copied into the kernel's buffers before each
// trial. A kernel that remembers the inputs it saw, or computes only on some, meets another set.
struct InputSets {
  std::vector<uint64_t> seeds;
  std::vector<std::shared_ptr<CachedCase>> cases;          // host inputs (expected outputs once checked)
  std::vector<std::map<std::string, CUdeviceptr>> staged;  // per set: in/inout buffer -> its device copy
  int count() const { return static_cast<int>(seeds.size()); }
};

InputSets stage_input_sets(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set,
                           Allocations& mem, const std::string& where) {
  const Driver& d = *s.d;
  uint64_t key = task::size_set_key(set.name);
  auto seed_of = [&](int j) {
    return task::derive_seed(job.seed, task::SeedUse::timing, key, static_cast<uint64_t>(j));
  };
  InputSets in;
  auto first = cached_case(s, L, job, set, seed_of(0), false, where);
  size_t per_set = 0;
  for (auto& [name, bytes] : first->h.in) per_set += bytes.size();
  size_t free_bytes = 0, total_bytes = 0;
  int sets = d.cuMemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS ? timing_input_sets(per_set, free_bytes)
                                                                       : kTimingInputSets;
  for (int j = 0; j < sets; ++j) {
    in.seeds.push_back(seed_of(j));
    in.cases.push_back(j == 0 ? first : cached_case(s, L, job, set, in.seeds.back(), false, where));
    auto& staged = in.staged.emplace_back();
    for (auto& [name, bytes] : in.cases.back()->h.in) {
      CUdeviceptr p = mem.alloc(bytes.size(), name + " (timing input set)", where);
      check_cu(d.cuMemcpyHtoD(p, bytes.data(), bytes.size()), "uploading a timing input set", where);
      staged[name] = p;
    }
  }
  return in;
}

// What is written into one set of kernel buffers before every trial: the trial's input set
// copied in (in and inout buffers), outputs poisoned (the candidate) or zeroed (the reference
// and the library, as verify gives them theirs), scratch zeroed, and the candidate's .global
// variables restored to their loaded values.
struct Preamble {
  struct Copy {
    CUdeviceptr dst;
    std::string name;
    size_t bytes;
  };
  struct Restore {
    CUdeviceptr dst, saved;
    size_t bytes;
  };
  const InputSets* sets = nullptr;
  std::vector<Copy> inputs;
  std::vector<std::pair<CUdeviceptr, size_t>> poison, zero;
  std::vector<Restore> globals;
  CUdeviceptr poison_source = 0;  // the poison pattern, for outputs whose size is not a multiple of 4

  void enqueue(const Driver& d, int set, const std::string& where) const {
    const auto& staged = sets->staged[static_cast<size_t>(set)];
    for (auto& c : inputs)
      check_cu(d.cuMemcpyDtoDAsync(c.dst, staged.at(c.name), c.bytes, nullptr), "refreshing an input", where);
    for (auto& [p, bytes] : poison) {
      if (bytes % 4 == 0)
        check_cu(d.cuMemsetD32Async(p, task::kPoisonWord, bytes / 4, nullptr), "poisoning an output", where);
      else check_cu(d.cuMemcpyDtoDAsync(p, poison_source, bytes, nullptr), "poisoning an output", where);
    }
    for (auto& [p, bytes] : zero) check_cu(d.cuMemsetD8Async(p, 0, bytes, nullptr), "zeroing a buffer", where);
    for (auto& g : globals)
      check_cu(d.cuMemcpyDtoDAsync(g.dst, g.saved, g.bytes, nullptr), "restoring a .global variable", where);
  }
};

Preamble candidate_preamble(const Driver& d, const Loaded& L, const InputSets& sets, const CandidateBuffers& cb,
                            Allocations& mem, const std::string& where) {
  Preamble pre;
  pre.sets = &sets;
  size_t odd = 0;
  for (auto& [name, data] : cb.data) {
    size_t bytes = cb.bytes.at(name);
    if (sets.cases[0]->h.in.count(name)) {
      pre.inputs.push_back({data, name, bytes});
    } else if (L.task.find_param(name)) {
      pre.poison.push_back({data, bytes});
      if (bytes % 4) odd = std::max(odd, bytes);
    } else {
      pre.zero.push_back({data, bytes});  // the candidate's scratch
    }
  }
  if (odd) {
    std::vector<uint8_t> pattern(odd);
    task::fill_poison(pattern.data(), odd);
    pre.poison_source = mem.alloc(odd, "poison pattern", where);
    check_cu(d.cuMemcpyHtoD(pre.poison_source, pattern.data(), odd), "uploading the poison pattern", where);
  }
  return pre;
}

Preamble plain_preamble(const Loaded& L, const InputSets& sets, const HostCase& h,
                        const std::map<std::string, CUdeviceptr>& bufs) {
  Preamble pre;
  pre.sets = &sets;
  for (auto& p : L.task.params) {
    if (p.kind != Param::buffer) continue;
    size_t bytes = h.counts.at(p.name) * task::dtype_size(p.dtype);
    if (h.in.count(p.name)) pre.inputs.push_back({bufs.at(p.name), p.name, bytes});
    else pre.zero.push_back({bufs.at(p.name), bytes});
  }
  return pre;
}

// The candidate's .global variables as loaded, before its first launch in this job, saved so
// that every trial starts from them. Each is found by its name in the cubin; one the driver
// does not resolve is placed from a resolved one of the same section (a section is loaded as
// one block), else it is named in `notes` and only the checked trials guard against it.
std::vector<Preamble::Restore> save_globals(const Driver& d, const Loaded& L, const Job& job, Allocations& mem,
                                            std::vector<std::string>& notes) {
  const std::string where = "saving the candidate's .global variables";
  auto image = read_file(job.candidate_cubin);
  if (!image) abort_with(FailureKind::load, image.error().message, where);
  std::vector<Preamble::Restore> out;
  auto sections = cubin_global_sections(*image);
  if (!sections) {
    notes.push_back(
        "the candidate's .global variables could not be read from its cubin, so they are not restored between "
        "timed trials: " +
        sections.error().message);
    return out;
  }
  for (auto& sec : *sections) {
    std::optional<CUdeviceptr> base;
    std::vector<const GlobalSymbol*> unresolved;
    for (auto& sym : sec.symbols) {
      if (sym.size == 0) continue;
      CUdeviceptr p = 0;
      size_t bytes = 0;
      if (d.cuModuleGetGlobal(&p, &bytes, L.candidate.m, sym.name.c_str()) == CUDA_SUCCESS && p != 0 && bytes > 0) {
        base = p - sym.offset;
        out.push_back({p, 0, bytes});
      } else {
        unresolved.push_back(&sym);
      }
    }
    for (const GlobalSymbol* sym : unresolved) {
      if (base) out.push_back({*base + sym->offset, 0, sym->size});
      else
        notes.push_back(fmt::format("the .global variable '{}' could not be restored between timed trials", sym->name));
    }
  }
  for (auto& r : out) {
    r.saved = mem.alloc(r.bytes, ".global variable copy", where);
    check_cu(d.cuMemcpyDtoD(r.saved, r.dst, r.bytes), "saving a .global variable", where);
  }
  return out;
}

struct TrialRun {
  TimingStats stats;
  int trials = 0;
  std::vector<int> set_of_trial;
};

// Times `body` (one run of the kernel or kernels) with CUDA events around it alone. Before
// each trial, on the same stream: the preamble, then the L2 flush (so the fresh inputs are
// not left in the L2). After the stop event, `save(slot)` when the sampler picks the trial.
template <typename Body>
TrialRun time_runs(Executor::State& s, Body&& body, const Preamble& pre, Rotation& rot, TrialSampler* sampler,
                   const std::function<void(int)>& save, int max_trials, double budget_s, const std::string& where) {
  const Driver& d = *s.d;
  // Destroyed however the timing ends, also when creating the second one fails.
  struct Events {
    const Driver& d;
    CUevent start = nullptr, stop = nullptr;
    ~Events() {
      if (start) d.cuEventDestroy(start);
      if (stop) d.cuEventDestroy(stop);
    }
  } events{d};
  check_cu(d.cuEventCreate(&events.start, CU_EVENT_DEFAULT), "creating an event", where);
  check_cu(d.cuEventCreate(&events.stop, CU_EVENT_DEFAULT), "creating an event", where);
  CUevent start = events.start, stop = events.stop;
  for (int i = 0; i < 3; ++i) {  // warm-up: module load, instruction cache, clocks
    pre.enqueue(d, i % rot.sets(), where);
    body();
  }
  check_cu(d.cuCtxSynchronize(), "warm-up", where);
  TrialRun run;
  std::vector<double> samples;
  double t0 = now_s();
  for (int trial = 0; trial < max_trials && (trial < 5 || now_s() - t0 < budget_s); ++trial) {
    int set = rot.set_for(trial);
    pre.enqueue(d, set, where);
    check_cu(d.cuMemsetD32Async(s.flush, static_cast<unsigned>(trial), s.flush_bytes / 4, nullptr), "flushing the L2",
             where);
    check_cu(d.cuEventRecord(start, nullptr), "recording an event", where);
    body();
    check_cu(d.cuEventRecord(stop, nullptr), "recording an event", where);
    if (sampler)
      if (int slot = sampler->offer(trial); slot >= 0) save(slot);
    check_cu(d.cuEventSynchronize(stop), "timing", where);
    float ms = 0;
    check_cu(d.cuEventElapsedTime(&ms, start, stop), "reading an event", where);
    samples.push_back(ms);
    run.set_of_trial.push_back(set);
  }
  check_cu(d.cuCtxSynchronize(), "timing", where);  // the last saves
  run.trials = static_cast<int>(samples.size());
  run.stats = summarize(std::move(samples));
  return run;
}

// Where the sampled trials' outputs go: one copy of every output per slot.
using SaveSlots = std::vector<std::map<std::string, CUdeviceptr>>;

SaveSlots make_save_slots(const Loaded& L, const CandidateBuffers& cb, Allocations& mem, const std::string& where) {
  SaveSlots slots(kCheckSlots);
  for (auto& slot : slots)
    for (auto& p : L.task.params)
      if (p.is_output()) slot[p.name] = mem.alloc(cb.bytes.at(p.name), p.name + " (saved trial outputs)", where);
  return slots;
}

// Compares the checked trials' outputs with the reference's outputs on the same input set
// (computed now, once per set). The last trial is checked in place, guards and unchanged
// inputs included; the others from their saved copies. Fills st.checked; returns the first
// failure in trial order.
std::optional<std::string> check_trials(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set,
                                        const InputSets& sets, const CandidateBuffers& cb, const TrialRun& run,
                                        const TrialSampler& sampler, const SaveSlots& saved, SizeTiming& st,
                                        const std::string& where) {
  const Driver& d = *s.d;
  std::optional<std::string> first;
  const std::vector<int>& held = sampler.held();
  for (int t : checked_trials(held, run.trials)) {
    int set_index = run.set_of_trial[static_cast<size_t>(t)];
    auto c = cached_case(s, L, job, set, sets.seeds[static_cast<size_t>(set_index)], true, where);
    const HostCase& h = c->h;
    bool last = t == run.trials - 1;
    CaseResult cr;
    if (last) {
      cr = check_candidate(d, L, h, cb, c->expected, where);
    } else {
      size_t slot = static_cast<size_t>(std::find(held.begin(), held.end(), t) - held.begin());
      for (auto& p : L.task.params) {
        if (!p.is_output()) continue;
        std::vector<uint8_t> actual(cb.bytes.at(p.name));
        check_cu(d.cuMemcpyDtoH(actual.data(), saved[slot].at(p.name), actual.size()),
                 "reading a trial's saved outputs", where);
        std::vector<int64_t> shape;
        if (auto it = h.shapes.find(p.name); it != h.shapes.end()) shape = it->second;
        cr.outputs.push_back(task::compare_output(p.name, c->expected.at(p.name).data(), actual.data(), p.dtype,
                                                  h.counts.at(p.name), L.task.tolerance_for(p.name), shape));
      }
      cr.pass = true;
      for (auto& o : cr.outputs) cr.pass = cr.pass && o.pass;
    }
    TrialCheck tc{t + 1, set_index + 1, last, cr.pass, ""};
    if (!cr.pass) {
      tc.problem = describe_trial_failure(t, run.trials, set_index, set.name, cr.problems, cr.outputs);
      if (!first) first = tc.problem;
    }
    st.checked.push_back(tc);
  }
  return first;
}

}  // namespace

TimeReport time_job(Executor::State& s, const Loaded& L, const Job& job) {
  const Driver& d = *s.d;
  TimeReport rep;
  rep.trials_pass = true;
  auto shown = L.task.size_sets(false);
  double per = job.budget_s / (2.0 * static_cast<double>(shown.size()));
  Allocations job_mem(d);
  std::vector<Preamble::Restore> globals;  // saved before the candidate's first launch in this job
  if (job.reset_globals) globals = save_globals(d, L, job, job_mem, rep.notes);
  for (const task::SizeSet* set : shown) {
    std::string where = fmt::format("timing size set '{}'", set->name);
    uint64_t key = task::size_set_key(set->name);
    Allocations staging(d);
    InputSets sets = stage_input_sets(s, L, job, *set, staging, where);
    const HostCase& h = sets.cases[0]->h;  // sizes and scalars: the same for every input set
    SizeTiming st;
    st.size_set = set->name;
    st.input_sets = sets.count();
    {
      Allocations mem(d);
      CandidateBuffers cb;
      setup_candidate(s, L, h, mem, cb, where);
      Preamble pre = candidate_preamble(d, L, sets, cb, mem, where);
      pre.globals = globals;
      SaveSlots saved = make_save_slots(L, cb, mem, where);
      Rotation rot(sets.count(), task::derive_seed(job.seed, task::SeedUse::rotation, key));
      TrialSampler sampler(kCheckSlots, task::derive_seed(job.seed, task::SeedUse::trial_pick, key));
      auto save = [&](int slot) {
        for (auto& [name, copy] : saved[static_cast<size_t>(slot)])
          check_cu(d.cuMemcpyDtoDAsync(copy, cb.data.at(name), cb.bytes.at(name), nullptr), "saving a trial's outputs",
                   where);
      };
      TrialRun run = time_runs(
          s, [&] { run_candidate_launches(d, L, h, cb, where, false); }, pre, rot, &sampler, save, job.max_trials, per,
          where);
      st.candidate = run.stats;
      if (auto problem = check_trials(s, L, job, *set, sets, cb, run, sampler, saved, st, where)) {
        rep.trials_pass = false;
        rep.trial_problem = *problem;
        rep.sizes.push_back(st);
        return rep;  // the kernel's timing means nothing: the baselines and later sizes are not timed
      }
    }
    {
      Allocations mem(d);
      auto bufs = plain_buffers(d, L, h, mem, where);
      Preamble pre = plain_preamble(L, sets, h, bufs);
      ReferenceLaunch ref(L, h, bufs, where);
      Rotation rot(sets.count(), task::derive_seed(job.seed, task::SeedUse::rotation, key));
      st.reference = time_runs(
                         s, [&] { ref.run(d, L, where); }, pre, rot, nullptr, {}, job.max_trials, per, where)
                         .stats;
    }
    if (L.task.baseline) {
      LibraryBaseline* lib = s.library(st.library_name);
      if (lib) {
        st.library_name = LibraryBaseline::name(*L.task.baseline);
        Allocations mem(d);
        auto bufs = plain_buffers(d, L, h, mem, where);
        Preamble pre = plain_preamble(L, sets, h, bufs);
        Rotation rot(sets.count(), task::derive_seed(job.seed, task::SeedUse::rotation, key));
        st.library = time_runs(
                         s,
                         [&] {
                           if (auto r = lib->run(L.task, h.symbols, bufs); !r)
                             abort_with(FailureKind::library, r.error().message, where);
                         },
                         pre, rot, nullptr, {}, job.max_trials, per, where)
                         .stats;
      }
    }
    rep.sizes.push_back(st);
  }
  // Fresh buffers and inputs, one more launch: the kernel as verify sees it, after the trials.
  const task::SizeSet* last = shown.back();
  CaseResult again = verify_case(
      s, L, job, *last, task::derive_seed(job.seed, task::SeedUse::reverify, task::size_set_key(last->name)), 0);
  rep.reverify_pass = again.pass;
  if (!again.pass) {
    std::vector<std::string> why = again.problems;
    for (auto& c : again.outputs)
      if (!c.pass)
        why.push_back(fmt::format("'{}': {} of {} elements wrong{}", c.output, c.mismatches, c.count,
                                  c.hint.empty() ? "" : " (" + c.hint + ")"));
    rep.reverify_problem =
        fmt::format("after timing, a launch with fresh inputs on '{}' failed: {}", last->name, fmt::join(why, "; "));
  }
  return rep;
}

}  // namespace ptxforge::gpu::detail
