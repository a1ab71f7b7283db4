// The time job (docs/design.md, "Timing"). Every trial starts from fresh state, written on the
// stream before the L2 flush and the start event; the events bracket the kernel launches
// alone (and the candidate's scratch zeroing, which is part of its work). After every trial's
// stop event ptxforge's own kernels compare its outputs with the reference's on the device
// (worker/trial_check.h); the last trial is also checked in place on the host.
#include "worker/executor_detail.h"

#include <cstring>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "worker/cubin_globals.h"
#include "worker/timing_plan.h"
#include "worker/trial_check.h"
#include "task/seeds.h"
#include "util/text.h"

namespace ptxforge::gpu::detail {

using task::Param;

namespace {

// The input sets one size set is timed on: drawn on the host from seeds derived from the
// run's seed, uploaded once to staging buffers, copied into the kernel's buffers before each
// trial. A kernel that remembers the inputs it saw, or computes only on some, meets another
// set. Each set's reference outputs (computed once per set, or taken from the worker's cache)
// are uploaded too: every trial is compared with them on the device.
struct InputSets {
  std::vector<uint64_t> seeds;
  std::vector<std::shared_ptr<CachedCase>> cases;            // host inputs and expected outputs
  std::vector<std::map<std::string, CUdeviceptr>> staged;    // per set: in/inout buffer -> its device copy
  std::vector<std::map<std::string, CUdeviceptr>> expected;  // per set: output -> the reference's, on the device
  bool fresh = false;  // a set for every trial and warm-up run (timing_plan.h: fresh_timing_sets)
  int count() const { return static_cast<int>(seeds.size()); }
  Rotation rotation(uint64_t key) const { return Rotation(count(), key, fresh ? kWarmupRuns : 0); }
};

InputSets stage_input_sets(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set,
                           const TimingPlan& plan, Allocations& mem, const std::string& where) {
  const Driver& d = *s.d;
  uint64_t key = task::size_set_key(set.name);
  auto seed_of = [&](int j) {
    return task::derive_seed(job.seed, task::SeedUse::timing, key, static_cast<uint64_t>(j));
  };
  InputSets in;
  auto first = cached_case(s, L, job, set, seed_of(0), false, where);
  size_t per_set = 0;
  for (auto& [name, bytes] : first->h.in) per_set += bytes.size();
  for (auto& p : L.task.params)
    if (p.is_output()) per_set += first->h.counts.at(p.name) * task::dtype_size(p.dtype);
  size_t free_bytes = 0, total_bytes = 0;
  bool known = d.cuMemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS;
  int sets = known ? fresh_timing_sets(per_set, free_bytes, plan.trial_cap) : 0;
  in.fresh = sets > 0;
  if (!in.fresh) sets = known ? timing_input_sets(per_set, free_bytes, plan.wanted_sets) : plan.wanted_sets;
  for (int j = 0; j < sets; ++j) {
    in.seeds.push_back(seed_of(j));
    in.cases.push_back(cached_case(s, L, job, set, in.seeds.back(), true, where));
    const CachedCase& c = *in.cases.back();
    auto& staged = in.staged.emplace_back();
    for (auto& [name, bytes] : c.h.in) {
      CUdeviceptr p = mem.alloc(bytes.size(), name + " (timing input set)", where);
      check_cu(d.cuMemcpyHtoD(p, bytes.data(), bytes.size()), "uploading a timing input set", where);
      staged[name] = p;
    }
    auto& expected = in.expected.emplace_back();
    for (auto& [name, bytes] : c.expected) {
      CUdeviceptr p = mem.alloc(bytes.size(), name + " (the reference's outputs)", where);
      check_cu(d.cuMemcpyHtoD(p, bytes.data(), bytes.size()), "uploading the reference's outputs", where);
      expected[name] = p;
    }
  }
  return in;
}

// After the trials: the device copies of the reference's outputs must still hold what was
// uploaded. A candidate that wrote into them (so that its own outputs compared equal) is caught
// here, whatever the counts said; "" when they are intact.
std::string reference_copies_problem(const Driver& d, const InputSets& sets, const std::string& where) {
  for (int j = 0; j < sets.count(); ++j)
    for (auto& [name, bytes] : sets.cases[static_cast<size_t>(j)]->expected) {
      std::vector<uint8_t> now(bytes.size());
      check_cu(d.cuMemcpyDtoH(now.data(), sets.expected[static_cast<size_t>(j)].at(name), now.size()),
               "reading the reference's outputs back", where);
      auto diff = std::mismatch(now.begin(), now.end(), bytes.begin());
      if (diff.first != now.end())
        return fmt::format(
            "the reference's outputs for input set {} ('{}'), kept on the device to check the timed trials, were "
            "changed during the trials (first changed byte {}): a kernel wrote outside its buffers",
            j + 1, name, diff.first - now.begin());
    }
  return "";
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
  // The candidate's scratch: zeroed after the start event, so that a kernel that needs zeroed
  // scratch (split-K partial sums, a look-back's flags) pays for the memset in its time.
  std::vector<std::pair<CUdeviceptr, size_t>> timed_zero;
  std::vector<Restore> globals;
  const TrialChecker* copier = nullptr;  // copies the .global slots (their tails lie in no allocation)
  CUdeviceptr poison_source = 0;  // the poison pattern, for outputs whose size is not a multiple of 4
  std::function<void()> reload;   // the candidate's module loaded afresh (a .global section that cannot be restored)

  void enqueue(const Driver& d, int set, const std::string& where) const {
    if (reload) reload();
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
      check_cu(copier->enqueue_copy(g.dst, g.saved, g.bytes), "restoring the candidate's .global variables", where);
  }
  // After the start event: the part of the fresh state that is the kernel's own work.
  void enqueue_timed(const Driver& d, const std::string& where) const {
    for (auto& [p, bytes] : timed_zero) check_cu(d.cuMemsetD8Async(p, 0, bytes, nullptr), "zeroing scratch", where);
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
      pre.timed_zero.push_back({data, bytes});  // the candidate's scratch
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
// that every trial starts from them: every variable's slot as the driver placed it (from its
// address to the next 256-byte boundary past its end, so the gaps between variables too:
// worker/cubin_globals.h), copied by a kernel because the copy API refuses the slots' tails. A
// section that cannot be placed makes every trial reload the module instead (`reload`);
// sections over the size limit fail the job.
struct SavedGlobals {
  std::vector<Preamble::Restore> restores;
  const TrialChecker* copier = nullptr;
  bool reload = false;
};

SavedGlobals save_globals(Executor::State& s, const Loaded& L, const std::string& image, Allocations& mem,
                          std::vector<std::string>& notes) {
  const Driver& d = *s.d;
  const std::string where = "saving the candidate's .global sections";
  SavedGlobals out;
  auto sections = cubin_global_sections(image);
  if (!sections) {
    notes.push_back("the candidate's .global sections could not be read from its cubin, so its module is loaded "
                    "afresh before every timed trial: " +
                    sections.error().message);
    out.reload = true;
    return out;
  }
  auto resolve = [&](const std::string& name) -> std::optional<DeviceRange> {
    CUdeviceptr p = 0;
    size_t bytes = 0;
    if (d.cuModuleGetGlobal(&p, &bytes, L.candidate.m, name.c_str()) != CUDA_SUCCESS) return std::nullopt;
    return DeviceRange{p, bytes};
  };
  auto plan = plan_global_restore(*sections, resolve);
  if (!plan) abort_with(FailureKind::spec, plan.error().message, where);
  if (!plan->ranges.empty()) {
    out.copier = s.trial_checker();
    if (!out.copier) abort_with(FailureKind::load, "the copy kernel could not be loaded: " + *s.trial_check_error, where);
  }
  for (auto& r : plan->ranges) {
    CUdeviceptr saved = mem.alloc(r.size, r.name + " copy", where);
    check_cu(out.copier->enqueue_copy(saved, r.base, r.size), "saving the candidate's .global variables", where);
    out.restores.push_back({r.base, saved, r.size});
  }
  check_cu(d.cuCtxSynchronize(), "saving the candidate's .global variables", where);
  if (!plan->unlocated.empty()) {
    out.reload = true;
    out.restores.clear();  // a reload may place the module elsewhere: the saved ranges would point at freed memory
    notes.push_back(fmt::format("the candidate's {} section could not be located, so its module is loaded afresh "
                                "before every timed trial",
                                plan->unlocated.front()));
  }
  return out;
}

struct TrialRun {
  TimingStats stats;
  int trials = 0;
  std::vector<int> set_of_trial;
  double compare_gpu_s = 0;  // the after-trial work on the GPU, summed
};

// What runs after each trial's stop event, outside the timed window: `enqueue` puts work on
// the stream, `collect` runs on the host once it finished (the candidate's check).
struct AfterTrial {
  std::function<void(int trial, int set)> enqueue;
  std::function<void(int trial)> collect;
};

// Times `body` (one run of the kernel or kernels) with CUDA events around it alone. Before
// each trial, on the same stream: the preamble, then the L2 flush (so the fresh inputs are
// not left in the L2). After the stop event, `after` (when given).
template <typename Body>
TrialRun time_runs(Executor::State& s, Body&& body, const Preamble& pre, Rotation& rot, const AfterTrial* after,
                   int max_trials, double budget_s, const std::string& where) {
  const Driver& d = *s.d;
  // Destroyed however the timing ends, also when creating a later one fails.
  struct Events {
    const Driver& d;
    CUevent start = nullptr, stop = nullptr, checked = nullptr;
    ~Events() {
      if (start) d.cuEventDestroy(start);
      if (stop) d.cuEventDestroy(stop);
      if (checked) d.cuEventDestroy(checked);
    }
  } events{d};
  check_cu(d.cuEventCreate(&events.start, CU_EVENT_DEFAULT), "creating an event", where);
  check_cu(d.cuEventCreate(&events.stop, CU_EVENT_DEFAULT), "creating an event", where);
  check_cu(d.cuEventCreate(&events.checked, CU_EVENT_DEFAULT), "creating an event", where);
  CUevent start = events.start, stop = events.stop, checked = events.checked;
  for (int i = 0; i < kWarmupRuns; ++i) {  // warm-up: module load, instruction cache, clocks
    pre.enqueue(d, rot.warmup_set(i), where);
    pre.enqueue_timed(d, where);
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
    pre.enqueue_timed(d, where);
    body();
    check_cu(d.cuEventRecord(stop, nullptr), "recording an event", where);
    if (after) after->enqueue(trial, set);
    check_cu(d.cuEventRecord(checked, nullptr), "recording an event", where);
    check_cu(d.cuEventSynchronize(checked), "timing", where);
    float ms = 0, check_ms = 0;
    check_cu(d.cuEventElapsedTime(&ms, start, stop), "reading an event", where);
    check_cu(d.cuEventElapsedTime(&check_ms, stop, checked), "reading an event", where);
    samples.push_back(ms);
    run.compare_gpu_s += check_ms / 1e3;
    run.set_of_trial.push_back(set);
    if (after) after->collect(trial);
  }
  run.trials = static_cast<int>(samples.size());
  run.stats = summarize(std::move(samples));
  return run;
}

// The candidate's outputs, as the trial check sees them.
std::vector<CheckedOutput> checked_outputs(const Loaded& L, const HostCase& h) {
  std::vector<CheckedOutput> out;
  for (auto& p : L.task.params)
    if (p.is_output()) out.push_back({p.name, h.counts.at(p.name), p.dtype, L.task.tolerance_for(p.name)});
  return out;
}

// The candidate's part of one size set: timed, every trial compared on the GPU with the
// reference's outputs on its input set, the last trial checked in place on the host too, the
// reference's device copies checked for writes. Fills st; returns the first problem.
std::optional<std::string> time_candidate(Executor::State& s, Loaded& L, const task::SizeSet& set,
                                          const InputSets& sets, const TimingPlan& plan, const SavedGlobals& globals,
                                          const std::function<void()>& reload, double budget_s, SizeTiming& st,
                                          const std::string& where) {
  const Driver& d = *s.d;
  const TrialChecker* checker = s.trial_checker();
  if (!checker) abort_with(FailureKind::load, "the trial-check kernels could not be loaded: " + *s.trial_check_error, where);
  const HostCase& h = sets.cases[0]->h;  // sizes and scalars: the same for every input set
  Allocations mem(d);
  CandidateBuffers cb;
  setup_candidate(s, L, h, mem, cb, where);
  Preamble pre = candidate_preamble(d, L, sets, cb, mem, where);
  pre.globals = globals.restores;
  pre.copier = globals.copier;
  if (globals.reload) pre.reload = reload;
  std::vector<CheckedOutput> outs = checked_outputs(L, h);
  // Two u64 per output (mismatches, never written), zeroed after the candidate ran and read
  // back before it runs again: the candidate never runs while a count it could change is on
  // the device, so it can neither clear an earlier trial's count nor preset a later one.
  CUdeviceptr counters = mem.alloc(std::max<size_t>(outs.size(), 1) * 16, "mismatch counters", where);
  std::vector<uint64_t> counts;  // trial-major, every trial
  AfterTrial after;
  after.enqueue = [&](int, int set_index) {
    check_cu(d.cuMemsetD32Async(counters, 0, outs.size() * 4, nullptr), "clearing the mismatch counters", where);
    const auto& expected = sets.expected[static_cast<size_t>(set_index)];
    for (size_t o = 0; o < outs.size(); ++o)
      check_cu(checker->enqueue(outs[o].dtype, expected.at(outs[o].name), cb.data.at(outs[o].name), outs[o].count,
                                outs[o].tol, counters + 16 * o),
               "checking a timed trial's outputs", where);
  };
  after.collect = [&](int) {
    std::vector<uint64_t> now(outs.size() * 2);
    if (!now.empty())
      check_cu(d.cuMemcpyDtoH(now.data(), counters, now.size() * 8), "reading the mismatch counters", where);
    counts.insert(counts.end(), now.begin(), now.end());
  };
  Rotation rot = sets.rotation(plan.rotation_key);
  double t0 = now_s();
  TrialRun run = time_runs(
      s, [&] { run_candidate_launches(d, L, h, cb, where, false); }, pre, rot, &after, plan.trial_cap, budget_s,
      where);
  st.cost.candidate_s = now_s() - t0;
  st.cost.compare_gpu_s = run.compare_gpu_s;
  st.candidate = run.stats;

  t0 = now_s();
  int last = run.trials - 1;
  int last_set = run.set_of_trial[static_cast<size_t>(last)];
  const CachedCase& lc = *sets.cases[static_cast<size_t>(last_set)];
  CaseResult in_place = check_candidate(d, L, lc.h, cb, lc.expected, where);
  std::string tampered = reference_copies_problem(d, sets, where);
  st.cost.check_s = now_s() - t0;

  std::optional<FailedTrial> failed = first_failed_trial(counts, outs, run.trials);
  for (int t = 0; t < run.trials; ++t) {
    int set_index = run.set_of_trial[static_cast<size_t>(t)];
    TrialCheck tc{t + 1, set_index + 1, t == last, true, ""};
    if (failed && failed->trial == t) {
      tc.pass = false;
      tc.problem = describe_trial_failure(t, run.trials, set_index, set.name, {}, failed->outputs);
    }
    if (t == last && !in_place.pass) {  // the host's words: guards, inputs, hints
      tc.pass = false;
      tc.problem =
          describe_trial_failure(t, run.trials, set_index, set.name, in_place.problems, in_place.outputs);
    }
    st.checked.push_back(tc);
  }
  if (!tampered.empty()) return fmt::format("timed trials on size set '{}': {}", set.name, tampered);
  for (auto& tc : st.checked)
    if (!tc.pass) return tc.problem;
  return std::nullopt;
}

// The candidate's module, loaded afresh from its cubin: every .global byte back to its loaded
// value, for a module whose sections could not be located to be restored.
void reload_candidate(const Driver& d, Loaded& L, const std::string& image, const std::string& where) {
  check_cu(d.cuCtxSynchronize(), "finishing the candidate's launches", where);
  if (L.candidate.m) d.cuModuleUnload(L.candidate.m);
  L.candidate.m = nullptr;
  check_cu(d.cuModuleLoadDataEx(&L.candidate.m, image.data(), 0, nullptr, nullptr), "reloading the candidate", where);
  for (size_t i = 0; i < L.spec.launches.size(); ++i)
    check_cu(d.cuModuleGetFunction(&L.launch_fns[i], L.candidate.m, L.spec.launches[i].entry.c_str()),
             "finding a candidate kernel after reloading", where);
}

}  // namespace

TimeReport time_job(Executor::State& s, Loaded& L, const Job& job) {
  const Driver& d = *s.d;
  TimeReport rep;
  rep.trials_pass = true;
  auto shown = L.task.size_sets(false);
  double per = job.budget_s / (2.0 * static_cast<double>(shown.size()));
  Allocations job_mem(d);
  auto image = read_file(job.candidate_cubin);
  if (!image) abort_with(FailureKind::load, image.error().message, "reading the candidate's cubin");
  SavedGlobals globals;  // saved before the candidate's first launch in this job
  if (job.reset_globals) globals = save_globals(s, L, *image, job_mem, rep.notes);
  auto reload = [&] { reload_candidate(d, L, *image, "reloading the candidate before a timed trial"); };
  for (const task::SizeSet* set : shown) {
    std::string where = fmt::format("timing size set '{}'", set->name);
    TimingPlan plan = plan_timing(job.seed, set->name, job.max_trials);
    Allocations staging(d, /*zero_before_free=*/true);  // it holds the reference's outputs
    SizeTiming st;
    st.size_set = set->name;
    st.trial_cap = plan.trial_cap;
    double t0 = now_s();
    InputSets sets = stage_input_sets(s, L, job, *set, plan, staging, where);
    st.cost.expected_s = now_s() - t0;
    const HostCase& h = sets.cases[0]->h;
    st.input_sets = sets.count();
    if (auto problem = time_candidate(s, L, *set, sets, plan, globals, reload, per, st, where)) {
      rep.trials_pass = false;
      rep.trial_problem = *problem;
      rep.sizes.push_back(st);
      return rep;  // the kernel's timing means nothing: the baselines and later sizes are not timed
    }
    t0 = now_s();
    {
      Allocations mem(d, /*zero_before_free=*/true);
      auto bufs = plain_buffers(d, L, h, mem, where);
      Preamble pre = plain_preamble(L, sets, h, bufs);
      ReferenceLaunch ref(L, h, bufs, where);
      Rotation rot = sets.rotation(plan.rotation_key);
      st.reference = time_runs(
                         s, [&] { ref.run(d, L, where); }, pre, rot, nullptr, plan.trial_cap, per, where)
                         .stats;
    }
    if (L.task.baseline) {
      LibraryBaseline* lib = s.library(st.library_name);
      if (lib) {
        st.library_name = std::string(task::baseline_spec(L.task.baseline->kind).display_name);
        Allocations mem(d, /*zero_before_free=*/true);
        auto bufs = plain_buffers(d, L, h, mem, where);
        Preamble pre = plain_preamble(L, sets, h, bufs);
        Rotation rot = sets.rotation(plan.rotation_key);
        st.library = time_runs(
                         s,
                         [&] {
                           if (auto r = lib->run(L.task, h.symbols, bufs); !r)
                             abort_with(FailureKind::library, r.error().message, where);
                         },
                         pre, rot, nullptr, plan.trial_cap, per, where)
                         .stats;
      }
    }
    st.cost.baselines_s = now_s() - t0;
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
