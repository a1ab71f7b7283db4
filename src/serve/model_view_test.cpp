// The service's record, read as a client that wants the held-back sizes would read it: every
// number that depends on a held-back set's sizes (element counts, mismatch counts, indices,
// byte offsets, threads, floors, instruction counts) is searched for in the whole text, on a
// record built by hand with each of them planted and on real runs of the CPU engine. The
// person's JSON of the same record is searched too, so that the search is seen to find them.
#include "serve/model_view.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "eval/pipeline.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kRoot = PTXFORGE_SOURCE_DIR;

// Whether `n` occurs in `text` as a whole number (not as part of a longer run of digits).
bool has_number(const std::string& text, const std::string& n) {
  std::regex re("(^|[^0-9])" + n + "([^0-9]|$)");
  return std::regex_search(text, re);
}

std::string stage_summary(const json& record, const std::string& name) {
  for (auto& s : record["stages"])
    if (s["name"] == name) return s["summary"];
  return "(no stage " + name + ")";
}

// A task with one shown set and one held-back set of distinctive sizes.
task::Task toy_task() {
  auto t = task::parse_task(R"toml(
name = "toy"
level = 1
description = "c = a + b"
entry = "toy"
time_budget_s = 4
[[param]]
name = "a"
dtype = "f32"
count = "n"
role = "in"
[[param]]
name = "b"
dtype = "f32"
count = "n"
role = "in"
[[param]]
name = "c"
dtype = "f32"
count = "n"
role = "out"
[[param]]
name = "n"
kind = "scalar"
dtype = "u32"
value = "n"
[[sizes]]
name = "small"
n = 1000
[[sizes]]
name = "secret"
shown = false
n = 77777
[reference]
entry = "toy_ref"
grid = "(ceil_div(n, 256), 1, 1)"
block = "(256, 1, 1)"
[roofline]
bytes = "12 * n"
flops = "n"
)toml",
                            "task.toml", "/srv/ptxforge/tasks/level1/toy");
  EXPECT_TRUE(t.ok()) << t.error().message;
  return t.ok() ? *t : task::Task{};
}

// The numbers of the held-back set "secret" (n = 77777) planted below: n, 4n bytes, 12n
// bytes, mismatches, an index, a floor, a CTA and an offset.
const std::vector<std::string> kSecretNumbers = {"77777", "311108", "933324", "55555", "66666", "24305", "303", "311112"};

eval::RunRecord planted_record() {
  eval::RunRecord r;
  r.task = "toy";
  r.candidate = "/tmp/ptxforge-serve-Ab12Cd/candidate.ptx";
  r.source_name = r.candidate;
  r.arch = "sm_90a";
  r.seed = 42;
  auto stage = [&](eval::StageId id, eval::StageStatus st, std::string summary) -> eval::StageResult& {
    eval::StageResult& s = r.stage(id);
    s.status = st;
    s.summary = std::move(summary);
    s.seconds = 0.25;
    return s;
  };
  stage(eval::StageId::check, eval::StageStatus::passed, "0 errors, 0 warnings; launch spec: 1 launch");
  stage(eval::StageId::assemble, eval::StageStatus::passed, "ptxas for sm_90a: 12 registers, 0 spill bytes");
  eval::StageResult& v = stage(eval::StageId::verify, eval::StageStatus::failed,
                               "size set 'secret' (held back), seed 1: 'c' has 55555 of 77777 elements wrong");
  v.held_back = true;
  v.model_summary = "a held-back size, seed 1: output 'c' is wrong";
  eval::StageResult& p = stage(eval::StageId::prove, eval::StageStatus::failed,
                               "add.f32 ran 2431 warp executions on size set 'secret' (held back): 3% of the work (at least 77777)");
  p.held_back = true;
  p.model_summary = "a required instruction family did less of the work than the task needs on a held-back size";
  r.executed_note = p.summary;
  gpu::VerifyReport rep;
  gpu::CaseResult shown;
  shown.size_set = "small";
  shown.seed_index = 1;
  shown.pass = true;
  shown.outputs.push_back({"c", 1000, 0, 1.0, 0, 0, 0, 0, 0, {}, true, ""});
  gpu::CaseResult held;
  held.size_set = "secret";
  held.shown = false;
  held.seed = 987654321;
  held.seed_index = 1;
  held.problems = {"write past the end of 'c': 311108 guard bytes changed"};
  task::Comparison o{"c", 77777, 55555, 0.28, 1.5, 2.5, 0, 0, 0, {{66666, 1.25, 7.5}}, false,
                     "only the first 22222 of 77777 elements are correct: does the grid cover the whole output?"};
  held.outputs.push_back(o);
  gpu::WrongElement w;
  w.output = "c";
  w.index = 66666;
  w.expected = "1.25";
  w.actual = "7.5";
  w.writer = gpu::WrongElement::Writer{{{303, 0, 0}, {10, 0, 0}}, 40};
  held.wrong.push_back(w);
  held.executed = {77777};
  rep.cases = {shown, held};
  rep.seconds = 3.0;
  rep.phases = {0.1, 0.2, 0.3, 0.4};
  rep.executed = {77777 * 3};
  rep.engine = gpu::Engine::cpu;
  rep.counts.push_back({40, 5, "st.global.f32", 2431, 77777});
  r.verify = rep;
  gpu::Failure f{gpu::FailureKind::fault, "out-of-bounds access near buffer 'c' (write past the end of 'c': 311112 bytes)",
                 "size set 'secret', seed 1", true};
  f.size_set = "secret";
  f.seed = 987654321;
  f.finding = gpu::EmuFinding{"emu-oob", 40, 5, gpu::EmuThread{{303, 0, 0}, {10, 0, 0}}, "c", 311108, std::nullopt};
  r.failure = f;
  eval::InstructionProof proof;
  proof.family = "add.f32";
  proof.in_ptx = true;
  proof.ptx_count = 1;
  proof.executed = true;
  proof.executed_warps = 2431;
  proof.executed_work = 77777;
  proof.min_warps = 24305;
  r.proofs.push_back(proof);
  eval::PhysicalLimits lim;
  lim.note = "measured peaks";
  lim.rows.push_back({"small", 12000, 1000, 0.01, 0.02, 1e9, 1e8, true});
  lim.rows.push_back({"secret", 933324, 77777, 0.01, 0.02, 1e9, 1e8, true});
  r.limits = lim;
  eval::ProfileReport prof;
  prof.note = "profiled";
  prof.size_set = "secret";
  r.profile = prof;
  r.flags.push_back("size set 'secret' ran long");
  return r;
}

