// ptxforge fixit: a (stronger) model repairs the kernels other sessions failed on, through the
// normal loop; the repairs that verify are written as training pairs (docs/data.md).
// Exit 0 when every repair session ran (whatever it found), 2 on usage or environment errors.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "agent/gpu_pool.h"
#include "cli_parse.h"
#include "data/repair.h"
#include "task/seeds.h"

namespace ptxforge::cli {

int cmd_fixit(const std::vector<std::string>& args) {
  CLI::App app("Let a model repair the failed kernels of compile sessions; the repairs that verify become training pairs",
               "fixit");
  std::vector<std::string> roots;
  std::string model, out = "fixit-sessions", output, seed_text, gpus_text = "all";
  int rounds = 3, max_tokens = 32768;
  double temperature = 0.2;
  bool keep_unverified = false;
  app.add_option("sessions", roots, "compile sessions, or folders holding them (a bench's)")->required();
  app.add_option("--model", model, "the repairing model: openai:<model>, anthropic:<model>, cmd:<command line> or replay:<file>")
      ->required();
  app.add_option("--out", out, "folder of the repair sessions (a folder holding some already is continued)")
      ->capture_default_str();
  app.add_option("-o,--output", output, "the pairs, JSONL (default: standard output)");
  app.add_option("--rounds", rounds, "rounds per repair")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_flag("--keep-unverified", keep_unverified,
               "where there is no GPU, keep a repair that assembles when the failed kernel did not (marked \"verified\": false)");
  auto* seed_opt = app.add_option("--seed", seed_text, "base seed of the repair sessions (default: fresh every round)");
  app.add_option("--gpus", gpus_text, "GPUs to verify on: all, or ordinals such as 0,1")->capture_default_str();
  app.add_option("--temperature", temperature, "sampling temperature")->capture_default_str();
  app.add_option("--max-tokens", max_tokens, "reply token limit")->capture_default_str();
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (model == "manual") {
    std::cerr << "ptxforge fixit: --model manual waits for a reply by hand; run `ptxforge compile --model manual` on one task instead\n";
    return kExitUsage;
  }
  auto gpus = agent::parse_gpu_list(gpus_text);
  if (!gpus) {
    std::cerr << "ptxforge fixit: --gpus: " << gpus.error().message << "\n";
    return kExitUsage;
  }
  data::RepairOptions o;
  o.model = model;
  o.rounds = rounds;
  o.out = out;
  o.keep_unverified = keep_unverified;
  o.temperature = temperature;
  o.max_tokens = max_tokens;
  if (seed_opt->count() > 0) {
    auto s = task::parse_seed(seed_text);
    if (!s) {
      std::cerr << "ptxforge fixit: " << s.error().message << "\n";
      return kExitUsage;
    }
    o.seed = *s;
  }
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
  std::cerr << fmt::format("fixit: {} failed trajectories; repaired: {} verified, {} assembled only (kept: {}); not repaired: {}; "
                           "errors: {}\n",
                           st.failures, st.verified, st.assembled_only, pairs->size(), st.not_repaired, st.errors);
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
