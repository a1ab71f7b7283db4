#include "util/orphan_watch.h"

#include <unistd.h>

#include <thread>

namespace ptxforge {

void exit_when_orphaned(std::chrono::milliseconds period) {
  const pid_t parent = getppid();
  if (parent <= 1) _exit(kOrphanExit);  // already orphaned before the watch began
  std::thread([parent, period] {
    for (;;) {
      std::this_thread::sleep_for(period);
      // _exit, not exit: no destructors or atexit handlers racing the main thread, which may
      // be inside the driver; the kernel reclaims the GPU context with the process.
      if (getppid() != parent) _exit(kOrphanExit);
    }
  }).detach();
}

}  // namespace ptxforge