TEST(ModelView, ThePersonsJsonHoldsThePlantedNumbers) {
  // The search below must be able to fail: the unreduced record carries every planted number.
  std::string person = eval::render_report_json(planted_record());
  for (auto& n : kSecretNumbers) EXPECT_TRUE(has_number(person, n)) << n;
  EXPECT_NE(person.find("secret"), std::string::npos);
}

TEST(ModelView, NoNumberOfAHeldBackSetSurvives) {
  task::Task t = toy_task();
  std::string text = render_model_record(planted_record(), t);
  for (auto& n : kSecretNumbers) EXPECT_FALSE(has_number(text, n)) << n << " in\n" << text;
  EXPECT_EQ(text.find("secret"), std::string::npos) << text;
  EXPECT_EQ(text.find("987654321"), std::string::npos) << "a held-back case's seed";
  EXPECT_EQ(text.find("/tmp/"), std::string::npos) << "a server path";
  EXPECT_EQ(text.find("/srv/"), std::string::npos) << "the task's folder";
}

TEST(ModelView, HeldBackCasesAndFailuresKeepTheirClass) {
  task::Task t = toy_task();
  json j = json::parse(render_model_record(planted_record(), t));
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["verdict"], "FAILED at verify: a held-back size, seed 1: output 'c' is wrong");
  EXPECT_EQ(j["candidate"], "candidate.ptx");
  EXPECT_EQ(j["diagnostics"]["file"], "candidate.ptx");
  ASSERT_EQ(j["verify"]["cases"].size(), 2u);
  const json& shown = j["verify"]["cases"][0];
  EXPECT_EQ(shown["size_set"], "small") << "a shown case keeps its detail";
  EXPECT_TRUE(shown.contains("outputs"));
  const json& held = j["verify"]["cases"][1];
  EXPECT_EQ(held.size(), 4u) << held.dump();
  EXPECT_EQ(held["size_set"], "held-back");
  EXPECT_EQ(held["shown"], false);
  EXPECT_EQ(held["pass"], false);
  ASSERT_EQ(held["problems"].size(), 2u);
  EXPECT_EQ(held["problems"][0], "write past the end of 'c'");
  EXPECT_EQ(held["problems"][1].get<std::string>().rfind("output 'c' is wrong: only a leading part", 0), 0u);
  for (const char* key : {"seconds", "phases", "counts", "executed"}) EXPECT_FALSE(j["verify"].contains(key)) << key;
  EXPECT_EQ(j["failure"], json({{"kind", "fault"}, {"message", "fault: the kernel faulted (an illegal or misaligned address, or a trap) [emu-oob]"}, {"held_back", true}}));
  for (auto& s : j["stages"]) EXPECT_FALSE(s.contains("held_back"));
  EXPECT_EQ(stage_summary(j, "prove"), "a required instruction family did less of the work than the task needs on a held-back size");
  EXPECT_EQ(j["executed_note"], stage_summary(j, "prove"));
  EXPECT_FALSE(j["proofs"][0].contains("executed_warps"));
  EXPECT_FALSE(j["proofs"][0].contains("min_warps"));
  EXPECT_EQ(j["proofs"][0]["executed"], true);
  ASSERT_EQ(j["physical_limits"]["sizes"].size(), 1u);
  EXPECT_EQ(j["physical_limits"]["sizes"][0]["size_set"], "small");
  EXPECT_FALSE(j.contains("profile")) << "a profile of a held-back set";
  EXPECT_EQ(j["flags"][0], "size set 'held-back' ran long");
}

