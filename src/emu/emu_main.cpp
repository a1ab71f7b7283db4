// The emu-worker process: the CPU engine behind the worker protocol. The engine runs hostile
// PTX with new code of its own; in a child process, a bug in it (a stack overflow, a runaway
// allocation) costs one job, and gpu::WorkerClient restarts the child as it does the GPU
// worker (docs/emu.md section 1).
#include "emu/emu_main.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "emu/engine.h"
#include "emu/executor.h"
#include "gpu/protocol.h"
#include "util/sanitizer.h"
#include "util/orphan_watch.h"

namespace ptxforge::emu {

namespace {

// The child's address space: the engine's own limits (1 GiB of emulated buffers per job,
// docs/emu.md section 8) with room for the host copies, the shadow state and the threads.
constexpr rlim_t kAddressSpace = rlim_t{8} << 30;

void limit_address_space() {
  if constexpr (kAddressSanitizer) return;  // its shadow memory cannot live under RLIMIT_AS
  struct rlimit r {};
  if (getrlimit(RLIMIT_AS, &r) != 0) return;
  if (r.rlim_max != RLIM_INFINITY && r.rlim_max < kAddressSpace) return;  // already tighter
  r.rlim_cur = kAddressSpace;
  setrlimit(RLIMIT_AS, &r);  // best effort: WorkerClient's timeout still bounds the job
}

}  // namespace

int emu_worker_main() {
  // A parent killed mid-job must not leave this process interpreting a kernel for ever.
  exit_when_orphaned();
  limit_address_space();
  // Answers go to the original stdout; anything else written there goes to stderr instead.
  int answers = dup(1);
  dup2(2, 1);
  FILE* out = fdopen(answers, "w");
  if (!out) return 2;
  Executor executor(&Machine::create);
  std::string line;
  while (std::getline(std::cin, line)) {
    gpu::Outcome o;
    auto job = gpu::decode_job(line);
    if (!job) o.failure = gpu::Failure{gpu::FailureKind::protocol, job.error().message, ""};
    else o = executor.run(*job);
    std::string reply = gpu::encode_outcome(o);
    fwrite(reply.data(), 1, reply.size(), out);
    fputc('\n', out);
    fflush(out);
  }
  return 0;
}

}  // namespace ptxforge::emu
