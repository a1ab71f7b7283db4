// emu::Executor against a fake Machine (the engine proper is tested in its own files): the
// job's size sets and seeds are the worker's, the inputs are task/host_case.h's, the reference
// and the candidate run with their launch shapes and budget, a wrong element comes back with
// its expected and actual values and its last writer or "never written", an engine finding
// becomes a Failure at its PTX line, and the kinds the engine does not answer fail as such.
#include "emu/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "emu/executor_detail.h"
#include "ptx/front_end.h"
#include "task/buffers.h"
#include "task/host_case.h"
#include "task/launch_spec.h"
#include "task/seeds.h"
#include "util/text.h"

namespace ptxforge::emu {
namespace {

const std::string kDir = std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add";

// Buffers as the engine keeps them: exact bytes, and a last writer per element where tracked.
class FakeMachine : public Machine {
 public:
  struct Buf {
    std::string name;
    std::vector<uint8_t> bytes;
    bool track = false;
    uint32_t elem = 4;
    std::vector<std::optional<Writer>> writers;
  };
  using Kernel = std::function<LaunchResult(FakeMachine&, const LaunchConfig&, std::span<const ParamBytes>)>;

  // What the launches saw, kept beyond the machine (the executor frees it with the job).
  struct Log {
    std::vector<std::string> entries;
    std::vector<LaunchConfig> configs;
  };

  FakeMachine(Kernel k, std::shared_ptr<Log> log) : log_(std::move(log)), kernel_(std::move(k)) {}

  uint64_t alloc(std::string name, uint64_t bytes, Init, bool track, uint32_t elem) override {
    uint64_t base = (uint64_t{bufs_.size()} + 1) << 32;
    bufs_[base] = Buf{std::move(name), std::vector<uint8_t>(bytes, 0), track, elem,
                      std::vector<std::optional<Writer>>(track ? bytes / elem : 0)};
    return base;
  }
  void write(uint64_t a, std::span<const uint8_t> b) override { std::memcpy(at(a), b.data(), b.size()); }
  std::vector<uint8_t> read(uint64_t a, uint64_t n) const override {
    auto* p = const_cast<FakeMachine*>(this)->at(a);
    return std::vector<uint8_t>(p, p + n);
  }
  std::optional<Writer> last_writer(uint64_t a) const override {
    auto& [base, b] = *std::prev(bufs_.upper_bound(a));
    return b.writers.at((a - base) / b.elem);
  }
  void free_buffers() override { bufs_.clear(); }
  LaunchResult launch(std::string_view entry, const LaunchConfig& cfg, std::span<const ParamBytes> params) override {
    log_->entries.emplace_back(entry);
    log_->configs.push_back(cfg);
    return kernel_(*this, cfg, params);
  }
  std::optional<std::vector<uint32_t>> param_sizes(std::string_view entry) const override {
    if (entry != "vector_add" && entry != "vector_add_ref") return std::nullopt;
    return std::vector<uint32_t>{8, 8, 8, 4};
  }
  std::vector<InstructionCount> counts() const override { return counts_; }

  // A store by thread (i % 256) of CTA (i / 256) at line `line`, as the engine records it.
  void store_f32(uint64_t a, float v, uint64_t i, uint32_t line) {
    std::memcpy(at(a), &v, 4);
    auto& [base, b] = *std::prev(bufs_.upper_bound(a));
    if (b.track) b.writers.at((a - base) / b.elem) = Writer{{{uint32_t(i / 256), 0, 0}, {uint32_t(i % 256), 0, 0}}, {line, 5}};
  }
  float load_f32(uint64_t a) {
    float v;
    std::memcpy(&v, at(a), 4);
    return v;
  }
  const Buf& buffer(const std::string& name) const {
    for (auto& [base, b] : bufs_)
      if (b.name == name) return b;
    throw std::runtime_error("no buffer " + name);
  }

  std::vector<InstructionCount> counts_;