TEST(ModelView, APassingRecordSaysWhatPassedAndGetsItsSpeedups) {
  task::Task t = toy_task();
  eval::RunRecord r = planted_record();
  r.failure.reset();
  r.profile.reset();
  r.verify->cases[1].pass = true;
  r.verify->engine = gpu::Engine::gpu;
  r.stage(eval::StageId::verify) = {eval::StageId::verify, eval::StageStatus::passed,
                                    "2 cases passed (1 on held-back sizes), worker 3.000 s (inputs 0.777, reference 0.2, "
                                    "candidate 0.3, comparison 0.4)", 3.0, false, ""};
  r.stage(eval::StageId::prove) = {eval::StageId::prove, eval::StageStatus::passed,
                                   "all 1 required instruction families occur in the PTX and executed (warp executions: add.f32 2431)", 0.1, false, ""};
  r.executed_note = "counted in an instrumented copy over 2 cases";
  r.stage(eval::StageId::time) = {eval::StageId::time, eval::StageStatus::passed, "median small 0.0100 ms (2.00x nvcc)", 1.0, false, ""};
  gpu::TimeReport time;
  gpu::SizeTiming st;
  st.size_set = "small";
  st.candidate = {10, 0.01, 0.01, 0.01, 0};
  st.reference = {10, 0.02, 0.02, 0.02, 0};
  st.library = gpu::TimingStats{10, 0.005, 0.005, 0.005, 0};
  time.sizes.push_back(st);
  time.trials_pass = time.reverify_pass = true;
  r.time = time;
  r.gpu_verified = true;
  r.verified_by = eval::VerifiedBy::gpu;
  r.passed = true;
  json j = json::parse(render_model_record(r, t));
  EXPECT_EQ(j["verdict"], "passed, but size set 'held-back' ran long");
  EXPECT_EQ(stage_summary(j, "verify"), "2 cases passed (1 on held-back sizes) on a GPU; shown size sets small");
  EXPECT_EQ(stage_summary(j, "prove"), "all 1 required instruction families occur in the PTX and executed");
  EXPECT_DOUBLE_EQ(j["time"]["speedup_vs_reference"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["time"]["speedup_vs_library"].get<double>(), 0.5);
  EXPECT_EQ(j["verify"]["cases"][1]["problems"], json::array());
  EXPECT_FALSE(has_number(j.dump(), "2431"));
  EXPECT_FALSE(has_number(j.dump(), "0.777")) << "a phase time";
  // A time stage that failed gives no speedup to reward.
  r.stage(eval::StageId::time).status = eval::StageStatus::failed;
  j = json::parse(render_model_record(r, t));
  EXPECT_FALSE(j["time"].contains("speedup_vs_reference"));
}

// ---- Real runs on the CPU engine ----

// The built ptxforge binary, beside this test binary's folder (build/tests -> build/tools/ptxforge).
std::string ptxforge_binary() {
  fs::path self = fs::read_symlink("/proc/self/exe");
  fs::path p = self.parent_path().parent_path() / "tools" / "ptxforge" / "ptxforge";
  return fs::exists(p) ? p.string() : "";
}

// vector_add's solution with `edit` applied to its text, run on the CPU engine.
struct EngineRun {
  eval::RunRecord record;
  task::Task task;
};
EngineRun run_on_engine(const std::string& bin, const std::vector<std::pair<std::string, std::string>>& edits) {
  auto t = task::load_task(kRoot + "/tasks/level1/vector_add");
  EXPECT_TRUE(t.ok());
  auto text = read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  EXPECT_TRUE(text.ok());
  std::string ptx = *text;
  for (auto& [from, to] : edits) {
    size_t at = ptx.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) ptx.replace(at, from.size(), to);
  }
  auto dir = TempDir::create("ptxforge-model-view-test");
  EXPECT_TRUE(dir.ok());
  std::string path = dir->path() + "/candidate.ptx";
  EXPECT_TRUE(write_file(path, ptx).ok());
  eval::Pipeline p({bin, "worker"});
  eval::RunOptions opts;
  opts.device = eval::Device::cpu;
  opts.seeds = 1;
  opts.seed = 7;
  return {p.run(*t, path, opts), *t};
}

