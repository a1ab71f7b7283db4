// ptxforge emu-worker: the hidden subcommand that is the CPU engine's process. This file is
// the one way into src/emu/ from outside it (through emu/emu_main.h); every other command
// reaches the engine through gpu::WorkerClient on gpu::emu_worker_argv().

#include <iostream>

#include "cli_parse.h"
#include "emu/emu_main.h"

namespace ptxforge::cli {

int cmd_emu_worker(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "ptxforge emu-worker: the CPU engine's process that `run --device cpu` starts; it reads jobs as JSON\n"
                 "lines on stdin. It is not meant to be run by hand.\n";
    return kExitOk;
  }
  if (!args.empty()) {
    std::cerr << "ptxforge emu-worker: takes no options\n";
    return kExitUsage;
  }
  return emu::emu_worker_main();
}

}  // namespace ptxforge::cli
