#include "agent/gpu_pool.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "gpu/worker_client.h"
#include "util/text.h"

namespace ptxforge::agent {

GpuPool::GpuPool(std::vector<Gpu> gpus) {
  assert(!gpus.empty());
  for (auto& g : gpus) {
    Slot s;
    s.pipeline = std::make_unique<eval::Pipeline>(g.worker_argv);
    s.gpu = std::move(g);
    slots_.push_back(std::move(s));
  }
}

GpuPool GpuPool::for_ordinals(const std::vector<int>& ordinals) {
  std::vector<Gpu> gpus;
  for (int o : ordinals) gpus.push_back({o, gpu::worker_argv_for_gpu(o)});
  if (gpus.empty()) gpus.push_back({0, gpu::default_worker_argv()});
  return GpuPool(std::move(gpus));
}

GpuPool::Lease GpuPool::acquire() {
  std::unique_lock<std::mutex> lock(m_);
  size_t pick = 0;
  free_.wait(lock, [&] {
    bool found = false;
    for (size_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i].busy && (!found || slots_[i].uses < slots_[pick].uses)) {
        pick = i;
        found = true;
      }
    return found;
  });
  slots_[pick].busy = true;
  ++slots_[pick].uses;
  return Lease(*this, pick);
}

long GpuPool::uses(size_t i) const {
  std::lock_guard<std::mutex> lock(m_);
  return slots_[i].uses;
}

GpuPool::Lease::~Lease() {
  if (!pool_) return;
  {
    std::lock_guard<std::mutex> lock(pool_->m_);
    pool_->slots_[slot_].busy = false;
  }
  pool_->free_.notify_one();
}

eval::Pipeline& GpuPool::Lease::pipeline() { return *pool_->slots_[slot_].pipeline; }
int GpuPool::Lease::ordinal() const { return pool_->slots_[slot_].gpu.ordinal; }

std::vector<int> resolve_gpus(const std::vector<int>& listed) {
  if (!listed.empty()) return listed;
  std::vector<int> all{0};
  if (auto info = gpu::ask_device_info(gpu::default_worker_argv()))
    for (int k = 1; k < info->device_count; ++k) all.push_back(k);
  return all;
}

Result<std::vector<int>> parse_gpu_list(std::string_view text) {
  std::vector<int> out;
  if (trim(text) == "all") return out;
  for (auto part : split(text, ',')) {
    std::string p(trim(part));
    char* end = nullptr;
    long v = p.empty() ? -1 : std::strtol(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || v < 0 || v > 1024)
      return Error{fmt::format("'{}' is not a GPU list: give 'all' or ordinals such as 0,1", text)};
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) != out.end())
      return Error{fmt::format("GPU {} is listed twice in '{}'", v, text)};
    out.push_back(static_cast<int>(v));
  }
  return out;
}

}  // namespace ptxforge::agent
