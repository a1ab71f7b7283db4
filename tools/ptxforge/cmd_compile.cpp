// ptxforge compile: the model as compiler. Starts (or, with --resume, continues) a session:
// the model writes the PTX, the harness judges it, the judgement goes back to the model.
// Exit 0: a kernel was verified on a GPU; 1: none was; 2: usage or environment, or the
// session waits for a manual reply.
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "agent/compile.h"
#include "agent/hardware.h"
#include "cli_parse.h"
#include "task/seeds.h"
#include "task/task_spec.h"
#include "util/text.h"

namespace ptxforge::cli {

int cmd_compile(const std::vector<std::string>& args) {
  CLI::App app("Let a model write the PTX for a task: rounds of reply, verdict and feedback until it is verified", "compile");
  std::string task_name, model, mode = "implement", knowledge = "templates", out, resume_dir, hardware, arch, price,
                                seed_text, target_text, gpus_text = "all";
  int rounds = 8, samples = 1, seeds = 3, max_tokens = 32768;
  double temperature = 0.2;
  bool fewshot = false, no_cache = false, no_time = false, shown_only = false, allow_suspicious = false,
       no_sanitize = false, profile = false;
  std::vector<std::string> omit;
  app.add_option("task", task_name, "task folder or name (not needed with --resume)");
  app.add_option("--model", model, "openai:<model>, anthropic:<model>, cmd:<command line>, replay:<file> or manual");
  app.add_option("--mode", mode, "implement (from the task's description) or translate (from its CUDA source)")
      ->check(CLI::IsMember({"implement", "translate"}))->capture_default_str();
  app.add_option("--knowledge", knowledge, "none, hardware, templates, contracts or full")
      ->check(CLI::IsMember({"none", "hardware", "templates", "contracts", "full"}))->capture_default_str();
  app.add_flag("--fewshot-nvcc", fewshot, "include the PTX nvcc emits for the reference kernel");
  app.add_option("--omit", omit, "leave a prompt part out, for ablations: rules, format (repeatable)")
      ->check(CLI::IsMember({"rules", "format"}));
  app.add_option("--rounds", rounds, "rounds per sample")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--samples", samples, "independent trajectories; the best verified kernel is kept")->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--target-speedup", target_text,
                 "keep improving a verified kernel until it is this much faster than nvcc (1.2x) or the library "
                 "(1.0x:library), or the rounds run out; the best verified round is kept (default: stop at the first verified)");
  app.add_option("--gpus", gpus_text, "GPUs the samples' candidates spread over: all, or ordinals such as 0,1")
      ->capture_default_str();
  app.add_option("--out", out, "session folder (default: sessions/<task>-<time>)");
  app.add_option("--resume", resume_dir, "continue the session in this folder");
  app.add_option("--hardware", hardware, "describe this hardware profile instead of the GPU (h200)");
  app.add_option("--arch", arch, "target (default: the GPU's, else sm_90a)")->check(arch_validator());
  app.add_option("--temperature", temperature, "sampling temperature")->capture_default_str();
  app.add_option("--max-tokens", max_tokens, "reply token limit")->capture_default_str();
  app.add_option("--seeds", seeds, "input seeds per size set when verifying")->capture_default_str();
  auto* seed_opt = app.add_option("--seed", seed_text,
                                  "base seed of the session (decimal, or hex with 0x): each round's "
                                  "seed derives from it; default: a fresh seed every round");
  app.add_option("--price", price, "USD per million prompt,completion tokens, for the cost line (e.g. 2.5,10)");
  app.add_flag("--no-cache", no_cache, "always ask the model, even for a request made before");
  app.add_flag("--no-time", no_time, "verify but do not time");
  app.add_flag("--shown-sizes", shown_only, "verify on the shown sizes only");
  app.add_flag("--allow-suspicious", allow_suspicious,
               "let a time faster than the GPU's peaks, or over 10x the vendor library, pass as a flag");
  app.add_flag("--no-sanitize", no_sanitize,
               "do not run each newly verified kernel under compute-sanitizer (memcheck, racecheck, synccheck, initcheck)");
  app.add_flag("--profile", profile,
               "profile each verified kernel with Nsight Compute and tell the model why it is as fast as it is: occupancy "
               "and its limiter, DRAM/L2/SM throughput, pipes, warp stalls, bank conflicts, local memory; beside nvcc's kernel");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  auto gpus = agent::parse_gpu_list(gpus_text);
  if (!gpus) {
    std::cerr << "ptxforge compile: --gpus: " << gpus.error().message << "\n";
    return kExitUsage;
  }
  std::pair<double, agent::SpeedupBase> target{0, agent::SpeedupBase::nvcc};
  if (!target_text.empty()) {
    auto t = agent::parse_target_speedup(target_text);
    if (!t) {
      std::cerr << "ptxforge compile: --target-speedup: " << t.error().message << "\n";
      return kExitUsage;
    }
    target = *t;
  }
  agent::GpuPool pool = agent::GpuPool::for_ordinals(agent::resolve_gpus(*gpus));
  std::optional<uint64_t> seed;
  if (seed_opt->count() > 0) {
    auto s = task::parse_seed(seed_text);
    if (!s) {
      std::cerr << "ptxforge compile: " << s.error().message << "\n";
      return kExitUsage;
    }
    seed = *s;
  }

