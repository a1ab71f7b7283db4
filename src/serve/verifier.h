// What runs one candidate for the service: a Verifier per device slot. The real one holds a
// warm eval::Pipeline (its worker, the worker's context and the task's reference are reused
// from run to run, as `bench` does); tests of the scheduler pass a fake. A verifier never
// throws and never loses a run: whatever goes wrong on the server's side becomes a record
// whose verdict says the run could not be carried out.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/pipeline.h"
#include "serve/service.h"
#include "serve/task_catalog.h"
#include "util/subprocess.h"

namespace ptxforge::serve {

// What a slot runs on: a GPU through its worker, or the CPU engine.
enum class SlotKind { gpu, cpu };
std::string_view to_string(SlotKind k);  // "gpu", "cpu"
// Whether a request may run on a slot of this kind: gpu only on a GPU, cpu only on the engine,
// auto on a GPU when the server has one, else on the engine.
bool runs_on(eval::Device requested, SlotKind slot, bool server_has_gpu);

// The verdict in three, for the metrics: passed; failed at a stage; not verified (no stage
// failed, but nothing verified it: an unsupported kernel, no GPU, a run the server could not
// carry out).
enum class Outcome { passed, failed, not_verified };
std::string_view to_string(Outcome o);

struct Verified {
  std::string record_json;  // the model-audience record (model_view.h)
  Outcome outcome = Outcome::not_verified;
  std::optional<eval::StageId> failed_stage;  // the first stage that failed
  std::optional<gpu::FailureKind> failure;    // the record's runtime failure, when it has one
};

// The summary of a record, with its JSON.
Verified summarize(const eval::RunRecord& r, std::string record_json);
// A run the server could not carry out (`why`: no worker, no temporary folder, a run started
// too often): a record on `task` whose verify stage is skipped and whose verdict is
// "NOT verified: the server could not carry out the run: <why>".
Verified not_carried_out(const task::Task& task, const std::string& why);

class Verifier {
 public:
  virtual ~Verifier() = default;
  virtual Verified verify(const RunRequest& request, const TaskCatalog::Entry& task) = 0;
};

class PipelineVerifier : public Verifier {
 public:
  // A GPU slot: `ptxforge worker --device N` (gpu::worker_argv_for_gpu), runs forced to the GPU.
  static std::unique_ptr<PipelineVerifier> for_gpu(int ordinal);
  // A CPU slot: `<binary> emu-worker`, runs forced to the CPU engine. `binary` is this
  // program unless a test names the built ptxforge.
  static std::unique_ptr<PipelineVerifier> for_cpu(const std::string& binary = "");

  PipelineVerifier(std::vector<std::string> worker_argv, SlotKind kind);
  Verified verify(const RunRequest& request, const TaskCatalog::Entry& task) override;
  // The slot's private folder for candidates ("" before the first run), for tests.
  std::string folder() const { return dir_ ? dir_->path() : std::string(); }

 private:
  Verified run(const RunRequest& request, const TaskCatalog::Entry& task);
  SlotKind kind_;
  eval::Pipeline pipeline_;
  std::optional<TempDir> dir_;  // this slot's own folder for candidates, made on first need
};

}  // namespace ptxforge::serve
