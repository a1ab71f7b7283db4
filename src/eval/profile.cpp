#include "eval/profile.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/sanitize.h"
#include "gpu/worker_client.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {

namespace {

StageResult verdict(StageStatus s, std::string summary) {
  StageResult r;
  r.id = StageId::profile;
  r.status = s;
  r.summary = std::move(summary);
  return r;
}

std::string pct(const std::optional<double>& v) { return v ? fmt::format("{:.0f}%", *v) : "?"; }

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
  return fmt::format("{:.0f} bytes", b);
}

std::string one_line(const toolchain::ProfileSummary& s) {
  std::string stall = s.top_stalls.empty() ? "" : fmt::format("; stalls mostly {} {:.0f}%", s.top_stalls[0].first, 100 * s.top_stalls[0].second);
  return fmt::format("`{}` {:.1f} us: occupancy {}, DRAM {}, L2 {}, SM {}, tensor pipe {}, FMA pipe {}{}", s.kernel, s.duration_us,
                     pct(s.achieved_occupancy), pct(s.dram_pct), pct(s.l2_pct), pct(s.sm_pct), pct(s.tensor_pct), pct(s.fma_pct), stall);
}

}  // namespace

StageResult profile(StageContext& ctx) {
  RunRecord& r = ctx.record;
  r.profile.emplace();
  auto skip = [&](const std::string& why) {
    r.profile->note = "not profiled: " + why;
    return verdict(StageStatus::skipped, r.profile->note);
  };
  std::optional<std::string> ncu = ctx.opts.ncu.empty() ? find_cuda_tool("ncu") : ctx.opts.ncu;
  if (ctx.on_engine) return skip("verified on the CPU engine, which has no profiler");
  if (!ncu) return skip("ncu is not installed");
  if (ctx.worker_argv.empty()) return skip("no worker process to profile");
  if (!ctx.job) return skip("the kernel was not verified");
  // The largest shown size set: the one whose time says most about the kernel.
  const task::SizeSet* largest = shown_size_set_by_bytes(ctx.task, /*largest=*/true);
  if (!largest) return skip("the task shows no size set");
  gpu::Job job = *ctx.job;
  job.kind = gpu::JobKind::verify;
  job.seeds = 1;
  job.size_sets = {largest->name};
  job.executed_slots = 0;
  std::vector<std::string> kernels;
  for (auto& l : ctx.candidate.launch.launches)
    if (std::find(kernels.begin(), kernels.end(), l.entry) == kernels.end()) kernels.push_back(l.entry);
  const std::string& reference = ctx.task.reference.entry;
  bool shared_name = std::find(kernels.begin(), kernels.end(), reference) != kernels.end();
  if (!shared_name) kernels.push_back(reference);
  int launches = static_cast<int>(ctx.candidate.launch.launches.size()) + 1;  // the reference runs once per case, first
  std::string report = ctx.work_dir + "/profile";
  gpu::WorkerClient profiled(toolchain::ncu_metrics_argv(*ncu, report, kernels, launches, ctx.worker_argv));
  gpu::Outcome out = profiled.run(job, ctx.opts.verify_timeout * 20);  // ncu replays each launch once per metric pass
  profiled.finish(std::chrono::seconds(120));
  if (out.failure) return skip(fmt::format("the profiled run failed: {}: {}", to_string(out.failure->kind), out.failure->message));
  auto rows = toolchain::read_raw_metrics(*ncu, report + ".ncu-rep");
  if (!rows) return skip(rows.error().message);
  // The reference runs before the candidate on a case (its outputs are the expected ones): by
  // name where the names differ, else the first launch.
  for (size_t i = 0; i < rows->size(); ++i) {
    bool is_reference = shared_name ? i == 0 : (*rows)[i].kernel == reference;
    (is_reference ? r.profile->reference : r.profile->candidate).push_back(toolchain::summarise_profile((*rows)[i]));
  }
  if (r.profile->candidate.empty()) return skip("ncu profiled none of the candidate's launches");
  r.profile->size_set = largest->name;
  r.profile->note = fmt::format("Nsight Compute, clocks as timed, size set '{}', 1 seed: {} candidate launch(es){}", largest->name,
                                r.profile->candidate.size(), r.profile->reference.empty() ? "" : " and the reference kernel");
  const auto& first = r.profile->candidate.front();
  return verdict(StageStatus::passed, fmt::format("occupancy {}, DRAM {}, SM {}{}", pct(first.achieved_occupancy), pct(first.dram_pct),
                                                  pct(first.sm_pct), first.top_stalls.empty() ? "" : ", stalls mostly " + first.top_stalls[0].first));
}

std::string render_profile(const ProfileReport& p) {
  if (p.candidate.empty()) return "";
  std::string o = fmt::format("## Profile ({})\n", p.note);
  for (auto& s : p.candidate) {
    o += fmt::format("Your kernel `{}` ({:.1f} us, {} registers per thread, {} threads per block, {} bytes of shared memory per block):\n",
                     s.kernel, s.duration_us, s.registers, s.block_size, s.shared_bytes_per_block);
    o += fmt::format("- occupancy: {} of the SM's warp slots active, {} possible", pct(s.achieved_occupancy), pct(s.theoretical_occupancy));
    if (!s.occupancy_limiter.empty()) o += "; limited by " + s.occupancy_limiter;
    o += "\n";
    o += fmt::format("- throughput, % of peak: DRAM {}, L2 {}, SM {}; pipes busy: tensor {}, FMA {}\n", pct(s.dram_pct), pct(s.l2_pct),
                     pct(s.sm_pct), pct(s.tensor_pct), pct(s.fma_pct));
    if (!s.top_stalls.empty()) {
      std::vector<std::string> parts;
      for (auto& [why, share] : s.top_stalls) parts.push_back(fmt::format("{} {:.0f}%", why, 100 * share));
      o += fmt::format("- warps stall mostly on: {}\n", fmt::join(parts, "; "));
    }
    if (s.shared_wavefronts_per_request && *s.shared_wavefronts_per_request >= 1.2)
      o += fmt::format("- shared memory: {:.1f} wavefronts per request (1 without bank conflicts): conflicts serialise the accesses\n",
                       *s.shared_wavefronts_per_request);
    if (s.local_bytes && *s.local_bytes > 0)
      o += fmt::format("- local memory: {} of traffic (register spills or indexed arrays)\n", bytes_text(*s.local_bytes));
  }
  for (auto& s : p.reference) o += "nvcc's reference kernel: " + one_line(s) + "\n";
  return o;
}

}  // namespace ptxforge::eval
