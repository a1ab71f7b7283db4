// Machine: the engine behind emu/engine.h. create() lowers the module and lays out its
// variables once (they persist across launches, as in a loaded CUmodule); launch() checks the
// launch shape against the engine's limits, builds the kernel parameter buffer and runs the
// CTAs, stopping at the first finding: on one host thread, or, for a kernel nothing in which
// can order accesses across CTAs, on several (emu/cta_pool.h) with the one-thread run's
// verdict (a parallel run that finds anything is thrown away and run again on one thread).
// Up to kResidentCtas CTAs are resident at once, admitted in linear-id order and rotated round
// by round (docs/emu.md section 3), so a CTA spinning on a flag an EARLIER CTA sets terminates;
// one waiting on a LATER CTA that cannot become resident ends in `budget`, as it can deadlock on
// a GPU with too few SMs to hold both. Every launch runs under the race detector (emu/race.h).
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "emu/cta.h"
#include "emu/cta_pool.h"
#include "emu/engine.h"
#include "emu/interp.h"
#include "emu/interp_fast.h"
#include "emu/limits.h"
#include "emu/lower.h"
#include "emu/memory.h"
#include "emu/race.h"

namespace ptxforge::emu {

namespace {

class MachineImpl final : public Machine {
 public:
  explicit MachineImpl(Program p)
      : prog_(std::move(p)), race_([this](RaceSpace sp, uint32_t, uint64_t a) { return locate(sp, a); }) {
    bool fast = fast_paths();
    for (auto& f : prog_.fns)
      for (auto& in : f.code) {
        has_nc_ = has_nc_ || (in.op == Op::ld && in.nc);
        if (fast) in.fast = fast_kernel(in);
      }
    parallel_ = parallel_functions(prog_);
    counts_.resize(prog_.fns.size());
    for (size_t i = 0; i < prog_.fns.size(); ++i) counts_[i].resize(prog_.fns[i].code.size());
    consts_.set_next(kConstWin);
    for (auto& v : prog_.vars) {
      if (v.space == Space::shared) continue;
      uint64_t at = v.space == Space::global ? kModuleGlobalBase + v.offset : kConstWin + v.offset;
      AllocMap& map = v.space == Space::global ? global_ : consts_;
      Alloc& a = map.add(v.name, std::max<uint64_t>(v.size, 1), at);
      a.size = v.size;
      if (!v.init.empty()) {  // the initializer's image; needed no more once copied
        std::memcpy(a.bytes.data(), v.init.data(), v.size);
        std::vector<uint8_t>().swap(v.init);
      }
      a.read_only = v.space == Space::const_;
      for (auto& r : v.relocs) {
        const ModuleVar& t = prog_.vars[r.var];
        uint64_t addr = (t.space == Space::global ? kModuleGlobalBase : window_base(t.space)) + t.offset + r.addend;
        std::memcpy(a.bytes.data() + r.at, &addr, std::min<uint64_t>(r.bytes, 8));
      }
    }
    global_.set_next(kGlobalBase);
  }

  uint64_t alloc(std::string name, uint64_t bytes, Init init, bool track_writers, uint32_t element_bytes) override {
    if (global_.total_bytes() + bytes > limits::kMaxAllocatedBytes) return 0;
    Alloc& a = global_.add(std::move(name), bytes);
    a.user = true;
    a.output = init == Init::unwritten;
    if (a.output) std::fill(a.init.begin(), a.init.end(), 0);
    a.element_bytes = element_bytes ? element_bytes : 1;
    if (track_writers) a.writers.resize((bytes + a.element_bytes - 1) / a.element_bytes);
    return a.base;
  }

  void write(uint64_t address, std::span<const uint8_t> bytes) override {
    Alloc* a = global_.find(address, bytes.size());
    if (!a) return;
    std::memcpy(a->bytes.data() + (address - a->base), bytes.data(), bytes.size());
    // An output's bytes stay "never written" whatever the harness fills them with.
    if (!a->output) std::memset(a->init.data() + (address - a->base), 1, bytes.size());
  }

  std::vector<uint8_t> read(uint64_t address, uint64_t bytes) const override {
    const Alloc* a = global_.find(address, bytes);
    if (!a) return std::vector<uint8_t>(bytes, 0);
    auto it = a->bytes.begin() + static_cast<std::ptrdiff_t>(address - a->base);
    return std::vector<uint8_t>(it, it + static_cast<std::ptrdiff_t>(bytes));
  }

  std::optional<Writer> last_writer(uint64_t address) const override {
    const Alloc* a = global_.find(address, 1);
    if (!a || a->writers.empty()) return std::nullopt;
    const WriterRec& w = a->writers[(address - a->base) / a->element_bytes];
    if (!w.set) return std::nullopt;
    return Writer{w.who, {w.line, w.col}};
  }

  void free_buffers() override { global_.drop_user(); }

