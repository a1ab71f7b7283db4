// The pipeline behind a device slot (verifier.h). The candidate's text is written into the
// slot's own private folder under a fixed name, never a name a client chose, and removed once
// the run is over; the pipeline's scratch (cubin, PTX of a .cu) lives in its own temporary
// folder. Whatever throws or fails on the server's side becomes a record that says so.
#include "serve/verifier.h"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "gpu/worker_client.h"
#include "serve/model_view.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::serve {

std::string_view to_string(SlotKind k) { return k == SlotKind::gpu ? "gpu" : "cpu"; }

bool runs_on(eval::Device requested, SlotKind slot, bool server_has_gpu) {
  switch (requested) {
    case eval::Device::gpu: return slot == SlotKind::gpu;
    case eval::Device::cpu: return slot == SlotKind::cpu;
    case eval::Device::automatic: return slot == (server_has_gpu ? SlotKind::gpu : SlotKind::cpu);
  }
  return false;
}

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::passed: return "passed";
    case Outcome::failed: return "failed";
    case Outcome::not_verified: return "not_verified";
  }
  return "not_verified";
}

Verified summarize(const eval::RunRecord& r, std::string record_json) {
  Verified v;
  v.record_json = std::move(record_json);
  for (auto& s : r.stages)
    if (s.status == eval::StageStatus::failed) {
      v.failed_stage = s.id;
      break;
    }
  v.outcome = v.failed_stage ? Outcome::failed : r.passed ? Outcome::passed : Outcome::not_verified;
  if (r.failure) v.failure = r.failure->kind;
  return v;
}

Verified not_carried_out(const task::Task& task, const std::string& why) {
  eval::RunRecord r;
  r.task = task.name;
  r.candidate = "candidate";
  for (auto& st : eval::stage_table())
    if (!st.wanted) r.stage(st.id);
  eval::StageResult& v = r.stage(eval::StageId::verify);
  v.status = eval::StageStatus::skipped;
  v.summary = "NOT verified: the server could not carry out the run: " + why;
  return summarize(r, render_model_record(r, task));
}

std::unique_ptr<PipelineVerifier> PipelineVerifier::for_gpu(int ordinal) {
  return std::make_unique<PipelineVerifier>(gpu::worker_argv_for_gpu(ordinal), SlotKind::gpu);
}

std::unique_ptr<PipelineVerifier> PipelineVerifier::for_cpu(const std::string& binary) {
  // {binary, "worker"}: the pipeline starts `binary emu-worker` beside it and, with the device
  // forced to cpu, never starts the GPU worker itself.
  return std::make_unique<PipelineVerifier>(std::vector<std::string>{binary.empty() ? executable_path() : binary, "worker"},
                                            SlotKind::cpu);
}

PipelineVerifier::PipelineVerifier(std::vector<std::string> worker_argv, SlotKind kind)
    : kind_(kind), pipeline_(std::move(worker_argv)) {}

Verified PipelineVerifier::verify(const RunRequest& request, const TaskCatalog::Entry& task) {
  try {
    return run(request, task);
  } catch (const std::exception& e) {
    return not_carried_out(task.task, fmt::format("an internal error ({})", e.what()));
  } catch (...) {
    return not_carried_out(task.task, "an internal error");
  }
}

Verified PipelineVerifier::run(const RunRequest& request, const TaskCatalog::Entry& task) {
  if (!dir_) {
    auto made = TempDir::create("ptxforge-serve");
    if (!made) return not_carried_out(task.task, "no private folder for the candidate");
    dir_.emplace(std::move(*made));
  }
  std::string path = dir_->path() + (request.language == Language::cuda ? "/candidate.cu" : "/candidate.ptx");
  if (auto st = write_file(path, request.candidate); !st) return not_carried_out(task.task, "the candidate could not be written");
  eval::RunOptions opts = request.options;
  opts.device = kind_ == SlotKind::gpu ? eval::Device::gpu : eval::Device::cpu;
  // What a client may not choose: every size set is verified, nothing is let through, and
  // no file of the server's is read for the launch spec or run as a tool.
  opts.held_back = true;
  opts.allow_suspicious = false;
  opts.launch_path.clear();
  opts.sanitizer.clear();
  opts.ncu.clear();
  opts.profile = false;
  eval::RunRecord r = pipeline_.run(task.task, path, opts);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return summarize(r, render_model_record(r, task.task));
}

}  // namespace ptxforge::serve
