// Names the buffer behind an out-of-bounds fault. After an illegal address the worker's
// context is dead and the fault's address is unknown, so the failing case is run again in a
// fresh worker once per buffer that had guard pages, each time with that one buffer's guard
// windows mapped (and filled with canaries). The buffer is named only when exactly one such
// run completes without a fault and every other one faults again: the faulting accesses then
// all lay in that buffer's guard windows, within kGuardWindow of its ends (gpu/guard_layout.h).
// Anything else (several buffers overrun, a wild address, a run that hangs or fails for
// another reason, a worker without guard pages) names none. Parent side: jobs only.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "gpu/worker_client.h"

namespace ptxforge::gpu {

struct LocatedFault {
  std::string buffer;
  std::vector<std::string> problems;  // what the canaries in its mapped windows saw (writes; reads leave none)
  int runs = 0;                       // locate jobs sent
};

// `verify_job`: the job that faulted; `f`: its failure (out_of_bounds, with the case and the
// guarded buffers). Sends at most one locate job per guarded buffer.
std::optional<LocatedFault> locate_out_of_bounds(JobRunner& worker, const Job& verify_job, const Failure& f,
                                                 std::chrono::milliseconds timeout);

// "out-of-bounds access near buffer 'c' (write past the end of 'c': ...): <the driver's error>"
void name_fault_buffer(Failure& f, const LocatedFault& where);

}  // namespace ptxforge::gpu
