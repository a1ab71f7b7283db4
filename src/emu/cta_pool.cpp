// The parallel launch (emu/cta_pool.h): which kernels may run their CTAs on several host
// threads, the snapshot that lets a thrown-away run leave no trace, and the threads
// themselves. Why a clean parallel run equals the one-thread run: CTAs of an eligible kernel
// share nothing but global memory, and nothing in them can order two CTAs' accesses, so the
// first value a CTA reads that another CTA wrote (or the first byte two CTAs write) is a
// conflict that Alloc::claim sees in any interleaving; with none, every CTA read only initial
// bytes and its own writes, exactly as on one thread, and its checks (races among its own
// threads included: a global granule with stamps of two CTAs was only ever read) came out the
// same. The lane-instruction total is the same sum; each output element has one writer CTA.
#include "emu/cta_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "emu/limits.h"

namespace ptxforge::emu {

namespace {

// Rounds a worker's resident CTAs run before it admits another (see run_cta_pool).
constexpr uint32_t kGrowRounds = 16;

// Whether one instruction leaves every cross-CTA access unordered. Listed op by op (no
// default): an op added later must be decided here before the build is warning-free.
bool cta_local(const Function& fn, size_t i) {
  const Inst& in = fn.code[i];
  bool may_be_global = in.space == Space::global || in.space == Space::generic;
  switch (in.op) {
    case Op::ld: case Op::st:
      // A strong (.relaxed/.acquire/.release, .volatile, .mmio) global access can be half of a
      // release/acquire pair or of a morally strong pair with another CTA.
      return !may_be_global || in.sem == MemOrder::weak;
    case Op::atom: case Op::red:
      return !may_be_global;  // .shared atomics stay in their CTA
    case Op::fence:
      return in.scope == MemScope::cta || in.scope == MemScope::cluster;  // a CTA is its own cluster
    case Op::nop:
      // Proxy and mbarrier fences lower to nop with their scope dropped: not known to be local.
      return !fn.opcodes[i].starts_with("fence") && !fn.opcodes[i].starts_with("membar");
    case Op::mov: case Op::mov_pack: case Op::mov_unpack: case Op::cvta_to: case Op::cvta_from:
    case Op::add: case Op::sub: case Op::mul_lo: case Op::mul_hi: case Op::mul_wide: case Op::mad_lo:
    case Op::mad_hi: case Op::mad_wide: case Op::mul24_lo: case Op::mul24_hi: case Op::mad24_lo:
    case Op::mad24_hi: case Op::add_cc: case Op::addc: case Op::sub_cc: case Op::subc: case Op::mad_cc:
    case Op::madc: case Op::div: case Op::rem: case Op::abs: case Op::neg: case Op::min: case Op::max:
    case Op::and_: case Op::or_: case Op::xor_: case Op::not_: case Op::cnot: case Op::shl: case Op::shr:
    case Op::selp: case Op::slct: case Op::setp: case Op::set: case Op::fma: case Op::rcp: case Op::sqrt:
    case Op::rsqrt: case Op::ex2: case Op::lg2: case Op::sin: case Op::cos: case Op::tanh:
    case Op::copysign: case Op::testp: case Op::cvt: case Op::popc: case Op::clz: case Op::bfind:
    case Op::brev: case Op::bfe: case Op::bfi: case Op::prmt: case Op::lop3: case Op::shf: case Op::dp4a:
    case Op::dp2a: case Op::bmsk: case Op::szext:
    case Op::bra: case Op::ret: case Op::exit: case Op::call: case Op::trap:
    case Op::bar_sync: case Op::bar_arrive: case Op::bar_red: case Op::bar_warp_sync:
    case Op::shfl: case Op::vote: case Op::activemask: case Op::match: case Op::redux: case Op::elect:
      return true;  // registers, the CTA's barriers and its warps' collectives
  }
  return false;
}

}  // namespace

std::vector<bool> parallel_functions(const Program& prog) {
  size_t n = prog.fns.size();
  std::vector<bool> own(n, true), indirect(n, false);
  std::vector<std::vector<uint32_t>> callees(n);
  for (size_t f = 0; f < n; ++f)
    for (size_t i = 0; i < prog.fns[f].code.size(); ++i) {
      const Inst& in = prog.fns[f].code[i];
      own[f] = own[f] && cta_local(prog.fns[f], i);
      if (in.op == Op::call && in.flag) indirect[f] = true;
      else if (in.op == Op::call && in.target < n) callees[f].push_back(in.target);
    }
  bool all_own = std::all_of(own.begin(), own.end(), [](bool b) { return b; });
  std::vector<bool> out(n, false);
  for (size_t f = 0; f < n; ++f) {
    // Everything reachable from f; a call through a register may reach any function.
    std::vector<bool> seen(n, false);
    std::vector<uint32_t> stack{static_cast<uint32_t>(f)};
    bool ok = true;
    seen[f] = true;
    while (!stack.empty() && ok) {
      uint32_t g = stack.back();
      stack.pop_back();
      ok = own[g] && (!indirect[g] || all_own);
      for (uint32_t c : callees[g])
        if (!seen[c]) seen[c] = true, stack.push_back(c);
    }
    out[f] = ok;
  }
  return out;
}

uint32_t host_threads(uint32_t configured) {
  if (configured) return configured;
  static const uint32_t from_env = [] {
    if (const char* v = std::getenv(kHostThreadsEnv); v && *v) {
      char* end = nullptr;
      unsigned long n = std::strtoul(v, &end, 10);
      if (end && *end == 0 && n >= 1) return static_cast<uint32_t>(std::min<unsigned long>(n, 256));
    }
    unsigned hw = std::thread::hardware_concurrency();
    return std::max<uint32_t>(1, std::min<uint32_t>(hw ? hw : 1, kDefaultHostThreads));
  }();
  return from_env;
}

GlobalSnapshot::GlobalSnapshot(AllocMap& global) {
  global.each([&](Alloc& a) { saved_.push_back({&a, a.bytes, a.init, a.writers, a.written_launch}); });
}

void GlobalSnapshot::restore() {
  for (Saved& s : saved_) {
    s.alloc->bytes = std::move(s.bytes);
    s.alloc->init = std::move(s.init);
    s.alloc->writers = std::move(s.writers);
    // The rerun has the same grid id: its first write must start the written record afresh.
    s.alloc->written_launch = s.written_launch;
  }
  saved_.clear();
}

void arm_owners(AllocMap& global, uint32_t gridid, bool track_nc) {
  global.each([&](Alloc& a) {
    size_t granules = (a.bytes.size() + 3) / 4;
    a.owners = std::make_unique<std::atomic<uint64_t>[]>(granules);
    for (size_t g = 0; g < granules; ++g) a.owners[g].store(0, std::memory_order_relaxed);
    if (track_nc) {
      a.written.assign(a.bytes.size(), 0);
      a.written_launch = gridid;
    }
  });
}

void disarm_owners(AllocMap& global) {
  global.each([](Alloc& a) { a.owners.reset(); });
}

PoolOutcome run_cta_pool(const Launch& proto, uint64_t ctas, uint32_t threads, const MakeCta& make, const EndCta& end) {
  std::atomic<uint64_t> next{0}, lanes{0};
  std::atomic<bool> stop{false};
  std::atomic<uint32_t> used{0};
  std::mutex error_lock;
  std::exception_ptr error;
  std::vector<std::vector<std::vector<Counts>>> counts(threads);
  const uint64_t budget = proto.config.budget;

  auto work = [&](uint32_t k) {
    try {
      Launch L = proto;
      counts[k].resize(proto.counts->size());
      for (size_t f = 0; f < proto.counts->size(); ++f) counts[k][f].resize((*proto.counts)[f].size());
      L.counts = &counts[k];
      L.lane_instructions = 0;
      L.finding.reset();
      // Resident CTAs, rotated round by round as on one thread. A worker starts with one and
      // admits another (the next in linear order, up to kResidentCtas) when its residents have
      // all run kGrowRounds rounds since the last admission: a CTA that waits on a later one
      // (a spin on a flag) gets it resident as on one thread, while short CTAs spread evenly.
      std::deque<std::unique_ptr<Cta>> resident;
      uint32_t rounds = kGrowRounds;
      bool ran = false, more = true;
      while (!stop.load(std::memory_order_relaxed)) {
        if (more && resident.size() < limits::kResidentCtas && (resident.empty() || rounds >= kGrowRounds)) {
          uint64_t id = next.fetch_add(1, std::memory_order_relaxed);
          if (id < ctas) {
            resident.push_back(make(L, id));
            ran = true;
            rounds = 0;
          } else {
            more = false;
          }
        }
        if (resident.empty()) break;
        for (auto it = resident.begin(); it != resident.end();) {
          uint64_t before = L.lane_instructions;
          CtaStep st = step_cta(L, **it);
          uint64_t spent = L.lane_instructions - before;
          uint64_t total = lanes.fetch_add(spent, std::memory_order_relaxed) + spent;
          // A finding, or the launch's budget crossed by all threads together: the one-thread
          // run decides (it stops at the exact lane-instruction the budget is crossed at).
          if (st == CtaStep::stopped || total > budget || stop.load(std::memory_order_relaxed)) {
            stop.store(true, std::memory_order_relaxed);
            break;
          }
          if (st == CtaStep::done) {
            end(**it);
            it = resident.erase(it);
          } else {
            ++it;
          }
        }
        ++rounds;
      }
      if (ran) used.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
      stop.store(true);
      std::lock_guard guard(error_lock);
      if (!error) error = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (uint32_t k = 1; k < threads; ++k) {
      try {
        pool.emplace_back(work, k);
      } catch (const std::system_error&) {
        break;  // no more threads to be had: the ones started (and this one) take every CTA
      }
    }
    work(0);
  }  // joined
  if (error) std::rethrow_exception(error);

  PoolOutcome out;
  out.clean = !stop.load();
  out.lane_instructions = lanes.load();
  out.threads_used = used.load();
  out.counts = std::move(counts[0]);
  for (uint32_t k = 1; k < threads; ++k)
    for (size_t f = 0; f < counts[k].size(); ++f)  // empty where no thread could be started
      for (size_t i = 0; i < out.counts[f].size(); ++i) {
        out.counts[f][i].warp_issues += counts[k][f][i].warp_issues;
        out.counts[f][i].lane_executions += counts[k][f][i].lane_executions;
      }
  return out;
}

}  // namespace ptxforge::emu
