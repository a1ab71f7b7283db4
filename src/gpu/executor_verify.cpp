// Verify's cases: one (size set, seed) from the reference's outputs to the candidate's
// verdict, an illegal address on guarded buffers reported as an out-of-bounds access; the
// instrumented candidate's executed-instruction counters; and the trivial outputs a lazy
// kernel would leave, which the task's comparison must reject.
#include "gpu/executor_detail.h"

#include <cstring>

#include <fmt/format.h>

#include "task/seeds.h"

namespace ptxforge::gpu::detail {

CaseResult verify_case(Executor::State& s, const Loaded& L, const Job& job, const task::SizeSet& set, uint64_t seed,
                       int seed_index) {
  const Driver& d = *s.d;
  std::string where = seed_index > 0    ? fmt::format("size set '{}', seed {}", set.name, seed_index)
                      : seed_index == 0 ? fmt::format("size set '{}', after timing", set.name)
                                        : fmt::format("size set '{}'", set.name);
  std::optional<std::vector<std::string>> placed;  // set once the candidate's buffers exist
  try {
    auto c = cached_case(s, L, job, set, seed, true, where);
    Allocations mem(d);
    CandidateBuffers cb;
    {
      PhaseTimer t(s.phases.candidate_s);
      setup_candidate(s, L, c->h, mem, cb, where);
      placed = cb.guarded_names;
      snapshot_inputs(s, L, c->h, mem, cb, where);
      run_candidate_launches(d, L, c->h, cb, where, true);
    }
    PhaseTimer t(s.phases.compare_s);
    CaseResult cr = check_candidate(d, L, c->h, cb, c->expected, where);
    cr.size_set = set.name;
    cr.shown = set.shown;
    cr.seed = seed;
    cr.seed_index = seed_index;
    return cr;
  } catch (Abort& a) {
    a.failure.held_back = !set.shown;  // `where` names the set: printers for a model leave it out
    if (placed && a.fatal && a.failure.message.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos) {
      // The candidate touched unmapped memory: with guard pages, a buffer's guard region.
      a.failure.out_of_bounds = true;
      a.failure.message = "out-of-bounds access: " + a.failure.message;
      a.failure.size_set = set.name;
      a.failure.seed = seed;
      a.failure.guarded = *placed;
    }
    throw;
  }
}

std::vector<uint64_t> take_executed(const Driver& d, const Loaded& L, int slots) {
  CUdeviceptr p = 0;
  size_t bytes = 0;
  check_cu(d.cuModuleGetGlobal(&p, &bytes, L.candidate.m, "__ptxforge_executed"),
           "finding the executed-instruction counters", "the instrumented candidate");
  if (bytes != sizeof(uint64_t) * static_cast<size_t>(slots))
    abort_with(FailureKind::spec, fmt::format("the counters hold {} bytes, not {} slots", bytes, slots));
  std::vector<uint64_t> counts(static_cast<size_t>(slots));
  check_cu(d.cuCtxSynchronize(), "finishing the instrumented runs", "the instrumented candidate");
  check_cu(d.cuMemcpyDtoH(counts.data(), p, bytes), "reading the executed-instruction counters",
           "the instrumented candidate");
  check_cu(d.cuMemsetD8(p, 0, bytes), "clearing the executed-instruction counters", "the instrumented candidate");
  return counts;
}

std::vector<CaseResult> trivial_cases(Executor::State& s, const Loaded& L, const Job& job) {
  const Driver& d = *s.d;
  std::vector<CaseResult> out;
  for (const task::SizeSet* set : L.task.size_sets(true)) {
    std::string where = fmt::format("size set '{}', trivial outputs", set->name);
    uint64_t seed = task::derive_seed(job.seed, task::SeedUse::trivial, task::size_set_key(set->name));
    auto cached = cached_case(s, L, job, *set, seed, true, where);
    const HostCase& h = cached->h;
    const auto& expected = cached->expected;
    const task::HostBytes* first_input = h.in.empty() ? nullptr : &h.in.begin()->second;
    for (const char* kind : {"zeros", "input-copy", "unwritten"}) {
      CaseResult cr;
      cr.trivial = kind;
      cr.size_set = set->name;
      cr.shown = set->shown;
      cr.seed = seed;
      for (auto& p : L.task.params) {
        if (!p.is_output()) continue;
        std::vector<uint8_t> actual(expected.at(p.name).size(), 0);
        if (std::string(kind) == "unwritten") task::fill_poison(actual.data(), actual.size());
        if (std::string(kind) == "input-copy" && first_input)
          std::memcpy(actual.data(), first_input->data(), std::min(actual.size(), first_input->size()));
        if (p.role == task::Role::inout && std::string(kind) != "zeros")
          actual.assign(h.in.at(p.name).begin(), h.in.at(p.name).end());  // left unchanged
        cr.outputs.push_back(task::compare_output(p.name, expected.at(p.name).data(), actual.data(), p.dtype,
                                                  h.counts.at(p.name), L.task.tolerance_for(p.name)));
      }
      cr.pass = true;
      for (auto& c : cr.outputs) cr.pass = cr.pass && c.pass;
      out.push_back(std::move(cr));
    }
    std::string why;
    LibraryBaseline* lib = L.task.baseline ? s.library(why) : nullptr;
    if (lib) {
      // The library computes the same product: the reference must agree with it.
      Allocations mem(d);
      auto bufs = plain_buffers(d, L, h, mem, where);
      if (auto r = lib->run(L.task, h.symbols, bufs); !r) abort_with(FailureKind::library, r.error().message, where);
      check_cu(d.cuCtxSynchronize(), "running the library", where);
      auto got = download_outputs(d, L, h, bufs, where);
      CaseResult cr;
      cr.trivial = "library";
      cr.size_set = set->name;
      cr.shown = set->shown;
      cr.seed = seed;
      for (auto& p : L.task.params)
        if (p.is_output())
          cr.outputs.push_back(task::compare_output(p.name, expected.at(p.name).data(), got.at(p.name).data(), p.dtype,
                                                    h.counts.at(p.name), L.task.tolerance_for(p.name)));
      cr.pass = true;
      for (auto& c : cr.outputs) cr.pass = cr.pass && c.pass;
      out.push_back(std::move(cr));
    }
  }
  return out;
}

}  // namespace ptxforge::gpu::detail
