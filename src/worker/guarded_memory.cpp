#include "worker/guarded_memory.h"

namespace ptxforge::gpu {

std::unique_ptr<GuardedCase> GuardedCase::place(VmmApi& vmm, GuardPlan plan, VmmFailure& why) {
  std::unique_ptr<GuardedCase> c(new GuardedCase(vmm, std::move(plan)));
  auto fail = [&](VmmFailure f) {
    why = std::move(f);
    c->free_all();
    return nullptr;
  };
  if (c->plan_.reserve_bytes == 0) return c;  // no buffers: nothing to reserve
  if (auto f = vmm.reserve(c->plan_.reserve_bytes, c->base_)) return fail(*f);
  c->reserved_ = true;
  for (const GuardSlot& s : c->plan_.slots) {
    Mapping m;
    m.address = c->base_ + s.map_offset;
    m.bytes = s.map_bytes;
    if (auto f = vmm.create(m.bytes, m.handle)) return fail(*f);
    c->mappings_.push_back(m);  // created: released on the way out
    if (auto f = vmm.map(m.address, m.bytes, m.handle)) return fail(*f);
    c->mappings_.back().mapped = true;
    if (auto f = vmm.set_access(m.address, m.bytes)) return fail(*f);
  }
  return c;
}

void GuardedCase::free_all() {
  for (auto it = mappings_.rbegin(); it != mappings_.rend(); ++it) {
    if (it->mapped) vmm_.unmap(it->address, it->bytes);
    vmm_.release(it->handle);
  }
  mappings_.clear();
  if (reserved_) vmm_.address_free(base_, plan_.reserve_bytes);
  reserved_ = false;
}

GuardedCase::~GuardedCase() { free_all(); }

}  // namespace ptxforge::gpu
