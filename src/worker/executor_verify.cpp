// Verify's cases: one (size set, seed) from the reference's outputs to the candidate's
// verdict, an illegal address on guarded buffers reported as an out-of-bounds access, and a
// digest of the outputs on seed 1 (the prove stage holds the instrumented copy to the timed
// binary's outputs); the instrumented candidate's executed-instruction counters, in an
// allocation of their own; and the trivial outputs a lazy kernel would leave, which the task's
// comparison must reject.
#include "worker/executor_detail.h"

#include <cstring>

#include <fmt/format.h>

#include "task/seeds.h"

namespace ptxforge::gpu::detail {

namespace {

// A fast 64-bit hash of a buffer's bytes (8 at a time, multiply-xorshift), for telling two
// runs' outputs apart; not for security.
uint64_t digest_bytes(const uint8_t* p, size_t n, uint64_t h) {
  auto mix = [&](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    mix(v);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  mix(tail ^ (static_cast<uint64_t>(n) << 56));
  return h;
}

uint64_t output_digest(const Driver& d, const Loaded& L, const CandidateBuffers& cb, const std::string& where) {
  uint64_t h = 0x243f6a8885a308d3ull;
  std::vector<uint8_t> bytes;
  for (auto& p : L.task.params) {
    if (!p.is_output()) continue;
    bytes.resize(cb.bytes.at(p.name));
    check_cu(d.cuMemcpyDtoH(bytes.data(), cb.data.at(p.name), bytes.size()), "reading an output for its digest", where);
    h = digest_bytes(bytes.data(), bytes.size(), h);
  }
  return h == 0 ? 1 : h;
}

}  // namespace

ExecutedCounters::~ExecutedCounters() {
  if (p) d->cuMemFree(p);
}

void attach_executed(const Driver& d, Loaded& L, int slots) {
  auto c = std::make_unique<ExecutedCounters>();
  c->d = &d;
  c->bytes = sizeof(uint64_t) * static_cast<size_t>(slots);
  check_cu(d.cuMemAlloc(&c->p, c->bytes), "allocating the executed-instruction counters", "the instrumented candidate");
  check_cu(d.cuMemsetD8(c->p, 0, c->bytes), "clearing the executed-instruction counters", "the instrumented candidate");
  L.executed = std::move(c);
}

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
    if (seed_index == 1) cr.output_digest = output_digest(d, L, cb, where);
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
  if (!L.executed || L.executed->bytes != sizeof(uint64_t) * static_cast<size_t>(slots))
    abort_with(FailureKind::spec, fmt::format("no counters of {} slots were allocated", slots));
  CUdeviceptr p = L.executed->p;
  size_t bytes = L.executed->bytes;
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
