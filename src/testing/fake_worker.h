// A JobRunner for tests: it answers every job with a scripted Outcome and keeps the jobs it
// was sent, so the stage functions run against it with no GPU and no worker process.
#pragma once

#include <functional>
#include <vector>

#include "gpu/worker_client.h"

namespace ptxforge::gpu {

class FakeWorker : public JobRunner {
 public:
  // Unset: the answer of a worker where there is no GPU.
  std::function<Outcome(const Job&)> answer;
  std::vector<Job> jobs;  // every job sent, in order

  Outcome run(const Job& job, std::chrono::milliseconds) override {
    jobs.push_back(job);
    if (answer) return answer(job);
    Outcome o;
    o.failure = Failure{FailureKind::driver, "no CUDA driver", ""};
    return o;
  }
  const Job* last(JobKind kind) const {
    for (auto it = jobs.rbegin(); it != jobs.rend(); ++it)
      if (it->kind == kind) return &*it;
    return nullptr;
  }
};

}  // namespace ptxforge::gpu
