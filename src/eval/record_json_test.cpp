// result.json both ways: a record with every part filled renders, parses and renders to the
// same text; a cut-off or damaged record is an error naming the key, never a crash and never
// a record with a part quietly missing.
#include "eval/record_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include <nlohmann/json.hpp>

#include "eval/pipeline.h"
#include "task/task_spec.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

using nlohmann::json;

// Every optional part filled, and every field of each set away from its default, so a key
// the parser dropped shows up as a difference in the second rendering.
StageResult stage(StageId id, StageStatus status, std::string summary, double seconds, bool held_back = false) {
  StageResult s;
  s.id = id;
  s.status = status;
  s.summary = std::move(summary);
  s.seconds = seconds;
  s.held_back = held_back;
  s.model_summary = held_back ? "a held-back size set" : "";
  return s;
}

RunRecord full_record() {
  RunRecord r;
  r.task = "level1/vector_add";
  r.candidate = "round-03/candidate.ptx";
  r.arch = "sm_90a";
  r.device = "not rendered";
  r.seed = 18446744073709551557ull;  // above 2^53: travels as text
  r.check_wall_s = 1.625;
  r.stages = {stage(StageId::check, StageStatus::passed, "no errors", 0.001),
              stage(StageId::assemble, StageStatus::passed, "12 registers", 0.25),
              stage(StageId::verify, StageStatus::passed, "3 size sets x 2 seeds", 2.5),
              stage(StageId::sanitize, StageStatus::skipped, "--no-sanitize", 0),
              stage(StageId::time, StageStatus::failed, "size set 'huge' (held back) too fast", 7.75, true),
              stage(StageId::prove, StageStatus::not_run, "", 0),
              stage(StageId::profile, StageStatus::passed, "profiled", 3)};
  r.source_name = "candidate.ptx";
  r.source_text = "line one\n  mov.u32 %r1, %r9;\nline three\n\nline five\r\n";
  Diagnostic d;
  d.severity = Severity::warning;
  d.loc = {2, 3};
  d.length = 4;
  d.message = "register '%r9' is read before it is written";
  d.check_id = "uninit-reg";
  d.hint = "write it first";
  d.fixit = FixIt{{2, 16}, 3, "%r1"};
  d.notes = {{{1, 1}, "declared here"}, {{0, 0}, "whole file"}};
  r.diagnostics.add(d);
  r.diagnostics.error({5, 1}, "an error on a line with a carriage return", "ptxas");
  r.diagnostics.error({0, 0}, "no position", "ptxas");
  r.diagnostics.error({40, 2}, "past the end of the text", "ptxas");
  toolchain::FunctionResources entry;
  entry.name = "vector_add";
  entry.is_entry = true;
  entry.arch = "sm_90a";
  entry.registers = 12;
  entry.barriers = 1;
  entry.shared_bytes = 1024;
  entry.local_bytes = 16;
  entry.spill_stores = 8;
  entry.spill_loads = 4;
  toolchain::FunctionResources helper;
  helper.name = "helper";
  helper.registers = 6;
  r.resources = {entry, helper};
  gpu::VerifyReport v;
  gpu::CaseResult c;
  c.trivial = "";
  c.size_set = "small";
  c.shown = false;
  c.seed = 0xDEADBEEFCAFEF00Dull;
  c.seed_index = 2;
  c.pass = false;
  task::Comparison cmp;
  cmp.output = "y";
  cmp.count = 1024;
  cmp.mismatches = 3;
  cmp.matched_fraction = 0.99707;
  cmp.max_abs_error = std::numeric_limits<double>::infinity();
  cmp.max_rel_error = std::nan("");
  cmp.nan_count = 1;
  cmp.inf_count = 1;
  cmp.never_written = 1;
  cmp.first = {{7, 1.5, 2.5}, {9, -0.25, std::nan("")}};
  cmp.pass = false;
  cmp.hint = "transposed?";
  c.outputs = {cmp};
  c.problems = {"guard page after 'y' written"};
  c.executed = {5, 6};
  c.output_digest = 0xFEEDFACE12345678ull;
  v.cases = {c};
  v.seconds = 0.5;
  v.phases = {0.125, 0.0625, 0.25, 0.03125};
  v.executed = {10, 12};
  r.verify = v;
  gpu::TimeReport t;
  gpu::SizeTiming st;
  st.size_set = "large";
  st.candidate = {40, 0.009, 0.01, 0.0101, 0.0005};
  st.reference = {40, 0.019, 0.02, 0.0201, 0.0004};
  st.library = gpu::TimingStats{30, 0.011, 0.012, 0.0125, 0.0003};
  st.library_name = "cuBLAS";
  st.input_sets = 6;
  st.trial_cap = 77;
  st.checked = {{1, 1, false, true, ""}, {40, 6, true, false, "output 'y' differs in 3 elements"}};
  st.cost = {0.5, 1.25, 0.125, 0.0625, 0.75};
  t.sizes = {st};
  t.trials_pass = false;
  t.trial_problem = "timed trial 40 of 40 on size set 'large' (input set 6): differs";
  t.reverify_pass = true;
  t.reverify_problem = "";
  t.notes = {"a .global it could not restore"};
  t.seconds = 9.5;
  r.time = t;
  gpu::Failure f;
  f.kind = gpu::FailureKind::fault;
  f.message = "out-of-bounds access";
  f.where = "size set 'huge', seed 1, candidate launch 2";
  f.held_back = true;
  f.out_of_bounds = true;
  f.size_set = "huge";
  f.seed = 42;
  f.guarded = {"x", "y"};
  r.failure = f;
  r.guard = gpu::GuardMode::canary;
  r.guard_note = "no virtual memory management here";
  InstructionProof p;
  p.family = "mma.sync";
  p.alternatives = {"wgmma.mma_async"};
  p.in_ptx = true;
  p.ptx_count = 4;
  p.in_sass = true;
  p.executed = false;
  p.sass_opcodes = {"HMMA"};
  p.sass_count = 8;
  p.executed_warps = 1ull << 40;
  p.executed_work = 123456789;
  p.work_unit = "multiply-adds";
  p.min_warps = 1000;
  p.ncu_threads = 4096;
  InstructionProof bare;  // nothing proven: in_sass and executed unset
  bare.family = "cp.async";
  r.proofs = {p, bare};
  r.sass_note = "cuobjdump";
  r.executed_note = "an instrumented copy";
  r.ncu_note = "ncu 2025.1";
  PhysicalLimits l;
  l.note = "peaks measured on this GPU";
  l.peaks = {3.35e12, 6.7e13, "FP16 tensor", 0.25};
  l.rows = {{"large", 1 << 30, 2.5e9, 0.5, 0.75, 2.1e12, 5e12, true}, {"huge", 1e10, 0, 0.001, 0.002, 1e16, 0, false}};
  r.limits = l;
  ProfileReport prof;
  prof.note = "one launch per kernel";
  prof.size_set = "large";
  toolchain::ProfileSummary s;
  s.kernel = "vector_add";
  s.duration_us = 12.5;
  s.achieved_occupancy = 61.5;
  s.theoretical_occupancy = std::nullopt;
  s.occupancy_limiter = "registers (64 per thread)";
  s.registers = 64;
  s.block_size = 256;
  s.shared_bytes_per_block = 49152;
  s.dram_pct = 88.25;
  s.tensor_pct = 0;
  s.top_stalls = {{"long_scoreboard", 0.5}, {"barrier", 0.25}};
  s.shared_wavefronts_per_request = 1;
  s.local_bytes = std::nullopt;
  prof.candidate = {s};
  s.kernel = "reference";
  s.l2_pct = 40;
  s.top_stalls.clear();
  prof.reference = {s};
  r.profile = prof;
  r.flags = {"faster than the library by 40x, let through by --allow-suspicious", "second flag"};
  r.gpu_verified = true;
  r.passed = false;
  return r;
}

