// ptxforge run: one candidate through check -> assemble -> verify -> time -> prove, with a
// verdict per stage. Exit 0: verified (and timed) on a GPU, or verified on the CPU engine
// (--device cpu, or auto without a GPU; not timed); 1: the candidate failed a stage; 2: usage or
// environment (--device gpu without a GPU: the verdict then says the kernel was NOT verified).
#include <iostream>

#include <fmt/format.h>

#include "cli_parse.h"
#include "eval/pipeline.h"
#include "task/seeds.h"
#include "task/task_spec.h"
#include "util/text.h"

namespace ptxforge::cli {

int cmd_run(const std::vector<std::string>& args) {
  CLI::App app("Check, assemble, verify on the GPU, time and prove one candidate for a task", "run");
  std::string task_name, sizes = "all", arch, launch, seed_text, prove = "sass", device = "auto";
  std::vector<std::string> candidates;
  int seeds = 3;
  double timeout = 30;
  bool json = false, no_time = false, sanitize = false, trace = false, allow_suspicious = false, profile = false;
  app.add_option("task", task_name, "task folder, or a task name such as level1/vector_add")->required();
  app.add_option("candidates", candidates, "candidates: PTX with `// @launch` lines, or CUDA C++ (.cu); several run one "
                 "after another in one harness")->required();
  app.add_option("--sizes", sizes, "verify on the shown sizes only, or on all (held-back included)")
      ->check(CLI::IsMember({"shown", "all"}))->capture_default_str();
  app.add_option("--seeds", seeds, "input seeds per size set")->check(CLI::Range(1, 100))->capture_default_str();
  auto* seed_opt = app.add_option("--seed", seed_text,
                                  "base seed every input derives from (decimal, or hex with 0x); "
                                  "default: a fresh one per run, printed in the report, so that --seed reproduces it");
  app.add_option("--device", device,
                 "where verify runs: auto (a GPU where a driver is found, else the CPU engine), gpu or cpu (the CPU "
                 "engine: exact bounds, races, uninitialised reads; not timed)")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}))->capture_default_str();
  app.add_option("--arch", arch, "assemble for this target (default: the GPU's, else sm_90a)")->check(arch_validator());
  app.add_option("--launch", launch, "a TOML launch spec instead of the candidate's `// @launch` lines");
  app.add_option("--timeout", timeout, "seconds before a hanging verify is killed")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_flag("--no-time", no_time, "skip the timing stage");
  app.add_flag("--sanitize", sanitize, "also run the verify job under compute-sanitizer's memcheck, racecheck, synccheck and initcheck");
  app.add_option("--prove", prove,
                 "how required instructions are proven: sass (in the PTX, in the SASS, and counted executing in an "
                 "instrumented copy) or ncu (all that, and Nsight Compute must see each execute)")
      ->check(CLI::IsMember({"sass", "ncu"}))->capture_default_str();
  app.add_flag("--allow-suspicious", allow_suspicious,
               "let a time faster than the GPU's peaks, or over 10x the vendor library, pass as a flag");
  app.add_flag("--profile", profile,
               "profile a candidate that passed with Nsight Compute (occupancy and its limiter, DRAM/L2/SM throughput, "
               "pipes, warp stalls, bank conflicts, local memory), beside nvcc's reference kernel");
  app.add_flag("--json", json, "print one JSON array of result records (docs/json.md)");
  app.add_flag("--trace", trace, "print each stage's start and wall time on standard error");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  std::optional<uint64_t> seed;
  if (seed_opt->count() > 0) {
    auto s = task::parse_seed(seed_text);
    if (!s) {
      std::cerr << "ptxforge run: " << s.error().message << "\n";
      return kExitUsage;
    }
    seed = *s;
  }

  auto dir = task::find_task_dir(task_name);
  if (!dir) {
    std::cerr << "ptxforge run: " << dir.error().message << "\n";
    return kExitUsage;
  }
  auto task = task::load_task(*dir);
  if (!task) {
    std::cerr << task.error().message;
    return kExitUsage;
  }
  for (auto& c : candidates) {
    if (auto text = read_file(c); !text) {
      std::cerr << "ptxforge run: " << text.error().message << "\n";
      return kExitUsage;
    }
  }
  eval::RunOptions opts;
  opts.device = *eval::device_from_string(device);  // CLI11 let only auto, gpu or cpu through
  opts.held_back = sizes == "all";
  opts.seeds = seeds;
  opts.seed = seed ? *seed : task::fresh_seed();  // one for every candidate of this run
  opts.time = !no_time;
  opts.sanitize = sanitize;
  opts.allow_suspicious = allow_suspicious;
  opts.prove_ncu = prove == "ncu";
  opts.profile = profile;
  opts.arch = arch;
  opts.launch_path = launch;
  opts.verify_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
  eval::Pipeline pipeline;
  if (trace)
    pipeline.set_hooks({[](eval::StageId id) { std::cerr << fmt::format("trace: {} ...\n", eval::to_string(id)); },
                        [](const eval::StageResult& s, double seconds) {
                          std::cerr << fmt::format("trace: {} {} in {:.6f} s\n", eval::to_string(s.id),
                                                   eval::stage_status_name(s.status), seconds);
                        }});
  bool all_passed = true, any_failed = false;
  std::string records;  // --json: one array of records, whatever the number of candidates
  for (auto& candidate : candidates) {
    eval::RunRecord r = pipeline.run(*task, candidate, opts);
    if (json) records += (records.empty() ? "[\n" : ",\n") + eval::render_report_json(r);
    else std::cout << eval::render_report_text(r, stdout_is_tty()) << (candidates.size() > 1 ? "\n" : "");
    std::cout.flush();
    all_passed = all_passed && r.passed;
    for (auto& s : r.stages) any_failed = any_failed || s.status == eval::StageStatus::failed;
  }
  if (json) std::cout << records << "\n]\n";
  if (candidates.size() > 1 && !json) {
    std::cout << fmt::format("worker: {} started for {} candidates", pipeline.worker_starts(), candidates.size());
    if (pipeline.engine_starts()) std::cout << fmt::format("; CPU engine: {} started", pipeline.engine_starts());
    std::cout << "\n";
  }
  if (all_passed) return kExitOk;
  return any_failed ? kExitInputErrors : kExitUsage;
}

}  // namespace ptxforge::cli
