// The candidate's side of a case: its buffers placed (guard pages in one reservation where the
// driver allows, else canaries around plain allocations, or for memcheck and initcheck plain
// allocations whose data lies as guard pages would place it), inputs uploaded, outputs poisoned, scratch zeroed; its launches; and the check
// after them: guards intact, read-only inputs unchanged, outputs against the reference's.
#include "worker/executor_detail.h"

#include <fmt/format.h>

#include "worker/tensor_map.h"

namespace ptxforge::gpu::detail {

using task::GuardedLayout;
using task::Param;

namespace {

// Element counts of the candidate's scratch buffers (they depend on its spec, not the task).
std::map<std::string, size_t> scratch_counts(const Loaded& L, const task::Bindings& symbols, const std::string& where) {
  std::map<std::string, size_t> out;
  for (auto& sc : L.spec.scratch) {
    auto n = sc.count.evaluate_int(symbols);
    if (!n) abort_with(FailureKind::spec, fmt::format("count of scratch '{}': {}", sc.name, n.error().message), where);
    out[sc.name] = static_cast<size_t>(*n);
  }
  return out;
}

size_t elem_size_of(const Loaded& L, const std::string& name) {
  if (const Param* p = L.task.find_param(name)) return task::dtype_size(p->dtype);
  for (auto& sc : L.spec.scratch)
    if (sc.name == name) return task::dtype_size(sc.dtype);
  return 1;
}

// Places every buffer of the case with guard pages in one reservation; false (and guard
// pages off for the rest of the worker's life) when the driver refuses for another reason
// than memory.
bool place_guarded(Executor::State& s, const std::vector<std::string>& names, const std::vector<size_t>& sizes,
                   CandidateBuffers& cb, const std::string& where) {
  std::optional<size_t> open;
  if (!s.open_buffer.empty()) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == s.open_buffer) open = i;
    if (!open) abort_with(FailureKind::spec, fmt::format("no buffer named '{}' to open", s.open_buffer), where);
  }
  auto plan = plan_guards(sizes, s.vmm->granularity(), open);
  if (!plan) abort_with(FailureKind::spec, "placing buffers with guard pages: " + plan.error().message, where);
  VmmFailure why;
  cb.guarded = GuardedCase::place(*s.vmm, std::move(*plan), why);
  if (cb.guarded) {
    cb.guarded_names = names;
    return true;
  }
  if (why.out_of_memory) abort_with(FailureKind::oom, "placing buffers with guard pages: " + why.message, where);
  s.vmm.reset();
  s.vmm_note = "guard pages failed (" + why.message + "); plain allocations with canaries instead";
  return false;
}

}  // namespace

void setup_candidate(Executor::State& s, const Loaded& L, const HostCase& h, Allocations& mem, CandidateBuffers& cb,
                     const std::string& where) {
  const Driver& d = *s.d;
  std::map<std::string, size_t> counts = h.counts;
  counts.merge(scratch_counts(L, h.symbols, where));
  std::vector<std::string> names;
  std::vector<size_t> sizes;
  for (auto& [name, count] : counts) {
    names.push_back(name);
    sizes.push_back(count * elem_size_of(L, name));
  }
  bool guard_pages = s.placement == Placement::guarded && s.vmm && place_guarded(s, names, sizes, cb, where);
  if (s.placement == Placement::guarded && !guard_pages) s.fell_back = true;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    size_t bytes = sizes[i];
    CUdeviceptr data = 0;
    if (guard_pages) {
      const GuardSlot& slot = cb.guarded->plan().slots[i];
      CUdeviceptr map = cb.guarded->map_start(i);
      data = cb.guarded->data(i);
      check_cu(d.cuMemsetD8(map, task::kCanaryByte, slot.map_bytes), "writing canaries", where);
      cb.canaries[name] = {map, slot.head_canary(), data + bytes, slot.tail_canary()};
    } else if (s.placement == Placement::guarded) {
      GuardedLayout layout{bytes};
      CUdeviceptr base = mem.alloc(layout.total(), name, where);
      check_cu(d.cuMemsetD8(base, task::kCanaryByte, layout.total()), "writing guard regions", where);
      data = base + layout.data_offset();
      cb.canaries[name] = {base, GuardedLayout::kGuard, base + layout.tail_offset(), GuardedLayout::kGuard};
    } else {
      // memcheck, initcheck: a plain allocation each (the tool's bounds are the allocation's),
      // the data placed in it as guard pages place it, after seed-drawn slack
      // (gpu/guard_layout.h), so its alignment does not tell the sanitizer from verify.
      const size_t g = s.vmm ? s.vmm->granularity() : kSlackDefaultGranularity;
      auto slot = plan_slack(bytes, g, s.slack_seed, i);
      if (!slot) abort_with(FailureKind::spec, "placing buffers for the sanitizer: " + slot.error().message, where);
      CUdeviceptr base = mem.alloc(slot->alloc_bytes, name, where);
      const size_t off = slack_data_offset(base, *slot, g);
      data = base + off;
      if (s.placement == Placement::exact) {
        // memcheck: canaries in the slack catch the writes there it cannot see. Under initcheck
        // the slack stays unwritten, so a read of it is reported as uninitialized.
        check_cu(d.cuMemsetD8(base, task::kCanaryByte, slot->alloc_bytes), "writing canaries", where);
        cb.canaries[name] = {base, off, data + bytes, slot->alloc_bytes - off - bytes};
      }
    }
    const Param* p = L.task.find_param(name);
    if (auto it = h.in.find(name); it != h.in.end()) {
      check_cu(d.cuMemcpyHtoD(data, it->second.data(), bytes), "uploading an input", where);
    } else if (p && s.placement == Placement::exact_unwritten) {
      // left as allocated: initcheck reports a read of an output before the kernel wrote it
    } else if (p && bytes % 4 == 0) {
      check_cu(d.cuMemsetD32(data, task::kPoisonWord, bytes / 4), "poisoning an output", where);
    } else if (p) {
      std::vector<uint8_t> poison(bytes);
      task::fill_poison(poison.data(), bytes);
      check_cu(d.cuMemcpyHtoD(data, poison.data(), bytes), "poisoning an output", where);
    } else {
      check_cu(d.cuMemsetD8(data, 0, bytes), "zeroing a scratch buffer", where);
    }
    cb.data[name] = data;
    cb.bytes[name] = bytes;
  }
  for (auto& choice : L.spec.tensor_maps) {
    const Param* tm = L.task.find_param(choice.name);
    const Param* over = L.task.find_param(tm->over);
    auto m = encode_tensor_map(d, *tm, choice, over->dtype, cb.data.at(over->name), h.symbols);
    if (!m) abort_with(FailureKind::spec, fmt::format("tensor map '{}': {}", choice.name, m.error().message), where);
    cb.maps[choice.name] = *m;
  }
}

