// The sanitize stage without a GPU: compute-sanitizer's logs as the tools print them, the
// command lines, the size sets each tool runs on, the verdicts, and the whole stage against
// a fake sanitizer (a script that runs the worker, then writes a log and exits with a code).
#include "eval/sanitize.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/stat.h>

#include <fstream>

#include "eval/stages.h"
#include "gpu/protocol.h"
#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;

const char* kMemcheckLog = R"(========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at vector_add+0x1b0
=========     by thread (3,0,0) in block (3906,0,0)
=========     Address 0x7f1c2a3d0a0c is out of bounds
=========     and is 12 bytes after the nearest allocation at 0x7f1c2a000000 of size 4000012 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========     Host Frame: [0x2f1a3c]
=========                in /lib/x86_64-linux-gnu/libcuda.so.1
=========
========= Invalid __global__ write of size 4 bytes
=========     at vector_add+0x1b0
=========
========= ERROR SUMMARY: 2 errors
)";

const char* kRacecheckLog = R"(========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at reduce_sum+0x2c0
=========     and Read access at reduce_sum+0x2f0 [1 hazard]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
)";

TEST(SanitizerLog, ReadsTheSummariesAndTheFirstReport) {
  SanitizerLog m = parse_sanitizer_log(kMemcheckLog);
  EXPECT_TRUE(m.summary);
  EXPECT_EQ(m.errors, 2u);
  ASSERT_EQ(m.first_report.size(), 5u);
  EXPECT_EQ(m.first_report[0], "Invalid __global__ write of size 4 bytes");
  EXPECT_EQ(m.first_report[1], "at vector_add+0x1b0");
  for (auto& l : m.first_report) EXPECT_EQ(l.find("Host Frame"), std::string::npos) << "backtraces are left out";

  SanitizerLog r = parse_sanitizer_log(kRacecheckLog);
  EXPECT_TRUE(r.summary);
  EXPECT_EQ(r.errors, 1u);
  ASSERT_EQ(r.first_report.size(), 2u);
  EXPECT_EQ(r.first_report[0], "Error: Race reported between Write access at reduce_sum+0x2c0");

  SanitizerLog w = parse_sanitizer_log("========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)\n");
  EXPECT_EQ(w.errors, 3u) << "racecheck's warnings count: intra-warp races are real on independent thread scheduling";
  SanitizerLog clean = parse_sanitizer_log("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(clean.summary);
  EXPECT_EQ(clean.errors, 0u);
  EXPECT_TRUE(clean.first_report.empty());
  SanitizerLog none = parse_sanitizer_log("========= COMPUTE-SANITIZER\n");
  EXPECT_FALSE(none.summary);
  EXPECT_FALSE(parse_sanitizer_log("").summary);
  EXPECT_EQ(parse_sanitizer_log("========= ERROR SUMMARY: 1 error\n").errors, 1u);
}

TEST(SanitizerLog, CommandLinesPerTool) {
  std::vector<std::string> worker = {"/bin/ptxforge", "worker"};
  auto race = sanitizer_argv("cs", SanitizerTool::racecheck, "/t/r.log", true, worker);
  std::string joined;
  for (auto& a : race) joined += a + " ";
  EXPECT_EQ(joined, "cs --tool racecheck --log-file /t/r.log --print-limit 20 --error-exitcode 97 --racecheck-report all "
                    "/bin/ptxforge worker ");
  auto init = sanitizer_argv("cs", SanitizerTool::initcheck, "l", true, worker);
  EXPECT_NE(std::find(init.begin(), init.end(), "--initcheck-address-space"), init.end());
  auto old = sanitizer_argv("cs", SanitizerTool::initcheck, "l", false, worker);
  EXPECT_EQ(std::find(old.begin(), old.end(), "--initcheck-address-space"), old.end()) << "a sanitizer without the option";
  EXPECT_EQ(sanitizer_argv("cs", SanitizerTool::memcheck, "l", true, worker).back(), "worker");
}

TEST(SanitizerLog, SizeSetsWhereEachToolBites) {
  task::Task t = *task::load_task(kRoot + "/tasks/level1/vector_add");  // small 1024, large 16M, odd 1000003 (held), tiny 3 (held), tail 4099 (held)
  EXPECT_EQ(sanitizer_size_sets(t, SanitizerTool::memcheck), (std::vector<std::string>{"tiny", "small", "tail", "odd", "large"}))
      << "192 MiB of buffers still fits";
  EXPECT_EQ(sanitizer_size_sets(t, SanitizerTool::racecheck), (std::vector<std::string>{"small", "tiny"}));
  task::Task named = t;
  named.sanitize_sizes = {"odd"};
  for (auto tool : {SanitizerTool::memcheck, SanitizerTool::racecheck, SanitizerTool::synccheck, SanitizerTool::initcheck})
    EXPECT_EQ(sanitizer_size_sets(named, tool), (std::vector<std::string>{"odd"})) << "the task's own choice wins";
  task::Task r = *task::load_task(kRoot + "/tasks/level1/reduce_sum");  // large: 2^26 floats, 256 MiB + 4 bytes
  auto sets = sanitizer_size_sets(r, SanitizerTool::synccheck);
  EXPECT_EQ(std::find(sets.begin(), sets.end(), "large"), sets.end()) << "too large for a sanitized run";
  EXPECT_NE(std::find(sets.begin(), sets.end(), "odd"), sets.end());
  gpu::Job verify;
  verify.seeds = 3;
  verify.held_back = false;
  gpu::Job j = sanitizer_job(verify, t, SanitizerTool::initcheck);
  EXPECT_EQ(j.placement, gpu::Placement::exact_unwritten) << "outputs unwritten: initcheck sees a read before the write";
  EXPECT_EQ(j.seeds, 1);
  EXPECT_TRUE(j.held_back);
  EXPECT_EQ(sanitizer_job(verify, t, SanitizerTool::memcheck).placement, gpu::Placement::exact);
  // racecheck and synccheck run on verify's own placement: a kernel that tests its pointers'
  // alignment to switch a hazard off under the tool finds nothing to test.
  EXPECT_EQ(sanitizer_job(verify, t, SanitizerTool::racecheck).placement, verify.placement);
  EXPECT_EQ(sanitizer_job(verify, t, SanitizerTool::synccheck).placement, gpu::Placement::guarded);
  EXPECT_EQ(verify.placement, gpu::Placement::guarded);
}

TEST(SanitizerLog, Verdicts) {
  gpu::Outcome fine;
  fine.verify = gpu::VerifyReport{};
  SanitizerLog clean = parse_sanitizer_log("========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(judge_sanitizer(SanitizerTool::memcheck, clean, 0, fine, "").passed);

  ToolVerdict v = judge_sanitizer(SanitizerTool::memcheck, parse_sanitizer_log(kMemcheckLog), kSanitizerErrorExit, fine, "");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.summary.rfind("memcheck: 2 errors: Invalid __global__ write of size 4 bytes; at vector_add+0x1b0; by thread", 0), 0u)
      << v.summary;
  EXPECT_EQ(v.model_summary, "memcheck: 2 errors: Invalid __global__ write of size 4 bytes; at vector_add+0x1b0");

  v = judge_sanitizer(SanitizerTool::synccheck, parse_sanitizer_log(""), kSanitizerErrorExit, fine, "");
  EXPECT_FALSE(v.passed) << "the exit code alone says there were errors";
  EXPECT_NE(v.summary.find("exit code 97"), std::string::npos);

  gpu::Outcome fault;
  fault.failure = gpu::Failure{gpu::FailureKind::fault, "CUDA_ERROR_LAUNCH_FAILED", ""};
  v = judge_sanitizer(SanitizerTool::racecheck, parse_sanitizer_log("RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"),
                      3, fault, "");
  EXPECT_FALSE(v.passed) << "a clean summary from a run that died is no pass";
  EXPECT_NE(v.summary.find("racecheck run failed: fault"), std::string::npos);

  v = judge_sanitizer(SanitizerTool::initcheck, parse_sanitizer_log("========= COMPUTE-SANITIZER\n"), 0, fine, "");
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.summary.find("printed no summary"), std::string::npos);
  v = judge_sanitizer(SanitizerTool::initcheck, clean, -1, std::nullopt, "timeout: no answer within 600.0 s");
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.summary.find("initcheck run failed: timeout"), std::string::npos);
  EXPECT_FALSE(judge_sanitizer(SanitizerTool::memcheck, clean, 1, fine, "").passed) << "an odd exit code";
}

