// The worker process: the only process that loads the CUDA driver. It answers jobs from the
// parent (verify, time, trivial outputs, the device's facts) one JSON line at a time.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "worker/driver.h"
#include "worker/executor.h"
#include "gpu/protocol.h"
#include "worker/worker_main.h"
#include "util/orphan_watch.h"

namespace ptxforge::gpu {

int worker_main(int ordinal) {
  // A parent killed mid-job (a timeout, ^C) must not leave this process spinning a candidate's
  // endless kernel on the GPU, slowing every later measurement there.
  exit_when_orphaned();
  // Answers go to the original stdout; anything else written to stdout (a kernel's printf,
  // a library's chatter) goes to stderr instead.
  int answers = dup(1);
  dup2(2, 1);
  FILE* out = fdopen(answers, "w");
  if (!out) return 2;
  std::unique_ptr<Executor> executor;
  std::string init_error;
  std::string line;
  while (std::getline(std::cin, line)) {
    Outcome o;
    auto job = decode_job(line);
    if (!job) {
      o.failure = Failure{FailureKind::protocol, job.error().message, ""};
    } else if (job->kind == JobKind::device && !executor) {
      // The GPU's facts need the driver, not a context: doctor asks without claiming the GPU.
      auto info = device_info(ordinal);
      if (info) o.device = *info;
      else o.failure = Failure{FailureKind::driver, info.error().message, ""};
    } else {
      if (!executor && init_error.empty()) {
        auto e = Executor::create(ordinal);
        if (e) executor = std::move(*e);
        else init_error = e.error().message;
      }
      if (executor) o = executor->run(*job);
      else o.failure = Failure{FailureKind::driver, init_error, ""};
    }
    std::string reply = encode_outcome(o);
    fwrite(reply.data(), 1, reply.size(), out);
    fputc('\n', out);
    fflush(out);
    if (o.fatal) return 3;  // the context is gone; the parent starts a fresh worker
  }
  return 0;
}

}  // namespace ptxforge::gpu
