#include "commands.h"

#include <unistd.h>

#include <iostream>
#include <iterator>

#include "util/text.h"

namespace ptxforge::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"check", "parse and validate PTX; with --ptxas also assemble and compare verdicts", cmd_check},
      {"assemble", "assemble PTX with ptxas or nvJitLink: errors, resources, cubin", cmd_assemble},
      {"fmt", "print canonical PTX; retarget, change .version, or add a missing header", cmd_fmt},
      {"run", "check, assemble, verify on the GPU, time and prove a candidate for a task", cmd_run},
      {"compile", "let a model write the PTX for a task, with feedback rounds until it is verified", cmd_compile},
      {"task", "create a task from your own CUDA kernel (task new)", cmd_task},
      {"suite", "list, show and validate the task suite", cmd_suite},
      {"doctor", "report the GPU and the CUDA toolchain, and what is missing", cmd_doctor},
      {"worker", "the isolated GPU worker that run starts (internal)", cmd_worker},
  };
  return table;
}

Result<std::string> read_input(const std::string& path) {
  if (path == "-") {
    std::string s((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return s;
  }
  return read_file(path);
}

bool stdout_is_tty() { return isatty(1) == 1; }

}  // namespace ptxforge::cli
