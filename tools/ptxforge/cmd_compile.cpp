// ptxforge compile: the model as compiler. Starts (or, with --resume, continues) a session:
// the model writes the PTX, the harness judges it, the judgement goes back to the model.
// Exit 0: a kernel was verified on a GPU; 1: none was; 2: usage or environment, or the
// session waits for a manual reply.
#include <ctime>
#include <iostream>

#include "agent/compile.h"
#include "agent/options_cli.h"
#include "cli_parse.h"
#include "task/task_spec.h"

namespace ptxforge::cli {

int cmd_compile(const std::vector<std::string>& args) {
  CLI::App app("Let a model write the PTX for a task: rounds of reply, verdict and feedback until it is verified", "compile");
  std::string task_name, out, resume_dir, gpus_text = "all";
  app.add_option("task", task_name, "task folder or name (not needed with --resume)");
  // Every option of the loop, from the option table (agent/options.h).
  agent::CliOptions loop(app, agent::cli_options(), agent::default_options());
  app.add_option("--gpus", gpus_text, "GPUs the samples' candidates spread over: all, or ordinals such as 0,1")
      ->capture_default_str();
  app.add_option("--out", out, "session folder (default: sessions/<task>-<time>)");
  app.add_option("--resume", resume_dir, "continue the session in this folder");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto given = loop.apply();
  if (!given) {
    std::cerr << "ptxforge compile: " << given.error().message << "\n";
    return kExitUsage;
  }
  auto gpus = agent::parse_gpu_list(gpus_text);
  if (!gpus) {
    std::cerr << "ptxforge compile: --gpus: " << gpus.error().message << "\n";
    return kExitUsage;
  }
  agent::GpuPool pool = agent::GpuPool::for_ordinals(agent::resolve_gpus(*gpus));

  Result<agent::CompileResult> res = Error{""};
  if (!resume_dir.empty()) {
    if (!task_name.empty() || loop.given(agent::Option::model) || loop.given(agent::Option::seed)) {
      std::cerr << "ptxforge compile: --resume continues a session with the task, model and seed it was started with; "
                   "give only the session folder\n";
      return kExitUsage;
    }
    res = agent::resume(resume_dir, llm::make_provider, pool);
  } else {
    if (task_name.empty() || given->model.empty()) {
      std::cerr << "ptxforge compile: give a task and --model (or --resume <session>)\n";
      return kExitUsage;
    }
    auto dir = task::find_task_dir(task_name);
    if (!dir) {
      std::cerr << "ptxforge compile: " << dir.error().message << "\n";
      return kExitUsage;
    }
    agent::CompileOptions o = *given;
    o.task_dir = *dir;
    agent::resolve_arch(o);  // without --arch: the hardware profile's, else the GPU's, else sm_90a
    // Every option is checked before a folder is made, so a typo leaves nothing behind.
    if (auto s = agent::validate_options(o); !s) {
      std::cerr << "ptxforge compile: " << s.error().message << "\n";
      return kExitUsage;
    }
    if (out.empty()) {
      auto claimed = agent::claim_session_dir(agent::default_session_dir(*dir, std::time(nullptr)));
      if (!claimed) {
        std::cerr << "ptxforge compile: " << claimed.error().message << "\n";
        return kExitUsage;
      }
      out = *claimed;
    }
    o.out = out;
    res = agent::compile(o, llm::make_provider, pool);
  }
  if (!res) {
    std::cerr << "ptxforge compile: " << res.error().message << "\n";
    return kExitUsage;
  }
  std::cout << res->summary();
  if (res->status == agent::SessionStatus::verified) return kExitOk;
  if (res->status == agent::SessionStatus::pending || res->status == agent::SessionStatus::stopped ||
      res->status == agent::SessionStatus::assembled_not_verified)
    return kExitUsage;
  return kExitInputErrors;
}

}  // namespace ptxforge::cli
