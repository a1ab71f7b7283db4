// Drawing one case's inputs on the host (task/host_case.h): shared by the GPU worker and the
// CPU engine so that both run a kernel on identical bytes.
#include "task/host_case.h"

#include <fmt/format.h>

namespace ptxforge::task {

Result<HostCase> make_host_case(const Task& task, const SizeSet& set, uint64_t seed) {
  HostCase h;
  h.symbols = set.values;
  for (size_t i = 0; i < task.params.size(); ++i) {
    const Param& p = task.params[i];
    if (p.kind == Param::buffer) {
      auto n = p.count.evaluate_int(h.symbols);
      if (!n) return Error{fmt::format("count of '{}': {}", p.name, n.error().message)};
      h.counts[p.name] = static_cast<size_t>(*n);
      if (p.role != Role::out) {
        auto& bytes = h.in[p.name];
        bytes.resize(static_cast<size_t>(*n) * dtype_size(p.dtype));
        // The stream is the parameter's index in the task: the worker and the engine agree on it.
        fill_input(bytes.data(), p.dtype, static_cast<size_t>(*n), task.init_for(set, p), seed, i);
      }
      for (auto& e : p.shape) {
        auto v = e.evaluate_int(h.symbols);
        if (v) h.shapes[p.name].push_back(*v);
      }
    } else if (p.kind == Param::scalar) {
      auto v = p.value.evaluate(h.symbols);
      if (!v) return Error{fmt::format("value of '{}': {}", p.name, v.error().message)};
      std::array<uint8_t, 8> b{};
      store_element(b.data(), p.dtype, 0, v->as_double());
      h.scalars[p.name] = b;
    }
  }
  return h;
}

}  // namespace ptxforge::task
