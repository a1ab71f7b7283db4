// The GPUs a compile session (or a bench) spreads its candidates over: one worker, and one
// Pipeline holding it, per GPU. A trajectory leases whichever GPU is free for a candidate's
// GPU stages and gives it back after, so candidates run side by side on different GPUs but
// never two at once on one: no timing shares its GPU with other work of ours.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eval/pipeline.h"
#include "util/result.h"

namespace ptxforge::agent {

class GpuPool {
 public:
  struct Gpu {
    int ordinal = 0;                    // the driver's number for it (a label where argv is a fake)
    std::vector<std::string> worker_argv;
  };
  explicit GpuPool(std::vector<Gpu> gpus);  // at least one
  // Workers on the GPUs with these ordinals (`ptxforge worker --device N`).
  static GpuPool for_ordinals(const std::vector<int>& ordinals);

  class Lease {
   public:
    Lease(GpuPool& pool, size_t slot) : pool_(&pool), slot_(slot) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), slot_(o.slot_) { o.pool_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    eval::Pipeline& pipeline();
    int ordinal() const;

   private:
    GpuPool* pool_;
    size_t slot_;
  };
  // Waits for a free GPU; the least used one is taken, so work spreads evenly.
  Lease acquire();

  size_t size() const { return slots_.size(); }
  const std::vector<std::string>& worker_argv(size_t i) const { return slots_[i].gpu.worker_argv; }
  int ordinal(size_t i) const { return slots_[i].gpu.ordinal; }
  long uses(size_t i) const;  // how many leases GPU i has given

 private:
  struct Slot {
    Gpu gpu;
    std::unique_ptr<eval::Pipeline> pipeline;
    bool busy = false;
    long uses = 0;
  };
  mutable std::mutex m_;
  std::condition_variable free_;
  std::vector<Slot> slots_;
};

// "all", or a comma-separated list of GPU ordinals ("0,1"); `all` is empty: every GPU found.
Result<std::vector<int>> parse_gpu_list(std::string_view text);
// The ordinals to use: the list as given, or for `all` every GPU the driver sees (asked of a
// worker; GPU 0 alone where there is none, so its worker reports the missing GPU as usual).
std::vector<int> resolve_gpus(const std::vector<int>& listed);

}  // namespace ptxforge::agent
