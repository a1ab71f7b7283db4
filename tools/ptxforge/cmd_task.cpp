// ptxforge task new: a task folder from the user's own CUDA kernel (see task/task_new.h).
#include <iostream>

#include <fmt/format.h>

#include "cli_parse.h"
#include "task/task_new.h"

namespace ptxforge::cli {

int cmd_task(const std::vector<std::string>& args) {
  CLI::App app("Create a task from your own CUDA kernel, to let a model compile it and check it against nvcc", "task");
  app.require_subcommand(1);
  auto* create = app.add_subcommand("new", "draft <dir>/task.toml, reference.cu and a starting solution.ptx");
  std::string dir, cu, entry;
  create->add_option("dir", dir, "the new task's folder")->required();
  create->add_option("--from-cuda", cu, "the CUDA file holding the kernel")->required();
  create->add_option("--entry", entry, "the kernel's name as written in the source (extern \"C\" or not)")->required();
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto made = task::create_task_from_cuda(dir, cu, entry);
  if (!made) {
    std::cerr << "ptxforge task new: " << made.error().message << "\n";
    return kExitUsage;
  }
  std::cout << fmt::format("created {}\n"
                           "next: check the lines marked CHECK (sizes, element counts, roles, the reference launch), then\n"
                           "  ptxforge run {} {}/solution.ptx            # nvcc's PTX as a first candidate\n"
                           "  ptxforge compile {} --model <provider:model>\n",
                           *made, dir, dir, dir);
  return kExitOk;
}

}  // namespace ptxforge::cli
