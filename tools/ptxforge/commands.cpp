#include "commands.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <iterator>

#include "agent/hardware.h"
#include "ptx/parser.h"
#include "ptx/target.h"
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
      {"bench", "models × tasks × samples as one resumable run: results store, metrics, reports (report, export, merge)", cmd_bench},
      {"data", "training data: ISA dictionary, CUDA/PTX pairs, broken/fixed pairs, repair pairs, chat export (isa, pairs, mutate, fixit, export)", cmd_data},
      {"fixit", "let a model repair other sessions' failed kernels through the loop; verified repairs become training pairs", cmd_fixit},
      {"suite", "list, show and validate the task suite", cmd_suite},
      {"serve", "verification over HTTP: clients submit candidates, runs are stored and verified on GPUs or the CPU engine", cmd_serve},
      {"doctor", "report the GPU and the CUDA toolchain, and what is missing", cmd_doctor},
      {"worker", "the isolated GPU worker that run starts (internal)", cmd_worker},
      {"emu-worker", "the CPU engine's process that run --device cpu starts (internal)", cmd_emu_worker},
  };
  return table;
}

Result<std::string> read_input(const std::string& path) {
  if (path == "-") {
    std::string s((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return s;
  }
  // A folder opens as a stream that reads nothing, which would pass for an empty file.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{fmt::format("'{}' is a folder, not a file", path)};
  return read_file(path);
}

std::string default_arch(std::string_view ptx) {
  Diagnostics ignored;  // the module's problems are for check and ptxas to report
  return default_arch(ptx::parse(ptx, ignored));
}

std::string default_arch(const ptx::Module& m) {
  for (auto& t : m.target_names())
    if (ptx::Target::parse(t)) return t;
  auto hw = agent::find_hardware("");  // the GPU's architecture, or the sm_90a profile
  return hw ? hw->arch() : "sm_90a";
}

bool stdout_is_tty() { return isatty(1) == 1; }

}  // namespace ptxforge::cli
