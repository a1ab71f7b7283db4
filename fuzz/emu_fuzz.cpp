// libFuzzer target for the CPU engine (docs/emu.md): the engine interprets PTX a model wrote, so
// any module that validates must lower and run to a result or a finding, never to a crash, an
// assert, undefined behaviour, a hang past its budget or a runaway allocation. An input is PTX
// text; only what the front end accepts without errors goes on (the engine never sees anything
// else). Each of its first two entries runs once on a tiny grid over small buffers with a small
// lane-instruction budget, so a loop ends quickly as a `budget` finding. Findings are the engine
// working; a crash, an assert, a sanitizer report, a timeout (-timeout) or running out of memory
// (-rss_limit_mb) is a failure. One host thread: a run must be reproducible from its input alone.
// Its front end is built without coverage counters (fuzz/CMakeLists.txt), so only inputs that
// reach new engine code count as progress. EMU_FUZZ_VERBOSE=1 prints each launch's outcome.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "emu/engine.h"
#include "ptx/front_end.h"

namespace {

using namespace ptxforge;

constexpr int kMaxEntries = 2;
constexpr uint64_t kBufferBytes = 4096;
constexpr size_t kMaxBuffers = 16;  // pointer-sized parameters given a buffer of their own
constexpr uint32_t kScalar = 100;    // every 4-byte parameter: a small count, a tiny float
constexpr uint32_t kDynamicSmem = 1024;
constexpr uint64_t kBudget = uint64_t{1} << 16;  // lane-instructions a launch

// An entry's .reqntid / .maxntid as a thread count per dimension (0: not declared).
struct ThreadBounds {
  emu::Dim3 req{0, 0, 0};
  uint64_t max_threads = 0;
};

emu::Dim3 dims_of(const ptx::Directive& d) {
  emu::Dim3 out{1, 1, 1};
  size_t k = 0;
  for (std::string_view a : d.args) {
    uint32_t v = 0;
    if (k < 3 && std::from_chars(a.data(), a.data() + a.size(), v).ec == std::errc{}) out[k++] = v;
  }
  return out;
}

ThreadBounds bounds_of(const ptx::Function& f) {
  ThreadBounds b;
  for (const ptx::Directive& d : f.perf) {
    if (d.name == ".reqntid") b.req = dims_of(d);
    if (d.name == ".maxntid") {
      emu::Dim3 m = dims_of(d);
      b.max_threads = uint64_t{m[0]} * m[1] * m[2];
    }
  }
  return b;
}

// EMU_FUZZ_VERBOSE=1: each launch's outcome on stderr, to see what an input does.
bool verbose() {
  static const bool on = std::getenv("EMU_FUZZ_VERBOSE") != nullptr;
  return on;
}

emu::ParamBytes le_bytes(uint64_t v, uint32_t size) {
  emu::ParamBytes p(size, 0xa5);
  std::memcpy(p.data(), &v, std::min<uint32_t>(size, 8));
  return p;
}

// What every buffer holds: 32-bit words that are, in turn, a small count (an index, a form id,
// a loop bound: data-dependent branches and addresses stay near the buffers), a float in a
// usual range, a hash with high bits set (signs, NaN patterns, wide shifts), and zero.
std::vector<uint8_t> buffer_pattern() {
  std::vector<uint8_t> out(kBufferBytes);
  for (uint32_t k = 0; k < kBufferBytes / 4; ++k) {
    float f = static_cast<float>(k) * 0.37f - 20.0f;
    uint32_t w = 0;
    switch (k % 4) {
      case 0: w = k / 4 % 384; break;
      case 1: std::memcpy(&w, &f, 4); break;
      case 2: w = k * 2654435761u; break;
      default: w = 0;
    }
    std::memcpy(out.data() + 4 * k, &w, 4);
  }
  return out;
}

// One launch of `entry` on a grid of 2 CTAs of up to 64 threads: pointer-sized parameters get a
// 4 KiB buffer each (alternately inputs and outputs that start never written), scalars of 1 to
// 4 bytes a small count, anything else (structs, arrays) zero then a fixed byte pattern.
void run_entry(emu::Machine& m, const ptx::Function& f) {
  std::string name(f.name);
  auto sizes = m.param_sizes(name);
  if (!sizes) return;
  std::vector<uint8_t> fill = buffer_pattern();
  std::vector<emu::ParamBytes> params;
  size_t buffers = 0;
  for (uint32_t size : *sizes) {
    if (size == 8 && buffers < kMaxBuffers) {
      bool output = buffers % 2 == 1;
      uint64_t a = m.alloc("p" + std::to_string(params.size()), kBufferBytes,
                           output ? emu::Init::unwritten : emu::Init::written, output);
      m.write(a, fill);
      ++buffers;
      params.push_back(le_bytes(a, 8));
    } else if (size == 4 || size == 2 || size == 1) {
      params.push_back(le_bytes(kScalar, size));
    } else {
      params.push_back(le_bytes(0, size));
    }
  }
  ThreadBounds b = bounds_of(f);
  emu::LaunchConfig cfg;
  cfg.grid = {2, 1, 1};
  cfg.block = {64, 1, 1};
  if (b.req[0] != 0) cfg.block = b.req;
  else if (b.max_threads != 0) cfg.block = {static_cast<uint32_t>(std::min<uint64_t>(b.max_threads, 64)), 1, 1};
  cfg.dynamic_smem = kDynamicSmem;
  cfg.budget = kBudget;
  cfg.host_threads = 1;
  emu::LaunchResult r = m.launch(name, cfg, params);
  if (verbose()) {
    std::string outcome = r.finding ? std::string(emu::to_string(r.finding->kind)) + ": " + r.finding->message : "ok";
    std::fprintf(stderr, "emu_fuzz: %s: block %u, %llu lane-instructions, %s\n", name.c_str(),
                 cfg.block[0] * cfg.block[1] * cfg.block[2], static_cast<unsigned long long>(r.lane_instructions),
                 outcome.c_str());
  }
  m.free_buffers();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // As the engine's own loader validates (emu/executor.cpp): errors stop here, warnings do not.
  auto checked = ptx::check_source(text, {.warnings = false});
  if (!checked.ok()) return 0;
  auto made = emu::Machine::create(checked.module);
  if (auto* f = std::get_if<emu::Finding>(&made)) {
    if (verbose()) std::fprintf(stderr, "emu_fuzz: not lowered: %s\n", f->message.c_str());
    return 0;
  }
  auto& machine = std::get<std::unique_ptr<emu::Machine>>(made);
  int entries = 0;
  for (const ptx::TopItem& item : checked.module.items) {
    auto* f = std::get_if<ptx::Function>(&item.node);
    if (!f || !f->is_entry || !f->body) continue;
    run_entry(*machine, *f);
    if (++entries == kMaxEntries) break;
  }
  return 0;
}