// The whole stage against a fake compute-sanitizer and a fake worker.
class SanitizeStage : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per process and test: ctest runs these tests side by side, each in its own process.
    dir_ = ::testing::TempDir() + "/sanitize-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++);
    (void)run_process({"/bin/rm", "-rf", dir_}, std::chrono::seconds(10));
    (void)run_process({"/bin/mkdir", "-p", dir_}, std::chrono::seconds(10));
    std::string script = R"(#!/bin/sh
D=)" + dir_ + R"(
log=""; tool=""
while [ $# -gt 0 ]; do
  case "$1" in
    --help) echo "  --initcheck-address-space <global|shared|all>"; exit 0;;
    --tool) tool=$2; shift 2;;
    --log-file) log=$2; shift 2;;
    --*) shift 2;;
    *) break;;
  esac
done
echo "$tool" >> $D/calls
"$@"
rc=$?
if [ -f $D/$tool.log ]; then cp $D/$tool.log "$log"; else echo "========= ERROR SUMMARY: 0 errors" > "$log"; fi
if [ -f $D/$tool.code ]; then exit $(cat $D/$tool.code); fi
exit $rc
)";
    ASSERT_TRUE(write_file(dir_ + "/compute-sanitizer", script).ok());
    chmod((dir_ + "/compute-sanitizer").c_str(), 0755);
    answer(R"({"verify":{"cases":[],"seconds":0.1},"guard":"exact","fatal":false})");
    worker_ = {"/bin/sh", "-c", "while read l; do echo \"$l\" >> " + dir_ + "/jobs; cat " + dir_ + "/answer.json; done"};
    task_ = *task::load_task(kRoot + "/tasks/level1/vector_add");
    opts_.sanitizer = dir_ + "/compute-sanitizer";
  }
  void answer(const std::string& json) { ASSERT_TRUE(write_file(dir_ + "/answer.json", json + "\n").ok()); }
  void tool_says(const std::string& tool, const std::string& log, int code) {
    ASSERT_TRUE(write_file(dir_ + "/" + tool + ".log", log).ok());
    ASSERT_TRUE(write_file(dir_ + "/" + tool + ".code", std::to_string(code)).ok());
  }
  std::vector<std::string> lines(const std::string& file) {
    std::vector<std::string> out;
    auto text = read_file(dir_ + "/" + file);
    if (text)
      for (auto l : split(*text, '\n'))
        if (!l.empty()) out.emplace_back(l);
    return out;
  }
  StageResult run_stage() {
    gpu::Job job;
    job.kind = gpu::JobKind::verify;
    job.task_dir = task_.dir;
    StageContext ctx{task_, opts_, unused_, worker_, dir_, record_, {}, job, std::chrono::steady_clock::now(), {}, false, {}, {}};
    return sanitize(ctx);
  }
  struct Unused : gpu::JobRunner {
    gpu::Outcome run(const gpu::Job&, std::chrono::milliseconds) override {
      ADD_FAILURE() << "the stage starts its own workers";
      return {};
    }
  } unused_;
  static inline int counter_ = 0;
  std::string dir_;
  std::vector<std::string> worker_;
  task::Task task_;
  RunOptions opts_;
  RunRecord record_;
};

