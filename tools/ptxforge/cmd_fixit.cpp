// ptxforge fixit: a (stronger) model repairs the kernels other sessions failed on, through the
// normal loop; the repairs that verify are written as training pairs (docs/data.md).
// Exit 0 when every repair session ran (whatever it found), 2 on usage or environment errors.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "agent/gpu_pool.h"
#include "agent/options_cli.h"
#include "cli_parse.h"
#include "data/repair.h"

namespace ptxforge::cli {

int cmd_fixit(const std::vector<std::string>& args) {
  CLI::App app("Let a model repair the failed kernels of compile sessions; the repairs that verify become training pairs",
               "fixit");
  std::vector<std::string> roots;
  std::string out = "fixit-sessions", output, gpus_text = "all";
  bool keep_unverified = false;
  data::RepairOptions o;
  app.add_option("sessions", roots, "compile sessions, or folders holding them (a bench's)")->required();
  // The loop's options a repair takes, from the option table; a repair's own defaults shown.
  agent::CompileOptions start = agent::default_options();
  start.rounds = o.rounds;
  agent::CliOptions loop(app,
                         {agent::Option::model, agent::Option::rounds, agent::Option::seed, agent::Option::temperature,
                          agent::Option::max_tokens, agent::Option::device},
                         start);
  loop.flag(agent::Option::model)->required();
  app.add_option("--out", out, "folder of the repair sessions (a folder holding some already is continued)")
      ->capture_default_str();
  app.add_option("-o,--output", output, "the pairs, JSONL (default: standard output)");
  app.add_flag("--keep-unverified", keep_unverified,
               "where nothing verified a repair (no GPU, and --device gpu or a kernel the CPU engine does not run), keep one "
               "that assembles when the failed kernel did not (marked \"verified\": false)");
  app.add_option("--gpus", gpus_text, "GPUs to verify on: all, or ordinals such as 0,1")->capture_default_str();
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto given = loop.apply();
  if (!given) {
    std::cerr << "ptxforge fixit: " << given.error().message << "\n";
    return kExitUsage;
  }
  if (given->model == "manual") {
    std::cerr << "ptxforge fixit: --model manual waits for a reply by hand; run `ptxforge compile --model manual` on one task instead\n";
    return kExitUsage;
  }
  auto gpus = agent::parse_gpu_list(gpus_text);
  if (!gpus) {
    std::cerr << "ptxforge fixit: --gpus: " << gpus.error().message << "\n";
    return kExitUsage;
  }
  o.model = given->model;
  o.rounds = given->rounds;
  o.out = out;
  o.keep_unverified = keep_unverified;
  o.temperature = given->temperature;
  o.max_tokens = given->max_tokens;
  o.seed = given->run.seed;
  if (loop.given(agent::Option::device)) o.device = given->run.device;  // else each failed session's own
  for (auto& r : roots)
    if (!std::filesystem::is_directory(r)) {
      std::cerr << fmt::format("ptxforge fixit: {} is not a folder (give compile sessions or folders holding them)\n", r);
      return kExitUsage;
    }
  std::vector<std::string> skipped;
  auto failures = data::find_failures(roots, skipped);
  for (auto& s : skipped) std::cerr << "fixit: skipped " << s << "\n";
  agent::GpuPool pool = agent::GpuPool::for_ordinals(agent::resolve_gpus(*gpus));
  data::RepairStats st;
  auto pairs = data::repair_failures(failures, o, llm::make_provider, pool, st, std::cerr);
  if (!pairs) {
    std::cerr << "ptxforge fixit: " << pairs.error().message << "\n";
    return kExitUsage;
  }
  std::cerr << fmt::format("fixit: {} failed trajectories; repaired: {} verified ({} of them on the CPU engine), {} assembled "
                           "only (kept: {}); not repaired: {}; errors: {}\n",
                           st.failures, st.verified, st.verified_on_engine, st.assembled_only, pairs->size(), st.not_repaired,
                           st.errors);
  if (st.without_gpu > 0 && !keep_unverified)
    std::cerr << fmt::format("fixit: {} repair sessions ran without a GPU, so nothing they wrote could be verified; "
                             "--keep-unverified keeps repairs that assemble where the failed kernel did not\n",
                             st.without_gpu);
  std::string body;
  for (auto& l : *pairs) body += l + "\n";
  if (output.empty() || output == "-") {
    std::cout << body;
  } else if (auto w = write_file(output, body); !w) {
    std::cerr << fmt::format("ptxforge fixit: cannot write {}: {}\n", output, w.error().message);
    return kExitUsage;
  }
  return st.errors > 0 ? kExitUsage : kExitOk;
}

}  // namespace ptxforge::cli
