// ptxforge worker: the hidden subcommand that is the GPU worker process. This file is the one
// way into src/worker/ (the driver, the executor, the vendor libraries) from outside it; every
// other command reaches the GPU through gpu/worker_client.h.

#include <cstdlib>
#include <iostream>

#include "cli_parse.h"
#include "worker/worker_main.h"

namespace ptxforge::cli {

int cmd_worker(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "ptxforge worker: the isolated GPU worker that `run` starts; it reads jobs as JSON lines on stdin.\n"
                 "It is not meant to be run by hand.\n";
    return kExitOk;
  }
  int ordinal = 0;
  if (args.size() == 2 && args[0] == "--device") {
    char* end = nullptr;
    long v = std::strtol(args[1].c_str(), &end, 10);
    if (*end != '\0' || v < 0 || v > 1024) {
      std::cerr << "ptxforge worker: --device takes a GPU ordinal\n";
      return kExitUsage;
    }
    ordinal = static_cast<int>(v);
  } else if (!args.empty()) {
    std::cerr << "ptxforge worker: the only option is --device N\n";
    return kExitUsage;
  }
  return gpu::worker_main(ordinal);
}

}  // namespace ptxforge::cli
