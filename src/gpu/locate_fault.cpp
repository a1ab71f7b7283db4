#include "gpu/locate_fault.h"

#include <fmt/format.h>

namespace ptxforge::gpu {

std::optional<LocatedFault> locate_out_of_bounds(JobRunner& worker, const Job& verify_job, const Failure& f,
                                                 std::chrono::milliseconds timeout) {
  if (!f.out_of_bounds || f.guarded.empty() || f.size_set.empty()) return std::nullopt;
  LocatedFault found;
  bool have = false;
  for (const std::string& buffer : f.guarded) {
    Job job = verify_job;
    job.kind = JobKind::locate;
    job.placement = Placement::guarded;
    job.locate_set = f.size_set;
    job.locate_seed = f.seed;
    job.open_buffer = buffer;
    Outcome o = worker.run(job, timeout);
    ++found.runs;
    // Only a worker that placed the case with guard pages says anything about them.
    if (o.guard != GuardMode::vmm) return std::nullopt;
    bool faulted = o.failure && o.failure->out_of_bounds;
    bool clean = !o.failure && o.verify && o.verify->cases.size() == 1;
    if (!faulted && !clean) return std::nullopt;  // a hang, a crash, another failure: inconclusive
    if (clean) {
      if (have) return std::nullopt;  // two buffers each explain it: say neither
      have = true;
      found.buffer = buffer;
      found.problems = o.verify->cases[0].problems;
    }
  }
  if (!have) return std::nullopt;
  return found;
}

void name_fault_buffer(Failure& f, const LocatedFault& where) {
  const std::string prefix = "out-of-bounds access: ";
  std::string rest = f.message.rfind(prefix, 0) == 0 ? f.message.substr(prefix.size()) : f.message;
  std::string seen;
  for (auto& p : where.problems)
    if (p.find("'" + where.buffer + "'") != std::string::npos) {
      seen = " (" + p + ")";
      break;
    }
  f.message = fmt::format("out-of-bounds access near buffer '{}'{}: {}", where.buffer, seen, rest);
}

}  // namespace ptxforge::gpu