TEST(RecordJson, ARecordWithEveryPartRendersParsesAndRendersTheSame) {
  RunRecord r = full_record();
  std::string once = render_report_json(r);
  auto back = record_from_json(once);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(render_report_json(*back), once);
  // The typed fields, not only the text: what readers use.
  EXPECT_EQ(back->seed, r.seed);
  ASSERT_EQ(back->stages.size(), 7u);
  EXPECT_EQ(back->stages[4].id, StageId::time);
  EXPECT_EQ(back->stages[4].status, StageStatus::failed);
  EXPECT_TRUE(back->stages[4].held_back);
  EXPECT_EQ(back->stages[4].model_summary, "") << "the model's words are not in result.json";
  EXPECT_EQ(back->stages[5].status, StageStatus::not_run);
  EXPECT_EQ(back->verdict(), r.verdict());
  EXPECT_EQ(back->diagnostics.list().size(), 4u);
  EXPECT_EQ(back->diagnostics.list()[0].fixit->replacement, "%r1");
  EXPECT_EQ(back->source_name, "candidate.ptx");
  EXPECT_EQ(back->source_text, "\n  mov.u32 %r1, %r9;\n\n\nline five") << "only the quoted lines, each in its place";
  ASSERT_EQ(back->resources.size(), 2u);
  EXPECT_EQ(back->resources[0].local_bytes, 16);
  EXPECT_EQ(back->resources[0].spill_stores, 8);
  EXPECT_EQ(back->resources[0].barriers, 0) << "not in result.json: stays at its default";
  ASSERT_TRUE(back->verify && back->verify->cases.size() == 1);
  EXPECT_EQ(back->verify->cases[0].seed, 0xDEADBEEFCAFEF00Dull);
  EXPECT_TRUE(std::isinf(back->verify->cases[0].outputs[0].max_abs_error));
  ASSERT_TRUE(back->time && back->time->sizes[0].library);
  EXPECT_EQ(back->time->sizes[0].checked[1].problem, "output 'y' differs in 3 elements");
  EXPECT_EQ(back->time->sizes[0].cost.baselines_s, 0.75);
  EXPECT_EQ(back->failure->kind, gpu::FailureKind::fault);
  EXPECT_EQ(back->failure->guarded, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(back->guard, gpu::GuardMode::canary);
  EXPECT_EQ(back->proofs[0].executed_warps, 1ull << 40);
  EXPECT_EQ(back->proofs[0].in_sass, std::optional<bool>(true));
  EXPECT_EQ(back->proofs[0].executed, std::optional<bool>(false));
  EXPECT_EQ(back->proofs[1].in_sass, std::nullopt);
  EXPECT_EQ(back->limits->peaks.flops_margin, 0.25);
  EXPECT_FALSE(back->limits->rows[1].pass);
  EXPECT_EQ(back->profile->candidate[0].achieved_occupancy, std::optional<double>(61.5));
  EXPECT_EQ(back->profile->candidate[0].theoretical_occupancy, std::nullopt);
  EXPECT_EQ(back->profile->candidate[0].top_stalls.size(), 2u);
  EXPECT_EQ(back->flags, r.flags);
  EXPECT_TRUE(back->gpu_verified);
  EXPECT_FALSE(back->passed);
}

TEST(RecordJson, AnEmptyRecordAndOneWithoutDiagnosticsRoundTrip) {
  RunRecord r;
  std::string once = render_report_json(r);
  auto back = record_from_json(once);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(render_report_json(*back), once);
  EXPECT_FALSE(back->verify || back->time || back->failure || back->guard || back->limits || back->profile);
}

TEST(RecordJson, NumbersJsonCannotHoldComeBackAsTheSameText) {
  RunRecord r = full_record();
  r.check_wall_s = std::nan("");
  r.limits->rows[0].bytes_per_s = std::numeric_limits<double>::infinity();
  r.profile->candidate[0].dram_pct = std::nan("");  // written as null, like an absent figure
  std::string once = render_report_json(r);
  auto back = record_from_json(once);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(render_report_json(*back), once);
  EXPECT_TRUE(std::isnan(back->check_wall_s));
}

// The verdict and the counts a reader might trust are derived, never taken from the file: a
// record edited to say "passed" over a failed stage still reads as failed.
TEST(RecordJson, TheVerdictIsComputedFromTheStagesNeverRead) {
  RunRecord r = full_record();
  r.flags.clear();
  json j = json::parse(render_report_json(r));
  j["verdict"] = "passed";
  auto back = record_from_json(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->verdict().rfind("FAILED at time: ", 0), 0u) << back->verdict();
}

TEST(RecordJson, EveryCutOffPrefixIsAnErrorNeverACrash) {
  std::string text = render_report_json(full_record());
  int checked = 0;
  for (size_t n = 0; n < text.size(); n += 7, ++checked) {
    auto r = record_from_json(std::string_view(text).substr(0, n));
    ASSERT_FALSE(r.ok()) << "a record cut after " << n << " of " << text.size() << " characters parsed";
    EXPECT_NE(r.error().message.find("cut off or damaged"), std::string::npos) << r.error().message;
  }
  EXPECT_GT(checked, 500);
}

// Each damage, and the words the error must hold: the key's path and what is wrong there.
TEST(RecordJson, ADamagedRecordIsAnErrorNamingTheKey) {
  const json good = json::parse(render_report_json(full_record()));
  struct Case {
    const char* what;
    std::function<void(json&)> damage;
    const char* expect;
  };
  std::vector<Case> cases = {
      {"no stages", [](json& j) { j.erase("stages"); }, "no 'stages'"},
      {"no task", [](json& j) { j.erase("task"); }, "no 'task'"},
      {"a stage status nobody writes", [](json& j) { j["stages"][1]["status"] = "maybe"; }, "stages[1].status: unknown status 'maybe'"},
      {"a stage name nobody writes", [](json& j) { j["stages"][0]["name"] = "bless"; }, "stages[0].name: unknown stage 'bless'"},
      {"a stage twice", [](json& j) { j["stages"].push_back(j["stages"][2]); }, "stages[7]: the stage 'verify' comes twice"},
      {"passed as a string", [](json& j) { j["passed"] = "yes"; }, "passed: expected true or false, found string"},
      {"a seed that is no number", [](json& j) { j["seed"] = "12x"; }, "seed: "},
      {"a seed as a JSON number", [](json& j) { j["seed"] = 12; }, "seed: expected a string, found number"},
      {"a fractional register count", [](json& j) { j["resources"][0]["registers"] = 1.5; }, "resources[0].registers: expected a whole number"},
      {"a negative warp count", [](json& j) { j["proofs"][0]["executed_warps"] = -1; }, "proofs[0].executed_warps: -1 is out of range"},
      {"in_sass as a string", [](json& j) { j["proofs"][1]["in_sass"] = "no"; }, "proofs[1].in_sass: expected true or false"},
      {"an unknown guard mode", [](json& j) { j["guard"] = "none"; }, "guard: unknown guard mode 'none'"},
      {"an unknown failure kind", [](json& j) { j["failure"]["kind"] = "bogus"; }, "failure: unknown failure kind 'bogus'"},
      {"a verify case without its verdict", [](json& j) { j["verify"]["cases"][0].erase("pass"); }, "verify: "},
      {"time sizes as an object", [](json& j) { j["time"]["sizes"] = json::object(); }, "time: "},
      {"a limits row without pass", [](json& j) { j["physical_limits"]["sizes"][0].erase("pass"); }, "physical_limits.sizes[0]: no 'pass'"},
      {"a profile figure as text", [](json& j) { j["profile"]["candidate"][0]["dram_pct"] = "88"; }, "profile.candidate[0].dram_pct: expected a number"},
      {"an unknown severity", [](json& j) { j["diagnostics"]["diagnostics"][0]["severity"] = "fatal"; }, "diagnostics.diagnostics[0].severity: unknown severity 'fatal'"},
      {"error counts that disagree with the list", [](json& j) { j["diagnostics"]["errors"] = 0; }, "diagnostics: the error and warning counts disagree"},
      {"a quoted line without a line number", [](json& j) { j["diagnostics"]["diagnostics"][0]["line"] = 0; }, "diagnostics.diagnostics[0].line: a quoted line needs"},
      {"a line quoted two ways",
       [](json& j) {
         j["diagnostics"]["diagnostics"][1]["line"] = 2;
         j["diagnostics"]["diagnostics"][1]["source_line"] = "something else";
       },
       "line 2 is quoted two different ways"},
      {"a quoted line at line four billion", [](json& j) { j["diagnostics"]["diagnostics"][0]["line"] = 4000000000u; }, "a quoted line needs"},
      {"flags as a string", [](json& j) { j["flags"] = "all good"; }, "flags: expected a list, found string"},
  };
  for (auto& c : cases) {
    json j = good;
    c.damage(j);
    auto r = record_from_json(j.dump());
    ASSERT_FALSE(r.ok()) << c.what << ": parsed";
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << c.what << ": " << r.error().message;
    EXPECT_EQ(r.error().message.rfind("not a run record: ", 0), 0u) << c.what << ": " << r.error().message;
  }
  // Nested deeper than any recursion could follow: built as text, since dumping it would recurse.
  json j = good;
  j["flags"] = "@deep@";
  std::string text = j.dump();
  text.replace(text.find("\"@deep@\""), 8, std::string(200000, '[') + std::string(200000, ']'));
  auto deep = record_from_json(text);
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("flags[0]: expected a string, found array"), std::string::npos) << deep.error().message;
  EXPECT_FALSE(record_from_json("[1, 2]").ok());
  EXPECT_FALSE(record_from_json("").ok());
  EXPECT_NE(record_from_json("\"text\"").error().message.find("expected a JSON object, found string"), std::string::npos);
}