TEST_F(SanitizeStage, EveryToolRunsAndACleanRunPasses) {
  StageResult s = run_stage();
  EXPECT_EQ(s.status, StageStatus::passed) << s.summary;
  EXPECT_EQ(s.summary, "0 errors from memcheck, racecheck, synccheck, initcheck");
  EXPECT_EQ(lines("calls"), (std::vector<std::string>{"memcheck", "racecheck", "synccheck", "initcheck"}));
  auto jobs = lines("jobs");
  ASSERT_EQ(jobs.size(), 4u);
  auto init = gpu::decode_job(jobs[3]);
  ASSERT_TRUE(init.ok());
  EXPECT_EQ(init->placement, gpu::Placement::exact_unwritten);
  EXPECT_EQ(init->size_sets, (std::vector<std::string>{"small", "tiny"}));
  EXPECT_EQ(gpu::decode_job(jobs[0])->placement, gpu::Placement::exact);
  EXPECT_EQ(gpu::decode_job(jobs[1])->placement, gpu::Placement::guarded) << "racecheck on verify's placement";
  EXPECT_EQ(gpu::decode_job(jobs[2])->placement, gpu::Placement::guarded) << "synccheck on verify's placement";
}

TEST_F(SanitizeStage, ARaceFailsTheStageWithTheToolsWords) {
  tool_says("racecheck", kRacecheckLog, kSanitizerErrorExit);
  StageResult s = run_stage();
  EXPECT_EQ(s.status, StageStatus::failed);
  EXPECT_EQ(s.summary.rfind("racecheck: 1 error: Error: Race reported between Write access at reduce_sum+0x2c0", 0), 0u) << s.summary;
  EXPECT_EQ(lines("calls"), (std::vector<std::string>{"memcheck", "racecheck"})) << "the first finding stops the stage";
  EXPECT_TRUE(s.held_back) << "racecheck ran on a held-back size too: the model gets the version without places";
}

TEST_F(SanitizeStage, ARunWithoutASummaryOrThatFaultsIsNoPass) {
  tool_says("memcheck", "========= COMPUTE-SANITIZER\n", 0);
  StageResult s = run_stage();
  EXPECT_EQ(s.status, StageStatus::failed);
  EXPECT_NE(s.summary.find("memcheck printed no summary"), std::string::npos) << s.summary;

  (void)run_process({"/bin/rm", "-f", dir_ + "/memcheck.log", dir_ + "/memcheck.code", dir_ + "/calls"}, std::chrono::seconds(5));
  answer(R"({"failure":{"kind":"fault","message":"CUDA_ERROR_ILLEGAL_INSTRUCTION","where":""},"fatal":true})");
  s = run_stage();
  EXPECT_EQ(s.status, StageStatus::failed);
  EXPECT_NE(s.summary.find("memcheck run failed: fault: CUDA_ERROR_ILLEGAL_INSTRUCTION"), std::string::npos) << s.summary;
}

TEST_F(SanitizeStage, ASanitizerThatDoesNotStartFailsTheStage) {
  opts_.sanitizer = dir_ + "/no-such-sanitizer";
  StageResult s = run_stage();
  EXPECT_EQ(s.status, StageStatus::failed) << "a sanitizer that does not start is a failed run, not a pass: " << s.summary;
}

}  // namespace
}  // namespace ptxforge::eval