  std::optional<std::vector<uint32_t>> param_sizes(std::string_view entry) const override {
    const Function* f = find_entry(entry);
    if (!f) return std::nullopt;
    std::vector<uint32_t> out;
    for (auto& p : f->params) out.push_back(p.size);
    return out;
  }

  std::vector<InstructionCount> counts() const override {
    std::vector<InstructionCount> out;
    for (size_t f = 0; f < prog_.fns.size(); ++f)
      for (size_t i = 0; i < prog_.fns[f].code.size(); ++i) {
        const Inst& in = prog_.fns[f].code[i];
        if (in.line == 0) continue;  // the implicit return at a body's end
        out.push_back({{in.line, in.col}, prog_.fns[f].opcodes[i], counts_[f][i].warp_issues,
                       counts_[f][i].lane_executions});
      }
    return out;
  }

  LaunchResult launch(std::string_view entry, const LaunchConfig& config, std::span<const ParamBytes> params) override {
    LaunchResult res;
    auto limit = [&](std::string msg) {
      Finding f;
      f.kind = FindingKind::limit;
      f.message = std::move(msg);
      res.finding = std::move(f);
      return res;
    };
    const Function* fn = find_entry(entry);
    if (!fn) {
      Finding f;
      f.kind = FindingKind::unsupported;
      f.message = fmt::format("no entry '{}' in the module", entry);
      res.finding = std::move(f);
      return res;
    }
    uint64_t threads = uint64_t{config.block[0]} * config.block[1] * config.block[2];
    uint64_t ctas = uint64_t{config.grid[0]} * config.grid[1] * config.grid[2];
    if (threads == 0 || ctas == 0) return limit("a launch with an empty grid or block");
    if (threads > limits::kMaxThreadsPerCta || ctas > limits::kMaxCtasPerLaunch ||
        threads * ctas > limits::kMaxThreadsPerLaunch)
      return limit(fmt::format("launch too large for the CPU engine: {} CTAs of {} threads", ctas, threads));
    uint64_t shared = prog_.shared_static + config.dynamic_smem;
    if (shared > limits::kMaxSharedPerCta)
      return limit(fmt::format("{} bytes of shared memory per CTA, beyond the limit of {}", shared, limits::kMaxSharedPerCta));
    if (params.size() != fn->params.size())
      return limit(fmt::format("'{}' takes {} parameters, the launch gave {}", entry, fn->params.size(), params.size()));
    uint64_t entry_regs = ((threads + 31) / 32) * (uint64_t{fn->slots} * 32 * 8 + uint64_t{fn->preds} * 8);
    if (entry_regs > limits::kMaxFrameBytesPerCta)
      return limit(fmt::format("{} registers per thread in CTAs of {} threads exceed the CPU engine's limit",
                               fn->slots, threads));
    Launch L;
    L.prog = &prog_;
    L.entry = static_cast<uint32_t>(fn - prog_.fns.data());
    L.global = &global_;
    L.consts = &consts_;
    L.config = config;
    L.shared_bytes = static_cast<uint32_t>(shared);
    L.gridid = ++launches_;
    L.counts = &counts_;
    L.params.assign(fn->param_bytes, 0);
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].size() != fn->params[i].size)
        return limit(fmt::format("parameter {} of '{}' is {} bytes, the launch gave {}", i, entry, fn->params[i].size,
                                 params[i].size()));
      std::memcpy(L.params.data() + fn->params[i].offset, params[i].data(), params[i].size());
    }
    L.race = &race_;
    L.track_nc = has_nc_;
    race_.reset_launch(config.grid, config.block);
    uint32_t pool = host_threads(config.host_threads);
    if (pool > 1 && ctas > 1 && parallel_[L.entry]) {
      Parallel p = run_parallel(L, *fn, ctas, static_cast<uint32_t>(threads), std::min<uint64_t>(pool, ctas), res);
      if (p == Parallel::kept) return res;
      if (p == Parallel::thrown_away) {
        res.rerun_on_one_thread = true;
        race_.reset_launch(config.grid, config.block);
      }
    }
    uint64_t next = 0;
    std::deque<std::unique_ptr<Cta>> resident;
    while (next < ctas || !resident.empty()) {
      while (next < ctas && resident.size() < limits::kResidentCtas)
        resident.push_back(make_cta(L, *fn, next++, static_cast<uint32_t>(threads)));
      // One round of each resident CTA, in admission order; a finished CTA frees its slot.
      for (auto it = resident.begin(); it != resident.end();) {
        CtaStep st = step_cta(L, **it);
        if (st == CtaStep::stopped) {
          res.finding = std::move(L.finding);
          res.lane_instructions = L.lane_instructions;
          return res;
        }
        if (st == CtaStep::done) {
          race_.end_cta((*it)->race);
          it = resident.erase(it);
        } else {
          ++it;
        }
      }
    }
    res.lane_instructions = L.lane_instructions;
    return res;
  }

 private:
  // The launch on `threads` host threads: `kept` when its result stands (in `res`),
  // `thrown_away` when it found something (memory restored: it must run again on one thread),
  // `declined` when it did not start (too much memory to copy).
  enum class Parallel { kept, thrown_away, declined };
  Parallel run_parallel(Launch& L, const Function& fn, uint64_t ctas, uint32_t cta_threads, uint64_t threads,
                        LaunchResult& res) {
    // The snapshot and the owners cost about three times the buffers: past a share of the
    // limit on allocations, or where the host refuses the memory, the launch runs on one thread.
    if (global_.total_bytes() > limits::kMaxParallelBytes) return Parallel::declined;
    std::optional<GlobalSnapshot> snapshot;
    try {
      snapshot.emplace(global_);
      arm_owners(global_, L.gridid, has_nc_);
    } catch (const std::bad_alloc&) {
      disarm_owners(global_);
      return Parallel::declined;
    }
    race_.private_global();  // cross-CTA conflicts are the claims' (cta_pool.h); no page locks
    PoolOutcome o;
    try {
      o = run_cta_pool(
          L, ctas, static_cast<uint32_t>(threads),
          [&](const Launch& W, uint64_t linear) { return make_cta(W, fn, linear, cta_threads); },
          [&](Cta& cta) { race_.end_cta(cta.race); });
    } catch (...) {
      disarm_owners(global_);
      snapshot->restore();
      throw;
    }
    disarm_owners(global_);
    uint64_t shadow = race_.shadow_peak() + race_.private_global_bytes();
    if (!o.clean || shadow > race_.shadow_limit() / kParallelShadowShare) {
      snapshot->restore();
      return Parallel::thrown_away;
    }
    for (size_t f = 0; f < counts_.size(); ++f)
      for (size_t i = 0; i < counts_[f].size(); ++i) {
        counts_[f][i].warp_issues += o.counts[f][i].warp_issues;
        counts_[f][i].lane_executions += o.counts[f][i].lane_executions;
      }
    res.lane_instructions = o.lane_instructions;
    res.host_threads = o.threads_used;
    return Parallel::kept;
  }

  std::unique_ptr<Cta> make_cta(const Launch& L, const Function& fn, uint64_t linear, uint32_t threads) {
    const Dim3& g = L.config.grid;
    auto cta = std::make_unique<Cta>();
    cta->id = {static_cast<uint32_t>(linear % g[0]), static_cast<uint32_t>(linear / g[0] % g[1]),
               static_cast<uint32_t>(linear / (uint64_t{g[0]} * g[1]))};
    cta->linear = static_cast<uint32_t>(linear);
    cta->threads = threads;
    cta->shared.assign(L.shared_bytes, 0);
    cta->shared_init.assign(L.shared_bytes, 0);
    cta->stacks.resize(threads);
    uint32_t nwarps = (threads + 31) / 32;
    cta->warps.resize(nwarps);
    for (uint32_t w = 0; w < nwarps; ++w) {
      Warp& wp = cta->warps[w];
      wp.index = w;
      int32_t f = wp.new_frame(fn, L.entry, -1);
      for (uint32_t l = 0; l < 32; ++l) {
        bool present = w * 32 + l < threads;
        wp.state[l] = present ? LaneState::run : LaneState::absent;
        wp.frame[l] = f;
        wp.frames[static_cast<size_t>(f)].refs += present;
      }
    }
    cta->race = race_.begin_cta(static_cast<uint32_t>(linear));
    return cta;
  }

  // Names an address of a race finding: the buffer or module variable, or shared memory.
  std::optional<RaceLocation> locate(RaceSpace space, uint64_t address) const {
    if (space == RaceSpace::shared) return RaceLocation{"shared memory", address};
    const Alloc* a = global_.find(address, 1);
    if (!a) return std::nullopt;
    return RaceLocation{a->name, address - a->base};
  }

  const Function* find_entry(std::string_view name) const {
    for (auto& f : prog_.fns)
      if (f.is_entry && f.name == name) return &f;
    return nullptr;
  }

  Program prog_;
  AllocMap global_, consts_;
  std::vector<std::vector<Counts>> counts_;
  uint32_t launches_ = 0;
  bool has_nc_ = false;
  std::vector<bool> parallel_;  // per function: may run its CTAs on several host threads
  RaceDetector race_;  // after global_: its resolver reads it
};

}  // namespace

std::variant<std::unique_ptr<Machine>, Finding> Machine::create(const ptx::Module& module) {
  auto lowered = lower(module);
  if (auto* f = std::get_if<Finding>(&lowered)) return std::move(*f);
  return std::unique_ptr<Machine>(new MachineImpl(std::move(std::get<Program>(lowered))));
}

}  // namespace ptxforge::emu
