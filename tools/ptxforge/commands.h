// The subcommand table of the ptxforge CLI, and helpers the commands share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptx/ast.h"
#include "util/result.h"

namespace ptxforge::cli {

// Exit codes: the input is fine / the input has errors / usage or environment problem.
constexpr int kExitOk = 0;
constexpr int kExitInputErrors = 1;
constexpr int kExitUsage = 2;

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const std::vector<std::string>& args);  // args after the subcommand name
};

const std::vector<Command>& commands();

int cmd_check(const std::vector<std::string>& args);
int cmd_assemble(const std::vector<std::string>& args);
int cmd_fmt(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_doctor(const std::vector<std::string>& args);
int cmd_suite(const std::vector<std::string>& args);
int cmd_worker(const std::vector<std::string>& args);
int cmd_emu_worker(const std::vector<std::string>& args);
int cmd_compile(const std::vector<std::string>& args);
int cmd_task(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_data(const std::vector<std::string>& args);
int cmd_fixit(const std::vector<std::string>& args);
int cmd_serve(const std::vector<std::string>& args);

}  // namespace ptxforge::cli

namespace ptxforge::toolchain {
struct AssembleResult;
}

namespace ptxforge::cli {

// One line per function: registers, barriers, memory, spills (cmd_assemble.cpp).
std::string resources_table(const toolchain::AssembleResult& r);

// The architecture to assemble a module for when none is given: the module's own .target,
// else the local GPU's, else sm_90a.
std::string default_arch(std::string_view ptx);
std::string default_arch(const ptx::Module& m);  // already parsed

// Reads a PTX file, or stdin for "-".
Result<std::string> read_input(const std::string& path);
bool stdout_is_tty();
// Runs a CLI11 app over args; returns -1 to continue, else the exit code (help, usage error).
template <typename App>
int parse_args(App& app, const std::vector<std::string>& args);

}  // namespace ptxforge::cli