// What vector_add's held-back set 'tail' (n = 4099) would give away: n, its bytes, the bytes
// of the three inputs and outputs, and n rounded up to whole blocks.
const std::vector<std::string> kTailNumbers = {"4099", "16396", "49188", "4352", "17408"};

TEST(ModelView, ARealRunThatMissesTheTailSaysSoWithoutItsSize) {
  std::string bin = ptxforge_binary();
  if (bin.empty()) GTEST_SKIP() << "the ptxforge binary is not built beside the tests";
  // Threads past the last whole 1024 elements never run: 'small' (1024) passes, 'tail' fails.
  EngineRun run = run_on_engine(bin, {{"setp.ge.u32 %p, %i, %n;", "and.b32 %n, %n, -1024;\n    setp.ge.u32 %p, %i, %n;"}});
  ASSERT_TRUE(run.record.verify);
  std::string person = eval::render_report_json(run.record);
  EXPECT_TRUE(has_number(person, "4099")) << person;
  std::string text = render_model_record(run.record, run.task);
  for (auto& n : kTailNumbers) EXPECT_FALSE(has_number(text, n)) << n << " in\n" << text;
  EXPECT_FALSE(std::regex_search(text, std::regex("\\b(tail|tiny|odd)\\b"))) << text;
  json j = json::parse(text);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["verdict"].get<std::string>().rfind("FAILED at verify: a held-back size", 0), 0u) << j["verdict"];
}

TEST(ModelView, ARealOutOfBoundsWriteOnTheTailIsItsClass) {
  std::string bin = ptxforge_binary();
  if (bin.empty()) GTEST_SKIP() << "the ptxforge binary is not built beside the tests";
  // Elements from 4097 on are read and written 16 elements too far: only 'tail' (n = 4099)
  // has them, and the engine's message names the offset and the buffer's size in bytes.
  EngineRun run = run_on_engine(bin, {{".reg .pred %p;", ".reg .pred %p, %q;"},
                                      {"mul.wide.u32 %off, %i, 4;",
                                       "mul.wide.u32 %off, %i, 4;\n    setp.ge.u32 %q, %i, 4097;\n    @%q add.u64 %off, %off, 64;"}});
  std::string person = eval::render_report_json(run.record);
  ASSERT_TRUE(run.record.failure) << person;
  EXPECT_TRUE(run.record.failure->held_back) << person;
  EXPECT_TRUE(has_number(person, "16396")) << person;
  std::string text = render_model_record(run.record, run.task);
  for (auto& n : kTailNumbers) EXPECT_FALSE(has_number(text, n)) << n << " in\n" << text;
  EXPECT_FALSE(std::regex_search(text, std::regex("\\b(tail|tiny|odd)\\b"))) << text;
  json j = json::parse(text);
  EXPECT_EQ(j["failure"]["held_back"], true);
  EXPECT_EQ(j["failure"].size(), 3u) << j["failure"].dump();
}

TEST(ModelView, ARealPassOnTheEngine) {
  std::string bin = ptxforge_binary();
  if (bin.empty()) GTEST_SKIP() << "the ptxforge binary is not built beside the tests";
  EngineRun run = run_on_engine(bin, {});
  json j = json::parse(render_model_record(run.record, run.task));
  EXPECT_EQ(j["passed"], true) << j.dump(2);
  EXPECT_EQ(j["verified_by"], "cpu_engine");
  EXPECT_EQ(j["verdict"].get<std::string>().rfind("passed (verified on the CPU engine)", 0), 0u);
  std::string text = j.dump();
  for (auto& n : kTailNumbers) EXPECT_FALSE(has_number(text, n)) << n;
  EXPECT_FALSE(std::regex_search(text, std::regex("\\b(tail|tiny|odd)\\b"))) << text;
  // Wall times scale with the held-back sizes (verify and prove run every case): none is left.
  EXPECT_FALSE(j.contains("check_wall_s")) << text;
  for (auto& st : j["stages"]) EXPECT_FALSE(st.contains("seconds")) << st.dump();
  EXPECT_FALSE(j["verify"].contains("seconds")) << text;
}

}  // namespace
}  // namespace ptxforge::serve