void snapshot_inputs(Executor::State& s, const Loaded& L, const HostCase& h, Allocations& mem, CandidateBuffers& cb,
                     const std::string& where) {
  const InputCheck* check = s.input_checker();
  if (!check) return;
  for (auto& [name, initial] : h.in) {
    if (L.task.find_param(name)->role != task::Role::in) continue;
    CUdeviceptr copy = mem.alloc(initial.size(), fmt::format("a copy of input '{}'", name), where);
    check_cu(s.d->cuMemcpyDtoD(copy, cb.data.at(name), initial.size()), "copying an input", where);
    cb.pristine[name] = copy;
  }
  cb.input_check = check;
}

void run_candidate_launches(const Driver& d, const Loaded& L, const HostCase& h, const CandidateBuffers& cb,
                            const std::string& where, bool sync) {
  for (size_t i = 0; i < L.spec.launches.size(); ++i) {
    auto& l = L.spec.launches[i];
    std::string at = L.spec.launches.size() > 1 ? fmt::format("{}, launch {} ({})", where, i + 1, l.entry) : where;
    Dims dims = evaluate_launch(l, h.symbols, at);
    ArgPack args;
    args.build(l.args, cb.data, h, cb.maps);
    if (L.executed) args.ptrs.push_back(&L.executed->p);  // the instrumented copy's hidden counters parameter
    check_cu(launch(d, L.launch_fns[i], dims, args.ptrs.data()), "launching the candidate", at);
  }
  if (sync) check_cu(d.cuCtxSynchronize(), "running the candidate", where);
}

CaseResult check_candidate(const Driver& d, const Loaded& L, const HostCase& h, const CandidateBuffers& cb,
                           const std::map<std::string, std::vector<uint8_t>>& expected, const std::string& where) {
  CaseResult cr;
  for (auto& [name, span] : cb.canaries) {
    std::vector<uint8_t> head(span.head_len), tail(span.tail_len);
    if (!head.empty()) check_cu(d.cuMemcpyDtoH(head.data(), span.head, head.size()), "reading canaries", where);
    if (!tail.empty()) check_cu(d.cuMemcpyDtoH(tail.data(), span.tail, tail.size()), "reading canaries", where);
    if (auto v = task::check_canaries(head.data(), head.size(), tail.data(), tail.size(), cb.bytes.at(name)))
      cr.problems.push_back(v->describe(name, elem_size_of(L, name)));
  }
  for (auto& [name, initial] : h.in) {
    const Param* p = L.task.find_param(name);
    if (p->role != task::Role::in) continue;
    std::optional<size_t> changed;  // the first changed byte
    if (auto it = cb.pristine.find(name); it != cb.pristine.end()) {
      check_cu(cb.input_check->first_difference(cb.data.at(name), it->second, initial.size(), changed),
               "comparing an input with its copy", where);
    } else {
      task::HostBytes now(initial.size());
      check_cu(d.cuMemcpyDtoH(now.data(), cb.data.at(name), now.size()), "reading an input back", where);
      auto diff = std::mismatch(now.begin(), now.end(), initial.begin());
      if (diff.first != now.end()) changed = static_cast<size_t>(diff.first - now.begin());
    }
    if (changed)
      cr.problems.push_back(fmt::format("input '{}' was modified (first changed element: {})", name,
                                        *changed / task::dtype_size(p->dtype)));
  }
  for (auto& p : L.task.params) {
    if (!p.is_output()) continue;
    task::HostBytes actual(cb.bytes.at(p.name));  // every byte is overwritten by the download
    check_cu(d.cuMemcpyDtoH(actual.data(), cb.data.at(p.name), actual.size()), "reading an output", where);
    std::vector<int64_t> shape;
    if (auto it = h.shapes.find(p.name); it != h.shapes.end()) shape = it->second;
    cr.outputs.push_back(task::compare_output(p.name, expected.at(p.name).data(), actual.data(), p.dtype,
                                              h.counts.at(p.name), L.task.tolerance_for(p.name), shape));
  }
  cr.pass = cr.problems.empty();
  for (auto& c : cr.outputs) cr.pass = cr.pass && c.pass;
  return cr;
}

}  // namespace ptxforge::gpu::detail