  Result<agent::CompileResult> res = Error{""};
  if (!resume_dir.empty()) {
    if (!task_name.empty() || !model.empty() || seed) {
      std::cerr << "ptxforge compile: --resume continues a session with the task, model and seed it was started with; "
                   "give only the session folder\n";
      return kExitUsage;
    }
    res = agent::resume(resume_dir, llm::make_provider, pool);
  } else {
    if (task_name.empty() || model.empty()) {
      std::cerr << "ptxforge compile: give a task and --model (or --resume <session>)\n";
      return kExitUsage;
    }
    auto dir = task::find_task_dir(task_name);
    if (!dir) {
      std::cerr << "ptxforge compile: " << dir.error().message << "\n";
      return kExitUsage;
    }
    agent::CompileOptions o;
    o.task_dir = *dir;
    o.model = model;
    o.prompt.mode = mode == "translate" ? agent::Mode::translate : agent::Mode::implement;
    o.prompt.knowledge = *agent::parse_knowledge_level(knowledge);
    o.prompt.fewshot_nvcc = fewshot;
    for (auto& part : omit) {
      if (part == "rules") o.prompt.role = false;
      if (part == "format") o.prompt.format = false;
    }
    o.hardware_profile = hardware;
    if (arch.empty()) {
      auto hw = agent::find_hardware(hardware);
      arch = hw ? hw->arch() : "sm_90a";
    }
    o.prompt.arch = arch;
    o.run.arch = arch;
    o.rounds = rounds;
    o.samples = samples;
    o.target_speedup = target.first;
    o.target_base = target.second;
    o.cache = !no_cache;
    o.temperature = temperature;
    o.max_tokens = max_tokens;
    o.run.seeds = seeds;
    o.run.seed = seed;
    o.run.time = !no_time;
    o.run.held_back = !shown_only;
    o.run.allow_suspicious = allow_suspicious;
    o.run.sanitize = !no_sanitize;
    o.run.profile = profile;
    if (!price.empty()) {
      auto parts = split(price, ',');
      char* end = nullptr;
      std::string in = parts.size() == 2 ? std::string(trim(parts[0])) : "", out_price = parts.size() == 2 ? std::string(trim(parts[1])) : "";
      double a = std::strtod(in.c_str(), &end);
      bool ok = !in.empty() && *end == '\0';
      double b = std::strtod(out_price.c_str(), &end);
      ok = ok && !out_price.empty() && *end == '\0';
      if (!ok) {
        std::cerr << "ptxforge compile: --price takes two numbers, e.g. 2.5,10\n";
        return kExitUsage;
      }
      o.prices = {a, b, true};
    }
    // Every option is checked before a folder is made, so a typo leaves nothing behind.
    if (auto s = agent::validate_options(o); !s) {
      std::cerr << "ptxforge compile: " << s.error().message << "\n";
      return kExitUsage;
    }
    if (out.empty()) {
      std::time_t now = std::time(nullptr);
      char stamp[32];
      std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
      auto claimed = agent::claim_session_dir(
          fmt::format("sessions/{}-{}", std::filesystem::path(*dir).filename().string(), stamp));
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