// Keys that records written before they existed lack: read as their defaults, and said so here.
TEST(RecordJson, KeysOlderRecordsLackKeepTheirDefaults) {
  json j = json::parse(render_report_json(full_record()));
  for (auto key : {"seed", "check_wall_s", "diagnostics", "resources", "proofs", "flags"}) j.erase(key);
  j["physical_limits"].erase("flops_margin");
  auto r = record_from_json(j.dump());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->seed, 0u);
  EXPECT_TRUE(r->proofs.empty() && r->flags.empty() && r->resources.empty() && r->diagnostics.empty());
  EXPECT_EQ(r->limits->peaks.flops_margin, kPhysicalLimitMargin);
}

// Records the pipeline itself made (ptxas's resources, the front end's diagnostics quoting
// the candidate's lines; a worker that finds no GPU) come back the same, as JSON and as text.
TEST(RecordJson, RecordsThePipelineMakesRoundTripAsJsonAndAsText) {
  if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
  const std::string root = PTXFORGE_SOURCE_DIR;
  auto task = task::load_task(root + "/tasks/level1/vector_add");
  ASSERT_TRUE(task.ok()) << task.error().message;
  std::string text = *read_file(root + "/tasks/level1/vector_add/solution.ptx");
  text.replace(text.find("add.f32 %z, %x, %y;"), 19, "add.f32 %z, %x, %w;");
  std::string broken = ::testing::TempDir() + "/record-json-broken.ptx";
  ASSERT_TRUE(write_file(broken, text).ok());
  Pipeline p(std::vector<std::string>{
      "/bin/sh", "-c", R"(while read l; do echo '{"failure":{"kind":"driver","message":"no CUDA driver"},"fatal":false}'; done)"});
  for (const std::string& candidate : {root + "/tasks/level1/vector_add/solution.ptx", broken}) {
    RunRecord r = p.run(*task, candidate, {});
    std::string once = render_report_json(r);
    auto back = record_from_json(once);
    ASSERT_TRUE(back.ok()) << candidate << ": " << back.error().message;
    EXPECT_EQ(render_report_json(*back), once) << candidate;
    EXPECT_EQ(render_report_text(*back), render_report_text(r)) << candidate;
  }
}

// Speedups are geometric means over the timed sets (2x and 8x give 4x); a set with no library
// time adds nothing to the library's, and a record without times has none.
TEST(RecordSpeedups, AreGeometricMeansOverTheTimedSets) {
  RunRecord r;
  EXPECT_EQ(speedups(r).vs_reference, 0);
  r.time.emplace();
  gpu::SizeTiming a, b;
  a.candidate.median_ms = 1, a.reference.median_ms = 2;
  b.candidate.median_ms = 1, b.reference.median_ms = 8;
  b.library.emplace();
  b.library->median_ms = 0.5;
  r.time->sizes = {a, b};
  Speedups s = speedups(r);
  EXPECT_DOUBLE_EQ(s.vs_reference, 4.0);
  EXPECT_DOUBLE_EQ(s.vs_library, 0.5);
}

}  // namespace
}  // namespace ptxforge::eval
