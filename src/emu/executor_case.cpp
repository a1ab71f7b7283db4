// One verify case on the CPU engine, step for step as the GPU worker's (worker/executor_*.cpp):
// the inputs of (size set, seed) from task/host_case.h, the reference on its own machine over
// zeroed outputs, the candidate's launches in the launch spec's order over exact buffers
// (outputs never written, scratch zeroed), then the comparison with the worker's tolerances,
// the read-only inputs checked unchanged, and each wrong element with its last writer. A
// finding of the engine stops the case and the job, as a fault stops the worker's.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "emu/executor_detail.h"
#include "task/buffers.h"
#include "task/compare.h"
#include "util/phase_timer.h"

namespace ptxforge::emu::detail {

using gpu::FailureKind;
using task::Param;

namespace {

// The sm_90 launch limits the driver enforces: a launch the GPU refuses must not run here.
Dim3 checked_dim(const std::array<int64_t, 3>& v, const std::array<int64_t, 3>& max, const char* what,
                 const std::string& where) {
  Dim3 d{};
  for (int i = 0; i < 3; ++i) {
    if (v[i] < 1 || v[i] > max[i])
      abort_with(FailureKind::launch,
                 fmt::format("{} ({}, {}, {}) is outside the device's limits ({}, {}, {})", what, v[0], v[1], v[2],
                             max[0], max[1], max[2]),
                 where);
    d[i] = static_cast<uint32_t>(v[i]);
  }
  return d;
}

LaunchConfig launch_config(const task::Launch& l, const task::Bindings& b, uint64_t budget, const std::string& where) {
  auto g = l.grid.evaluate(b);
  auto k = l.block.evaluate(b);
  auto sm = l.smem.evaluate_int(b);
  if (!g) abort_with(FailureKind::spec, "grid: " + g.error().message, where);
  if (!k) abort_with(FailureKind::spec, "block: " + k.error().message, where);
  if (!sm) abort_with(FailureKind::spec, "smem: " + sm.error().message, where);
  if (l.has_cluster) {
    auto c = l.cluster.evaluate(b);
    if (!c) abort_with(FailureKind::spec, "cluster: " + c.error().message, where);
    if ((*c)[0] * (*c)[1] * (*c)[2] > 1)
      abort_with(FailureKind::unsupported, "not supported by the CPU engine: thread-block clusters", where);
  }
  LaunchConfig cfg;
  cfg.grid = checked_dim(*g, {0x7fffffff, 65535, 65535}, "grid", where);
  cfg.block = checked_dim(*k, {1024, 1024, 64}, "block", where);
  if (uint64_t{cfg.block[0]} * cfg.block[1] * cfg.block[2] > 1024)
    abort_with(FailureKind::launch,
               fmt::format("block ({}, {}, {}) has more than 1024 threads", cfg.block[0], cfg.block[1], cfg.block[2]),
               where);
  if (*sm > 227 * 1024)
    abort_with(FailureKind::launch, fmt::format("{} bytes of dynamic shared memory: more than 227 KiB", *sm), where);
  cfg.dynamic_smem = static_cast<uint32_t>(*sm);
  cfg.budget = budget;
  return cfg;
}

// The entry's arguments as ParamBytes: a buffer's address, a scalar's bytes, each cut or
// zero-padded to the size the entry declares (the GPU reads that many bytes of the slot).
std::vector<ParamBytes> param_bytes(const Machine& m, const std::string& entry, const std::vector<std::string>& names,
                                    const std::map<std::string, uint64_t>& buffers, const task::HostCase& h,
                                    const std::string& where) {
  auto sizes = m.param_sizes(entry);
  if (!sizes) abort_with(FailureKind::load, fmt::format("the module has no kernel '{}'", entry), where);
  if (sizes->size() != names.size())
    abort_with(FailureKind::spec,
               fmt::format("kernel '{}' takes {} parameters; the launch passes {}", entry, sizes->size(), names.size()),
               where);
  std::vector<ParamBytes> out;
  for (size_t i = 0; i < names.size(); ++i) {
    std::array<uint8_t, 8> slot{};
    if (auto b = buffers.find(names[i]); b != buffers.end()) std::memcpy(slot.data(), &b->second, 8);
    else if (auto sc = h.scalars.find(names[i]); sc != h.scalars.end()) slot = sc->second;
    else abort_with(FailureKind::spec, fmt::format("argument '{}' of '{}' is no buffer or scalar", names[i], entry), where);
    ParamBytes p((*sizes)[i], 0);
    std::memcpy(p.data(), slot.data(), std::min<size_t>(p.size(), slot.size()));
    out.push_back(std::move(p));
  }
  return out;
}

void run_launch(const LoadedModule& mod, const std::string& entry, const LaunchConfig& cfg,
                const std::vector<ParamBytes>& params, bool reference, const std::string& where) {
  LaunchResult r = mod.machine->launch(entry, cfg, params);
  if (!r.finding) return;
  gpu::Failure f = failure_of(*r.finding, mod, reference);
  f.where = where;
  throw Abort{std::move(f)};
}

// A buffer of the case on `m`, its initial bytes written (inputs; zeros where `zero`).
uint64_t place(Machine& m, const std::string& name, uint64_t bytes, Init init, bool track, uint32_t elem,
               const task::HostBytes* initial, bool zero) {
  uint64_t a = m.alloc(name, bytes, init, track, elem);
  if (initial) m.write(a, std::span<const uint8_t>(initial->data(), initial->size()));
  else if (zero && bytes > 0) m.write(a, std::vector<uint8_t>(bytes, 0));
  return a;
}

}  // namespace

task::HostCase host_case(const task::Task& t, const task::SizeSet& set, uint64_t seed, const std::string& where) {
  // Counted before anything is drawn: a set too large for the engine allocates nothing.
  uint64_t total = 0;
  for (auto& p : t.params) {
    if (p.kind != Param::buffer) continue;
    auto n = p.count.evaluate_int(set.values);
    if (!n) abort_with(FailureKind::spec, fmt::format("count of '{}': {}", p.name, n.error().message), where);
    uint64_t bytes = static_cast<uint64_t>(*n) * task::dtype_size(p.dtype);
    if (static_cast<uint64_t>(*n) > kMaxCaseBytes || (total += bytes) > kMaxCaseBytes)
      abort_with(FailureKind::unsupported,
                 fmt::format("size set '{}' needs more than the CPU engine's {} MiB of buffers", set.name,
                             kMaxCaseBytes >> 20),
                 where);
  }
  auto h = task::make_host_case(t, set, seed);
  if (!h) abort_with(FailureKind::spec, h.error().message, where);
  return std::move(*h);
}

std::map<std::string, std::vector<uint8_t>> run_reference(JobState& s, const task::HostCase& h,
                                                           const std::string& where) {
  PhaseTimer timer(s.phases.reference_s);
  Machine& m = *s.reference.machine;
  m.free_buffers();
  std::map<std::string, uint64_t> bufs;
  std::vector<std::string> names;
  for (auto& p : s.task.params) {
    names.push_back(p.name);
    if (p.kind != Param::buffer) continue;
    auto in = h.in.find(p.name);
    // As the worker's plain buffers: inputs uploaded, outputs zeroed.
    bufs[p.name] = place(m, p.name, h.counts.at(p.name) * task::dtype_size(p.dtype), Init::written, false,
                         static_cast<uint32_t>(task::dtype_size(p.dtype)), in != h.in.end() ? &in->second : nullptr,
                         true);
  }
  const std::string& entry = s.task.reference.entry;
  LaunchConfig cfg = launch_config(s.task.reference, h.symbols, s.job->emu_budget, where + ", reference");
  run_launch(s.reference, entry, cfg, param_bytes(m, entry, names, bufs, h, where + ", reference"), true,
             where + ", reference");
  std::map<std::string, std::vector<uint8_t>> out;
  for (auto& p : s.task.params)
    if (p.is_output()) out[p.name] = m.read(bufs.at(p.name), h.counts.at(p.name) * task::dtype_size(p.dtype));
  m.free_buffers();
  return out;
}

gpu::CaseResult verify_case(JobState& s, const task::SizeSet& set, uint64_t seed, int seed_index) {
  const task::LaunchSpec& spec = s.job->launch;
  std::string where = fmt::format("size set '{}', seed {}", set.name, seed_index);
  try {
    task::HostCase h;
    {
      PhaseTimer t(s.phases.inputs_s);
      h = host_case(s.task, set, seed, where);
    }
    auto expected = run_reference(s, h, where);
    Machine& m = *s.candidate.machine;
    std::map<std::string, uint64_t> bufs;
    {
      PhaseTimer t(s.phases.candidate_s);
      m.free_buffers();  // module variables stay, as in a loaded CUmodule
      uint64_t total = 0;  // the case's buffers and the scratch together stay within kMaxCaseBytes
      for (auto& p : s.task.params) {
        if (p.kind != Param::buffer) continue;
        total += h.counts.at(p.name) * task::dtype_size(p.dtype);
        auto in = h.in.find(p.name);
        bufs[p.name] = place(m, p.name, h.counts.at(p.name) * task::dtype_size(p.dtype),
                             p.role == task::Role::out ? Init::unwritten : Init::written, p.is_output(),
                             static_cast<uint32_t>(task::dtype_size(p.dtype)),
                             in != h.in.end() ? &in->second : nullptr, false);
      }
      for (auto& sc : spec.scratch) {
        auto n = sc.count.evaluate_int(h.symbols);
        if (!n) abort_with(FailureKind::spec, fmt::format("count of scratch '{}': {}", sc.name, n.error().message), where);
        uint64_t bytes = static_cast<uint64_t>(*n) * task::dtype_size(sc.dtype);
        if (static_cast<uint64_t>(*n) > kMaxCaseBytes || (total += bytes) > kMaxCaseBytes)
          abort_with(FailureKind::unsupported,
                     fmt::format("scratch '{}' takes the case past the CPU engine's {} MiB of buffers", sc.name,
                                 kMaxCaseBytes >> 20),
                     where);
        bufs[sc.name] = place(m, sc.name, bytes, Init::written, false, static_cast<uint32_t>(task::dtype_size(sc.dtype)),
                              nullptr, true);
      }
      for (size_t i = 0; i < spec.launches.size(); ++i) {
        const task::Launch& l = spec.launches[i];
        std::string at = spec.launches.size() > 1 ? fmt::format("{}, launch {} ({})", where, i + 1, l.entry) : where;
        LaunchConfig cfg = launch_config(l, h.symbols, s.job->emu_budget, at);
        run_launch(s.candidate, l.entry, cfg, param_bytes(m, l.entry, l.args, bufs, h, at), false, at);
      }
    }
    PhaseTimer t(s.phases.compare_s);
    gpu::CaseResult cr;
    for (auto& [name, initial] : h.in) {
      const Param* p = s.task.find_param(name);
      if (p->role != task::Role::in) continue;
      auto now = m.read(bufs.at(name), initial.size());
      auto diff = std::mismatch(now.begin(), now.end(), initial.begin());
      if (diff.first != now.end())
        cr.problems.push_back(fmt::format("input '{}' was modified (first changed element: {})", name,
                                          static_cast<size_t>(diff.first - now.begin()) / task::dtype_size(p->dtype)));
    }
    for (auto& p : s.task.params) {
      if (!p.is_output()) continue;
      const size_t esize = task::dtype_size(p.dtype), count = h.counts.at(p.name);
      const uint64_t base = bufs.at(p.name);
      std::vector<uint8_t> actual = m.read(base, count * esize);
      // An element no thread stored to reads as the poison the worker writes before a launch,
      // so the comparison's never-written count and hints are the GPU's.
      if (p.role == task::Role::out)
        for (size_t i = 0; i < count; ++i)
          if (!m.last_writer(base + i * esize)) task::fill_poison(actual.data() + i * esize, esize);
      std::vector<int64_t> shape;
      if (auto it = h.shapes.find(p.name); it != h.shapes.end()) shape = it->second;
      task::Comparison c = task::compare_output(p.name, expected.at(p.name).data(), actual.data(), p.dtype, count,
                                                s.task.tolerance_for(p.name), shape);
      if (!c.pass) {
        size_t listed = 0;
        for (const task::Mismatch& mm : c.first) {
          if (listed++ == gpu::CaseResult::kMaxWrongPerOutput || mm.index >= count) break;
          gpu::WrongElement w;
          w.output = p.name;
          w.index = mm.index;
          w.multi_index = multi_index(shape, count, mm.index);
          w.expected = element_text(expected.at(p.name).data(), p.dtype, mm.index);
          w.actual = element_text(actual.data(), p.dtype, mm.index);
          if (auto who = m.last_writer(base + mm.index * esize))
            w.writer = gpu::WrongElement::Writer{{who->who.cta, who->who.thread}, who->pos.line};
          else w.never_written = true;
          cr.wrong.push_back(std::move(w));
        }
      }
      cr.outputs.push_back(std::move(c));
    }
    cr.pass = cr.problems.empty();
    for (auto& c : cr.outputs) cr.pass = cr.pass && c.pass;
    cr.size_set = set.name;
    cr.shown = set.shown;
    cr.seed = seed;
    cr.seed_index = seed_index;
    return cr;
  } catch (Abort& a) {
    a.failure.held_back = !set.shown;  // `where` names the set: printers for a model leave it out
    a.failure.size_set = set.name;
    a.failure.seed = seed;
    throw;
  }
}

gpu::FailureKind failure_kind_of(FindingKind k) {
  switch (k) {
    case FindingKind::unsupported:
    case FindingKind::limit: return FailureKind::unsupported;
    case FindingKind::oob:
    case FindingKind::trap: return FailureKind::fault;
    case FindingKind::misaligned: return FailureKind::misaligned;
    case FindingKind::uninit: return FailureKind::uninitialized;
    case FindingKind::race: return FailureKind::race;
    case FindingKind::barrier_divergence:
    case FindingKind::barrier_count:
    case FindingKind::deadlock: return FailureKind::barrier;
    case FindingKind::warp_mask: return FailureKind::warp_sync;
    case FindingKind::budget: return FailureKind::budget;
  }
  return FailureKind::fault;
}

gpu::Failure failure_of(const Finding& f, const LoadedModule& module, bool reference) {
  gpu::Failure out;
  out.kind = failure_kind_of(f.kind);
  std::string at = f.pos.line > 0 ? fmt::format("{}:{}:{}", module.file_name, f.pos.line, f.pos.col) : module.file_name;
  if (out.kind == FailureKind::unsupported) {
    // "not supported by the CPU engine: wgmma.mma_async at k.ptx:88" (docs/emu.md section 9)
    out.message = f.pos.line > 0 ? fmt::format("{} at {}:{}", f.message, module.file_name, f.pos.line) : f.message;
  } else {
    out.message = fmt::format("{}: {}", at, f.message);
    if (f.who)
      out.message += fmt::format(" (thread ({},{},{}) of CTA ({},{},{}))", f.who->thread[0], f.who->thread[1],
                                 f.who->thread[2], f.who->cta[0], f.who->cta[1], f.who->cta[2]);
  }
  if (f.kind == FindingKind::oob) {
    // The buffer is named already: no locate job follows (`guarded` stays empty).
    out.out_of_bounds = true;
    out.message = "out-of-bounds access: " + out.message;
  }
  if (reference) out.message = "the reference: " + out.message;
  gpu::EmuFinding e;
  e.check = "emu-" + std::string(to_string(f.kind));
  e.line = f.pos.line;
  e.col = f.pos.col;
  if (f.who) e.thread = gpu::EmuThread{f.who->cta, f.who->thread};
  e.buffer = f.buffer;
  e.offset = f.offset;
  if (f.other)
    e.other = gpu::EmuFinding::Other{f.other->pos.line, f.other->pos.col, {f.other->who.cta, f.other->who.thread},
                                     f.other->write};
  out.finding = std::move(e);
  return out;
}

std::string element_text(const uint8_t* data, task::DType t, size_t i) {
  const uint8_t* p = data + i * task::dtype_size(t);
  auto get = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case task::DType::i8: return fmt::format("{}", get(int8_t{}));
    case task::DType::u8: return fmt::format("{}", get(uint8_t{}));
    case task::DType::i16: return fmt::format("{}", get(int16_t{}));
    case task::DType::u16: return fmt::format("{}", get(uint16_t{}));
    case task::DType::i32: return fmt::format("{}", get(int32_t{}));
    case task::DType::u32: return fmt::format("{}", get(uint32_t{}));
    case task::DType::i64: return fmt::format("{}", get(int64_t{}));
    case task::DType::u64: return fmt::format("{}", get(uint64_t{}));
    case task::DType::f64: return std::isnan(get(double{})) ? "nan" : fmt::format("{}", get(double{}));
    default: break;
  }
  // f32 and the narrower floats are exact in float: its shortest form reads as the value. A
  // NaN reads "nan" whatever its sign bit (the worker's poison has it set).
  double v = task::load_element(data, t, i);
  if (std::isnan(v)) return "nan";
  return fmt::format("{}", static_cast<float>(v));
}

std::vector<int64_t> multi_index(const std::vector<int64_t>& shape, size_t count, size_t i) {
  if (shape.empty()) return {};
  uint64_t product = 1;
  for (int64_t d : shape) {
    if (d <= 0) return {};
    product *= static_cast<uint64_t>(d);
    if (product > count) return {};
  }
  if (product != count) return {};
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = static_cast<int64_t>(i % static_cast<uint64_t>(shape[k]));
    i /= static_cast<uint64_t>(shape[k]);
  }
  return idx;
}

}  // namespace ptxforge::emu::detail