 private:
  uint8_t* at(uint64_t a) {
    auto it = std::prev(bufs_.upper_bound(a));
    return it->second.bytes.data() + (a - it->first);
  }
  std::map<uint64_t, Buf> bufs_;
  std::shared_ptr<Log> log_;
  Kernel kernel_;
};

uint64_t addr(std::span<const ParamBytes> p, int i) {
  uint64_t a;
  std::memcpy(&a, p[i].data(), 8);
  return a;
}
uint32_t u32(std::span<const ParamBytes> p, int i) {
  uint32_t v;
  std::memcpy(&v, p[i].data(), 4);
  return v;
}

// c[i] = a[i] + b[i] for i < n - skip; `wrong_at` stores 0.25 there instead.
FakeMachine::Kernel vector_add(uint32_t skip = 0, std::optional<uint64_t> wrong_at = {}) {
  return [=](FakeMachine& m, const LaunchConfig&, std::span<const ParamBytes> p) {
    uint64_t a = addr(p, 0), b = addr(p, 1), c = addr(p, 2);
    uint32_t n = u32(p, 3);
    for (uint64_t i = 0; i + skip < n; ++i)
      m.store_f32(c + 4 * i, wrong_at == i ? 0.25f : m.load_f32(a + 4 * i) + m.load_f32(b + 4 * i), i, 30);
    return LaunchResult{};
  };
}

struct Fakes {
  FakeMachine::Kernel reference = vector_add(), candidate = vector_add();
  std::optional<Finding> refuse;  // Machine::create's answer for the candidate
  std::shared_ptr<FakeMachine::Log> ref = std::make_shared<FakeMachine::Log>();
  std::shared_ptr<FakeMachine::Log> cand = std::make_shared<FakeMachine::Log>();
  std::vector<InstructionCount> counts = {{{30, 5}, "st.global.f32", 4, 128}};
  MachineFactory factory() {
    return [this](const ptx::Module& m) -> std::variant<std::unique_ptr<Machine>, Finding> {
      bool is_ref = m.source.find("vector_add_ref") != std::string_view::npos;
      if (!is_ref && refuse) return *refuse;
      auto fm = std::make_unique<FakeMachine>(is_ref ? reference : candidate, is_ref ? ref : cand);
      if (!is_ref) fm->counts_ = counts;
      return fm;
    };
  }
};

gpu::Job verify_job(std::vector<std::string> sets = {"small", "tail"}) {
  gpu::Job j;
  j.kind = gpu::JobKind::verify;
  j.task_dir = kDir;
  j.candidate_ptx = kDir + "/solution.ptx";
  j.reference_ptx = kDir + "/reference.ptx";
  j.seeds = 2;
  j.seed = 0x5eed;
  j.size_sets = std::move(sets);
  j.emu_budget = 12345;
  auto text = read_file(j.candidate_ptx);
  auto checked = ptx::check_source(*text);
  auto spec = task::parse_launch_comments(*text, "solution.ptx");
  auto t = task::load_task(kDir);
  EXPECT_TRUE(spec.ok() && t.ok());
  EXPECT_TRUE(task::check_launch_spec(*spec, *t, checked.module, "solution.ptx").ok());
  j.launch = *spec;
  return j;
}

// The prove stage holds each case to its own floors: every case carries the candidate's warp
// executions during that case alone (the machine's counts are totals since it was made).
TEST(EmuExecutor, EachCaseCarriesItsOwnWarpExecutions) {
  Fakes f;
  f.counts = {{{30, 5}, "st.global.f32", 0, 0}};
  uint64_t launches = 0;
  f.candidate = [&](FakeMachine& m, const LaunchConfig& cfg, std::span<const ParamBytes> p) {
    m.counts_[0].warp_issues += ++launches;  // 1, 2, 3, 4: one launch per case
    return vector_add()(m, cfg, p);
  };
  Executor ex(f.factory());
  gpu::Outcome o = ex.run(verify_job());
  ASSERT_FALSE(o.failure) << o.failure->message;
  ASSERT_EQ(o.verify->cases.size(), 4u);
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(o.verify->cases[i].executed, std::vector<uint64_t>{i + 1}) << i;
  EXPECT_EQ(o.verify->counts[0].warp_issues, 10u) << "the sum over the cases";
}

TEST(EmuExecutor, RunsTheWorkersSetsAndSeedsOnTheWorkersInputs) {
  Fakes f;
  std::vector<std::vector<uint8_t>> inputs_a;
  f.candidate = [&](FakeMachine& m, const LaunchConfig& cfg, std::span<const ParamBytes> p) {
    inputs_a.push_back(m.read(addr(p, 0), 4 * u32(p, 3)));
    return vector_add()(m, cfg, p);
  };
  Executor ex(f.factory());
  gpu::Job job = verify_job();
  gpu::Outcome o = ex.run(job);
  ASSERT_FALSE(o.failure) << o.failure->message;
  ASSERT_TRUE(o.verify);
  EXPECT_EQ(o.verify->engine, gpu::Engine::cpu);
  EXPECT_TRUE(o.verify->pass());
  // small (shown) and tail (held back) x 2 seeds, in the task's order; `held_back` allows tail.
  ASSERT_EQ(o.verify->cases.size(), 4u);
  auto t = task::load_task(kDir);
  for (int i = 0; i < 4; ++i) {
    const gpu::CaseResult& c = o.verify->cases[i];
    std::string set = i < 2 ? "small" : "tail";
    EXPECT_EQ(c.size_set, set);
    EXPECT_EQ(c.shown, set == "small");
    EXPECT_EQ(c.seed_index, i % 2 + 1);
    uint64_t seed = task::derive_seed(0x5eed, task::SeedUse::verify, task::size_set_key(set), uint64_t(i % 2 + 1));
    EXPECT_EQ(c.seed, seed);
    // The inputs the candidate saw are the worker's for that seed, bit for bit.
    const task::SizeSet* s = nullptr;
    for (auto* x : t->size_sets(true))
      if (x->name == set) s = x;
    auto h = task::make_host_case(*t, *s, seed);
    ASSERT_TRUE(h.ok());
    EXPECT_TRUE(std::equal(inputs_a[i].begin(), inputs_a[i].end(), h->in.at("a").begin(), h->in.at("a").end()));
    EXPECT_EQ(inputs_a[i].size(), set == "small" ? 4096u : 4 * 4099u);
  }
  // The reference's launch is task.toml's; the candidate's its spec's (min(ceil_div(n, 256), 1056) blocks of 256).
  ASSERT_EQ(f.ref->configs.size(), 4u);
  EXPECT_EQ(f.ref->entries[0], "vector_add_ref");
  EXPECT_EQ(f.ref->configs[2].grid, (Dim3{17, 1, 1}));  // ceil(4099 / 256)
  EXPECT_EQ(f.cand->entries[0], "vector_add");
  EXPECT_EQ(f.cand->configs[0].grid, (Dim3{4, 1, 1}));
  EXPECT_EQ(f.cand->configs[0].block, (Dim3{256, 1, 1}));
  EXPECT_EQ(f.cand->configs[0].budget, 12345u);
  // The counts are the candidate machine's, not the reference's.
  ASSERT_EQ(o.verify->counts.size(), 1u);
  EXPECT_EQ(o.verify->counts[0].line, 30u);
  EXPECT_EQ(o.verify->counts[0].opcode, "st.global.f32");
  EXPECT_EQ(o.verify->counts[0].lane_executions, 128u);

  // Without held-back sets, tail is not run.
  job.held_back = false;
  inputs_a.clear();
  o = ex.run(job);
  ASSERT_TRUE(o.verify);
  EXPECT_EQ(o.verify->cases.size(), 2u);
}

TEST(EmuExecutor, AnUnwrittenLastElementIsNamedWithItsValues) {
  Fakes f;
  f.candidate = vector_add(/*skip=*/1);
  Executor ex(f.factory());
  gpu::Outcome o = ex.run(verify_job({"small"}));
  ASSERT_TRUE(o.verify) << o.failure->message;
  ASSERT_EQ(o.verify->cases.size(), 2u);
  const gpu::CaseResult& c = o.verify->cases[0];
  EXPECT_FALSE(c.pass);
  ASSERT_EQ(c.wrong.size(), 1u);
  const gpu::WrongElement& w = c.wrong[0];
  EXPECT_EQ(w.output, "c");
  EXPECT_EQ(w.index, 1023u);
  EXPECT_TRUE(w.never_written);
  EXPECT_FALSE(w.writer);
  EXPECT_EQ(w.actual, "nan") << "an element never written reads as the worker's poison, a NaN in f32";
  // The expected value is a[1023] + b[1023] of the case's inputs.
  auto t = task::load_task(kDir);
  auto h = task::make_host_case(*t, *t->size_sets(false)[0], c.seed);
  float a, b;
  std::memcpy(&a, h->in.at("a").data() + 4 * 1023, 4);
  std::memcpy(&b, h->in.at("b").data() + 4 * 1023, 4);
  EXPECT_EQ(w.expected, fmt::format("{}", a + b));
  // The comparison counts it as never written, as the worker's poison would.
  EXPECT_EQ(c.outputs[0].never_written, 1u);
}

TEST(EmuExecutor, AWrongElementNamesItsLastWriter) {
  Fakes f;
  f.candidate = vector_add(0, /*wrong_at=*/517);
  Executor ex(f.factory());
  gpu::Outcome o = ex.run(verify_job({"small"}));
  ASSERT_TRUE(o.verify);
  const gpu::CaseResult& c = o.verify->cases[0];
  EXPECT_FALSE(c.pass);
  ASSERT_EQ(c.wrong.size(), 1u);
  EXPECT_EQ(c.wrong[0].index, 517u);
  EXPECT_EQ(c.wrong[0].actual, "0.25");
  EXPECT_FALSE(c.wrong[0].never_written);
  ASSERT_TRUE(c.wrong[0].writer);
  EXPECT_EQ(c.wrong[0].writer->thread.cta, (std::array<uint32_t, 3>{2, 0, 0}));     // 517 / 256
  EXPECT_EQ(c.wrong[0].writer->thread.thread, (std::array<uint32_t, 3>{5, 0, 0}));  // 517 % 256
  EXPECT_EQ(c.wrong[0].writer->line, 30u);
  EXPECT_EQ(c.outputs[0].never_written, 0u);
}

TEST(EmuExecutor, AModifiedInputIsAProblem) {
  Fakes f;
  f.candidate = [](FakeMachine& m, const LaunchConfig& cfg, std::span<const ParamBytes> p) {
    auto r = vector_add()(m, cfg, p);
    m.store_f32(addr(p, 1) + 4 * 9, 42.0f, 9, 31);  // b[9]
    return r;
  };
  Executor ex(f.factory());
  gpu::Outcome o = ex.run(verify_job({"small"}));
  ASSERT_TRUE(o.verify);
  EXPECT_FALSE(o.verify->cases[0].pass);
  ASSERT_EQ(o.verify->cases[0].problems.size(), 1u);
  EXPECT_EQ(o.verify->cases[0].problems[0], "input 'b' was modified (first changed element: 9)");
}

TEST(EmuExecutor, AFindingFailsTheJobAtItsLine) {
  Fakes f;
  f.candidate = [](FakeMachine&, const LaunchConfig&, std::span<const ParamBytes>) {
    LaunchResult r;
    Finding fd;
    fd.kind = FindingKind::oob;
    fd.message = "read of 4 bytes at offset 16396 of 'b' (16396 bytes)";
    fd.pos = {24, 5};
    fd.who = ThreadId{{16, 0, 0}, {3, 0, 0}};
    fd.buffer = "b";
    fd.offset = 16396;
    r.finding = fd;
    return r;
  };
  Executor ex(f.factory());
  gpu::Outcome o = ex.run(verify_job({"tail"}));
  ASSERT_TRUE(o.failure);
  EXPECT_FALSE(o.verify);
  const gpu::Failure& fl = *o.failure;
  EXPECT_EQ(fl.kind, gpu::FailureKind::fault);
  EXPECT_TRUE(fl.out_of_bounds);
  EXPECT_TRUE(fl.guarded.empty()) << "the buffer is named already: no locate job";
  EXPECT_EQ(fl.message,
            "out-of-bounds access: solution.ptx:24:5: read of 4 bytes at offset 16396 of 'b' (16396 bytes) "
            "(thread (3,0,0) of CTA (16,0,0))");
  EXPECT_EQ(fl.where, "size set 'tail', seed 1");
  EXPECT_TRUE(fl.held_back) << "tail is a held-back set";
  EXPECT_EQ(fl.size_set, "tail");
  ASSERT_TRUE(fl.finding);
  EXPECT_EQ(fl.finding->check, "emu-oob");
  EXPECT_EQ(fl.finding->line, 24u);
  EXPECT_EQ(fl.finding->buffer, "b");
  EXPECT_EQ(fl.finding->offset, 16396u);
  ASSERT_TRUE(fl.finding->thread);
  EXPECT_EQ(fl.finding->thread->cta, (std::array<uint32_t, 3>{16, 0, 0}));
}

TEST(EmuExecutor, FindingKindsMapToFailureKinds) {
  using gpu::FailureKind;
  EXPECT_EQ(detail::failure_kind_of(FindingKind::race), FailureKind::race);
  EXPECT_EQ(detail::failure_kind_of(FindingKind::uninit), FailureKind::uninitialized);
  EXPECT_EQ(detail::failure_kind_of(FindingKind::misaligned), FailureKind::misaligned);
  EXPECT_EQ(detail::failure_kind_of(FindingKind::barrier_divergence), FailureKind::barrier);
  EXPECT_EQ(detail::failure_kind_of(FindingKind::deadlock), FailureKind::barrier);
  EXPECT_EQ(detail::failure_kind_of(FindingKind::warp_mask), FailureKind::warp_sync);
  EXPECT_EQ(detail::failure_kind_of(FindingKind::budget), FailureKind::budget);
  EXPECT_EQ(detail::failure_kind_of(FindingKind::limit), FailureKind::unsupported);
  EXPECT_EQ(detail::failure_kind_of(FindingKind::trap), FailureKind::fault);
}

TEST(EmuExecutor, AConstructTheEngineDoesNotRunIsUnsupportedNeverAVerdict) {
  Fakes f;
  Finding refused;
  refused.kind = FindingKind::unsupported;
  refused.message = "not supported by the CPU engine: wgmma.mma_async";
  refused.pos = {88, 5};
  f.refuse = refused;
  Executor ex(f.factory());
  gpu::Outcome o = ex.run(verify_job());
  ASSERT_TRUE(o.failure);
  EXPECT_FALSE(o.verify);
  EXPECT_EQ(o.failure->kind, gpu::FailureKind::unsupported);
  EXPECT_EQ(o.failure->message, "not supported by the CPU engine: wgmma.mma_async at solution.ptx:88");
}

TEST(EmuExecutor, ALaunchTheGpuRefusesIsRefusedHere) {
  Fakes f;
  Executor ex(f.factory());
  gpu::Job job = verify_job({"small"});
  auto b = task::Dim3Expr::parse("(2048, 1, 1)");
  job.launch.launches[0].block = *b;
  gpu::Outcome o = ex.run(job);
  ASSERT_TRUE(o.failure);
  EXPECT_EQ(o.failure->kind, gpu::FailureKind::launch);
  EXPECT_NE(o.failure->message.find("block (2048, 1, 1)"), std::string::npos) << o.failure->message;
  EXPECT_TRUE(f.cand->entries.empty()) << "nothing ran";
}

TEST(EmuExecutor, TimingKindsAndLocateAreUnsupported) {
  Fakes f;
  Executor ex(f.factory());
  for (auto k : {gpu::JobKind::time, gpu::JobKind::peaks}) {
    gpu::Job j = verify_job();
    j.kind = k;
    gpu::Outcome o = ex.run(j);
    ASSERT_TRUE(o.failure);
    EXPECT_EQ(o.failure->kind, gpu::FailureKind::unsupported);
    EXPECT_EQ(o.failure->message, "not timed: CPU engine");
    EXPECT_FALSE(o.time);
  }
  gpu::Job j = verify_job();
  j.kind = gpu::JobKind::locate;
  EXPECT_EQ(ex.run(j).failure->kind, gpu::FailureKind::unsupported);
}

TEST(EmuExecutor, TheDeviceIsTheEngine) {
  Fakes f;
  Executor ex(f.factory());
  gpu::Job j;
  j.kind = gpu::JobKind::device;
  gpu::Outcome o = ex.run(j);
  ASSERT_TRUE(o.device);
  EXPECT_EQ(o.device->name, "ptxforge CPU engine");
  EXPECT_EQ(o.device->arch(), "sm_90a");
  EXPECT_EQ(o.device->max_threads_per_block, 1024);
  EXPECT_EQ(o.device->shared_per_block, 48 * 1024);
  EXPECT_EQ(o.device->shared_per_block_optin, 227 * 1024);
  EXPECT_GE(o.device->sms, 1);
}

TEST(EmuExecutor, TrivialOutputsFailTheComparison) {
  Fakes f;
  Executor ex(f.factory());
  gpu::Job j = verify_job({"small"});
  j.kind = gpu::JobKind::trivial;
  gpu::Outcome o = ex.run(j);
  ASSERT_TRUE(o.verify) << o.failure->message;
  ASSERT_EQ(o.verify->cases.size(), 3u);
  EXPECT_EQ(o.verify->cases[0].trivial, "zeros");
  EXPECT_EQ(o.verify->cases[2].trivial, "unwritten");
  for (auto& c : o.verify->cases) EXPECT_FALSE(c.pass) << c.trivial;
  EXPECT_EQ(o.verify->cases[0].seed, task::derive_seed(j.seed, task::SeedUse::trivial, task::size_set_key("small")));
}

TEST(EmuExecutor, ElementsReadAsTheirDtype) {
  uint8_t bytes[8];
  int32_t v = -7;
  std::memcpy(bytes, &v, 4);
  EXPECT_EQ(detail::element_text(bytes, task::DType::i32, 0), "-7");
  uint64_t big = 0xffffffffffffffffull;  // not representable in a double: read exactly
  std::memcpy(bytes, &big, 8);
  EXPECT_EQ(detail::element_text(bytes, task::DType::u64, 0), "18446744073709551615");
  float x = 0.1f;
  std::memcpy(bytes, &x, 4);
  EXPECT_EQ(detail::element_text(bytes, task::DType::f32, 0), "0.1");
  task::fill_poison(bytes, 4);  // 0xFFBADBAD: a NaN with its sign bit set
  EXPECT_EQ(detail::element_text(bytes, task::DType::f32, 0), "nan");
  // Row-major: element 1041 of a 4 x 512 matrix is [2, 17].
  EXPECT_EQ(detail::multi_index({4, 512}, 2048, 1041), (std::vector<int64_t>{2, 17}));
  EXPECT_TRUE(detail::multi_index({4, 500}, 2048, 1041).empty()) << "a shape that does not cover the count";
}

}  // namespace
}  // namespace ptxforge::emu
