// The service's core: RunService over the run store, the task catalog and one thread per
// device slot. Runs are stored before they are queued and taken oldest first by the first
// free slot that may run them (a gpu request never on the CPU engine and the reverse). On
// start, the runs a previous server left unfinished are queued again; a run started
// max_attempts times without finishing (a candidate that takes the server down with it) is
// finished with a record that says so, so it cannot bring the server down for ever.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "serve/run_store.h"
#include "serve/serve_metrics.h"
#include "serve/service.h"
#include "serve/task_catalog.h"
#include "serve/verifier.h"

namespace ptxforge::serve {

struct Slot {
  std::string name;  // "gpu0", "cpu1": the run's "device" and the metrics' worker label
  SlotKind kind = SlotKind::cpu;
  std::unique_ptr<Verifier> verifier;
};

// The slots of `ptxforge serve --gpus 0,1 --cpu-workers N`: a PipelineVerifier on each GPU
// ("gpu<ordinal>"), then N on the CPU engine ("cpu0" ...). `binary`: the ptxforge whose
// emu-worker the CPU slots start ("" = this program).
std::vector<Slot> pipeline_slots(const std::vector<int>& gpu_ordinals, int cpu_workers, const std::string& binary = "");

struct SchedulerLimits {
  size_t max_queue = 1024;           // runs waiting for a slot; a batch past it is refused whole
  int max_inflight_per_client = 256;  // queued + running runs of one client (not of "", no tokens)
  int max_attempts = 3;               // starts without finishing before a run is given up
};

class Scheduler : public RunService {
 public:
  // Queues the unfinished runs of `store` and starts one thread per slot. `store` outlives
  // the scheduler. An error when the store cannot be read.
  static Result<std::unique_ptr<Scheduler>> start(RunStore& store, TaskCatalog catalog, std::vector<Slot> slots,
                                                  SchedulerLimits limits = {});
  // Shuts down with no grace and waits for the slots' threads (a running verification ends
  // at its own time limit; its row stays running and is queued again on the next start).
  ~Scheduler() override;

  Submitted submit(const std::vector<RunRequest>& requests) override;
  Result<std::optional<RunView>> get(const std::string& id, std::chrono::milliseconds wait) override;
  Health health() override;
  std::string metrics_text() override;
  void shutdown(std::chrono::milliseconds grace) override;

 private:
  // A queued run as the queue holds it: the candidate stays in the store until a slot takes it.
  struct Queued {
    int64_t seq = 0;
    std::string id, client;
    eval::Device device = eval::Device::automatic;
  };
  Scheduler(RunStore& store, TaskCatalog catalog, std::vector<Slot> slots, SchedulerLimits limits);
  Status recover();
  void serve_slot(size_t slot);
  bool can_run(eval::Device d) const;
  // Finishes a run no slot will run, with a record that says why.
  void finish_unrun(const std::string& id, const std::string& task, const std::string& why);
  int retry_after_s() const;

  RunStore& store_;
  TaskCatalog catalog_;
  std::vector<Slot> slots_;
  SchedulerLimits limits_;
  bool has_gpu_ = false;
  ServeMetrics metrics_;

  std::mutex m_;
  std::condition_variable work_;      // a run was queued, or the scheduler stops
  std::condition_variable finished_;  // a run finished, or shutdown began
  std::deque<Queued> queue_;          // by seq
  std::map<std::string, int> inflight_;  // per client: queued + running
  std::set<std::string> running_;
  uint64_t finished_count_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ptxforge::serve
