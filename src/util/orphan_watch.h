// A child that outlives its parent must not go on holding what the parent gave it: the GPU
// worker of a killed `ptxforge run` would otherwise spin an endless kernel on the GPU for ever,
// and every later measurement on that GPU would be slowed by it. exit_when_orphaned starts a
// detached thread that ends the process (exit status kOrphanExit) once the parent it had at
// the call is gone. It watches the process's parent, not a thread's, so it does not fire when
// the thread that started the child ends (PR_SET_PDEATHSIG would).
#pragma once

#include <chrono>

namespace ptxforge {

inline constexpr int kOrphanExit = 4;

void exit_when_orphaned(std::chrono::milliseconds period = std::chrono::milliseconds(200));

}  // namespace ptxforge
