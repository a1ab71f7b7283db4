// The stage pipeline without a GPU: a fake worker stands in for the GPU worker, so the flow
// (check -> assemble -> verify -> prove), its early stops and its verdicts are tested in CI.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "eval/pipeline.h"
#include "task/task_spec.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::eval {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;

std::vector<std::string> no_gpu_worker() {
  return {"/bin/sh", "-c", R"(while read l; do echo '{"failure":{"kind":"driver","message":"no CUDA driver"},"fatal":false}'; done)"};
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
    auto t = task::load_task(kRoot + "/tasks/level1/vector_add");
    ASSERT_TRUE(t.ok()) << t.error().message;
    task_ = *t;
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = ::testing::TempDir() + "/" + name;
    EXPECT_TRUE(write_file(path, text).ok());
    return path;
  }
  task::Task task_;
};

TEST_F(PipelineTest, WithoutAGpuTheVerdictSaysNotVerified) {
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, kRoot + "/tasks/level1/vector_add/solution.ptx", {});
  EXPECT_EQ(r.find_stage("check")->status, StageStatus::passed);
  EXPECT_EQ(r.find_stage("assemble")->status, StageStatus::passed);
  EXPECT_EQ(r.find_stage("verify")->status, StageStatus::skipped);
  EXPECT_FALSE(r.passed);
  EXPECT_FALSE(r.gpu_verified);
  EXPECT_EQ(r.verdict().rfind("NOT verified on a GPU", 0), 0u) << r.verdict();
  EXPECT_NE(render_report_json(r).find("\"gpu_verified\": false"), std::string::npos);
}

TEST_F(PipelineTest, FrontEndErrorsStopTheFlowWithDiagnostics) {
  std::string text = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  text.replace(text.find("add.f32 %z, %x, %y;"), 19, "add.f32 %z, %x, %w;");
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, write("broken.ptx", text), {});
  EXPECT_EQ(r.find_stage("check")->status, StageStatus::failed);
  EXPECT_EQ(r.find_stage("assemble")->status, StageStatus::not_run);
  ASSERT_FALSE(r.diagnostics.list().empty());
  EXPECT_EQ(r.diagnostics.list()[0].check_id, "undeclared-reg");
  EXPECT_NE(render_report_text(r).find("error: register '%w' is not declared"), std::string::npos) << render_report_text(r);
  auto j = nlohmann::json::parse(render_report_json(r));
  ASSERT_FALSE(j["diagnostics"]["diagnostics"].empty());
  for (auto& d : j["diagnostics"]["diagnostics"])
    EXPECT_EQ(d.value("file", ""), j["diagnostics"]["file"]) << "every diagnostic names its file, as check --format json";
  EXPECT_EQ(r.verdict().rfind("FAILED at check", 0), 0u);
}

TEST_F(PipelineTest, LaunchSpecProblemsAreCheckFailures) {
  std::string text = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  std::string no_spec;
  for (auto line : split(text, '\n'))
    if (!starts_with(line, "// @launch")) no_spec += std::string(line) + "\n";
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, write("nospec.ptx", no_spec), {});
  EXPECT_EQ(r.find_stage("check")->status, StageStatus::failed);
  EXPECT_NE(r.find_stage("check")->summary.find("no launch spec"), std::string::npos);
  RunRecord r2 = p.run(task_, write("badsym.ptx", "// @launch grid=(ceil_div(m,256),1,1) block=(256,1,1) args=(a, b)\n" + no_spec), {});
  EXPECT_NE(r2.find_stage("check")->summary.find("takes 4 parameters, the launch passes 2"), std::string::npos)
      << r2.find_stage("check")->summary;
}

TEST_F(PipelineTest, PtxasErrorsStopAtAssemble) {
  std::string text = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
  // Well-formed, but more static shared memory than any GPU has: ptxas rejects it.
  text.replace(text.find(".visible .entry vector_add("), 0,
               ".visible .entry big() { .shared .b32 s[200000]; .reg .b32 %v; ld.shared.b32 %v, [s]; st.shared.b32 [s+4], %v; ret; }\n");
  Pipeline p(no_gpu_worker());
  RunRecord r = p.run(task_, write("toolarge.ptx", text), {});
  if (r.find_stage("check")->status == StageStatus::failed) GTEST_SKIP() << "the front end caught it first";
  EXPECT_EQ(r.find_stage("assemble")->status, StageStatus::failed) << render_report_text(r);
}

TEST(Prove, CountsRequiredFamiliesInThePtx) {
  auto proofs = prove_in_ptx(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() {\n"
                             "  .reg .b32 %r<2>;\n  wgmma.fence.sync.aligned;\n  mov.u32 %r1, 0;\n  ret;\n}\n",
                             {"wgmma.fence", "wgmma.mma_async", "mov"});
  ASSERT_EQ(proofs.size(), 3u);
  EXPECT_TRUE(proofs[0].in_ptx);
  EXPECT_FALSE(proofs[1].in_ptx);
  EXPECT_EQ(proofs[2].ptx_count, 1);
  EXPECT_FALSE(proofs[0].in_sass.has_value()) << "SASS proofs are not claimed";
}

}  // namespace
}  // namespace ptxforge::eval
