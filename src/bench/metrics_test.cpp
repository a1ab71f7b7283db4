#include "bench/metrics.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "bench/report.h"
#include "bench/store.h"

namespace ptxforge::bench {
namespace {

TEST(PassAtK, MatchesTheUnbiasedEstimator) {
  // 1 - C(n-c, k) / C(n, k), computed by hand.
  EXPECT_DOUBLE_EQ(pass_at_k(10, 0, 1), 0);
  EXPECT_DOUBLE_EQ(pass_at_k(10, 10, 5), 1);
  EXPECT_NEAR(pass_at_k(10, 3, 1), 0.3, 1e-12);
  EXPECT_NEAR(pass_at_k(5, 2, 2), 1 - 3.0 / 10.0, 1e-12);  // C(3,2)=3, C(5,2)=10
  EXPECT_NEAR(pass_at_k(4, 1, 3), 1 - 0.25, 1e-12);        // C(3,3)=1, C(4,3)=4
  EXPECT_DOUBLE_EQ(pass_at_k(4, 2, 3), 1);                 // fewer failures than k
  EXPECT_DOUBLE_EQ(pass_at_k(4, 2, 5), 0);                 // k > n: undefined, reported 0
}

CellRow cell(const std::string& id, int index, const std::string& model, const std::string& task, bool library) {
  CellRow c;
  c.id = id;
  c.index = index;
  c.model = model;
  c.model_spec = "cmd:" + model;
  c.task = task;
  c.has_library = library;
  c.mode = "implement";
  c.knowledge = "templates";
  c.seed = "1";
  c.samples = 2;
  c.rounds = 3;
  c.status = "verified";
  c.finished = true;
  c.session = "cells/" + id;
  c.prompt_tokens = 1000;
  c.completion_tokens = 500;
  return c;
}

RoundRow round(const std::string& cell, int sample, int r, bool verified, double nvcc = 0, double lib = 0) {
  RoundRow row;
  row.cell = cell;
  row.summary.sample = sample;
  row.summary.round = r;
  row.summary.extracted = true;
  row.summary.assembled = true;
  row.checked = true;
  row.summary.passed = verified;
  row.summary.gpu_verified = true;
  row.summary.stage = verified ? "" : "verify";
  row.summary.speedup_vs_nvcc = nvcc;
  row.summary.speedup_vs_library = lib;
  row.summary.gpu = 0;
  if (!verified) row.failure_kind = "mismatch";
  return row;
}

// Model m: task A verified in round 2 of sample 1 at 2x nvcc / 0.5x library, sample 2 never;
// task B verified at round 1 in both samples (1.2x and 0.9x nvcc, no library).
std::pair<std::vector<CellRow>, std::vector<RoundRow>> sample_bench() {
  std::vector<CellRow> cells = {cell("m/A", 0, "m", "A", true), cell("m/B", 1, "m", "B", false)};
  std::vector<RoundRow> rounds = {round("m/A", 1, 1, false), round("m/A", 1, 2, true, 2.0, 0.5), round("m/A", 2, 1, false),
                                  round("m/A", 2, 2, false),  round("m/A", 2, 3, false),        round("m/B", 1, 1, true, 1.2),
                                  round("m/B", 2, 1, true, 0.9)};
  return {cells, rounds};
}

TEST(BenchMetrics, RatesFastPAndGeomeans) {
  auto [cells, rounds] = sample_bench();
  auto m = compute_metrics(cells, rounds, "x", 2);
  ASSERT_EQ(m.arms.size(), 1u);
  auto& a = m.arms[0];
  EXPECT_EQ(a.trajectories, 4);
  EXPECT_EQ(a.verified_first.hits, 2);
  EXPECT_EQ(a.verified.hits, 3);
  EXPECT_TRUE(a.gpu_ran);
  // pass@1 per cell: A 1/2, B 2/2 -> mean 0.75; pass@2: A 1, B 1.
  ASSERT_EQ(a.pass_at.size(), 2u);
  EXPECT_NEAR(a.pass_at[0].second, 0.75, 1e-12);
  EXPECT_NEAR(a.pass_at[1].second, 1.0, 1e-12);
  // fast_p vs nvcc over 4 trajectories: p=0: 3 verified; p=1: 2.0 and 1.2; p=1.5: 2.0; p=2: none (strictly faster).
  EXPECT_EQ(a.fast_nvcc[0].rate.hits, 3);
  EXPECT_EQ(a.fast_nvcc[3].rate.hits, 2);
  EXPECT_EQ(a.fast_nvcc[4].rate.hits, 1);
  EXPECT_EQ(a.fast_nvcc[5].rate.hits, 0);
  EXPECT_EQ(a.fast_nvcc[0].rate.of, 4);
  // vs the library only task A counts (2 trajectories): one verified at 0.5x.
  EXPECT_EQ(a.fast_library[0].rate.of, 2);
  EXPECT_EQ(a.fast_library[0].rate.hits, 1);
  EXPECT_EQ(a.fast_library[1].rate.hits, 0);
  EXPECT_NEAR(a.geomean_nvcc, std::cbrt(2.0 * 1.2 * 0.9), 1e-12);
  EXPECT_NEAR(a.geomean_library, 0.5, 1e-12);
  // Rounds to the first verified: round 1 twice, round 2 once, never once.
  EXPECT_EQ(a.first_verified, (std::vector<int>{2, 1, 0, 1}));
  // Failures: 4 rounds failed at verify with a mismatch.
  ASSERT_FALSE(m.failures.empty());
  EXPECT_EQ(m.failures[0].axis, "stage");
  EXPECT_EQ(m.failures[0].name, "verify");
  EXPECT_EQ(m.failures[0].total, 4);
  EXPECT_EQ(m.rounds_per_gpu.at(0), 7);
}

TEST(BenchMetrics, WithoutAGpuVerificationIsNotRunNotZero) {
  auto [cells, rounds] = sample_bench();
  for (auto& r : rounds) {
    r.summary.no_gpu = true;
    r.summary.passed = false;
    r.summary.gpu_verified = false;
    r.failure_kind.clear();
  }
  auto m = compute_metrics(cells, rounds, "x", 2);
  EXPECT_FALSE(m.arms[0].gpu_ran);
  EXPECT_TRUE(m.failures.empty());  // a round that could only be assembled did not fail
  EXPECT_NE(render_markdown(m).find("not run (no GPU)"), std::string::npos);
}

TEST(BenchMetrics, CpuEngineVerdictsAreCountedApartFromGpuOnes) {
  auto [cells, rounds] = sample_bench();
  // Task B's two samples passed on the CPU engine only: passed, not gpu_verified.
  for (auto& r : rounds)
    if (r.cell == "m/B") r.summary.gpu_verified = false;
  auto m = compute_metrics(cells, rounds, "x", 2);
  auto& a = m.arms[0];
  EXPECT_EQ(a.verified.hits, 1) << "only task A's sample 1 was verified on a GPU";
  EXPECT_EQ(a.verified_cpu.hits, 2);
  EXPECT_EQ(a.verified_cpu.of, 4);
  EXPECT_EQ(a.fast_nvcc[0].rate.hits, 1) << "fast_p holds GPU verdicts only";
}

TEST(BenchMetrics, ABenchOnTheCpuEngineOnlySaysNotRunOnAGpu) {
  auto [cells, rounds] = sample_bench();
  // Every round verified (or failed) on the CPU engine: none reached a GPU, so the GPU
  // columns read "not run", never a GPU rate of 0%.
  for (auto& r : rounds) {
    r.summary.on_engine = true;
    r.summary.gpu_verified = false;
  }
  auto m = compute_metrics(cells, rounds, "x", 2);
  EXPECT_FALSE(m.arms[0].gpu_ran);
  EXPECT_GT(m.arms[0].verified_cpu.hits, 0);
  std::string md = render_markdown(m);
  EXPECT_NE(md.find("not run (no GPU); on the CPU engine"), std::string::npos) << md;
}

TEST(BenchStore, RoundTripsCellsAndRoundsAndRefusesOtherSchemas) {
  auto dir = std::filesystem::temp_directory_path() / ("ptxforge_store_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = (dir / "bench.db").string();
  auto [cells, rounds] = sample_bench();
  rounds[1].summary.on_engine = true;
  {
    auto s = Store::open(path);
    ASSERT_TRUE(s) << s.error().message;
    for (auto& c : cells) {
      std::vector<RoundRow> mine;
      for (auto& r : rounds)
        if (r.cell == c.id) mine.push_back(r);
      ASSERT_TRUE(s->put_cell(c, mine));
    }
    ASSERT_TRUE(s->put_cell(cells[0], {rounds[0], rounds[1], rounds[2], rounds[3], rounds[4]}));  // rewriting replaces
    ASSERT_TRUE(s->set_meta("name", "x"));
  }
  auto s = Store::open(path);
  ASSERT_TRUE(s);
  auto back_cells = s->cells();
  auto back_rounds = s->rounds();
  ASSERT_TRUE(back_cells && back_rounds);
  EXPECT_EQ(back_cells->size(), 2u);
  EXPECT_EQ(back_rounds->size(), rounds.size());
  for (size_t i = 0; i < back_rounds->size() && i < rounds.size(); ++i)
    EXPECT_EQ((*back_rounds)[i].summary.on_engine, i == 1) << "round row " << i;
  // The metrics of the store are those of the rows it was given.
  auto m = compute_metrics(*s);
  ASSERT_TRUE(m);
  EXPECT_EQ(render_json(*m), render_json(compute_metrics(cells, rounds, "x", 0)));
  auto csv = s->export_csv("rounds");
  ASSERT_TRUE(csv);
  EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), static_cast<long>(rounds.size()) + 1);
  EXPECT_FALSE(s->export_jsonl("sqlite_master"));  // only the store's tables
  ASSERT_TRUE(s->set_meta("schema_version", "99"));
  EXPECT_FALSE(Store::open(path));
  std::filesystem::remove_all(dir);
}

TEST(BenchStore, AVersionOneStoreGainsTheEngineColumnWhenOpened) {
  auto dir = std::filesystem::temp_directory_path() / ("ptxforge_store_v1_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = (dir / "bench.db").string();
  {  // the rounds table as version 1 made it, without on_engine
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* v1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES('schema_version', '1');
CREATE TABLE rounds(
  cell TEXT NOT NULL, sample INTEGER NOT NULL, round INTEGER NOT NULL, verdict TEXT NOT NULL, stage TEXT NOT NULL,
  extracted INTEGER NOT NULL, checked INTEGER NOT NULL, assembled INTEGER NOT NULL, passed INTEGER NOT NULL,
  gpu_verified INTEGER NOT NULL, no_gpu INTEGER NOT NULL, speedup_vs_nvcc REAL NOT NULL, speedup_vs_library REAL NOT NULL,
  registers INTEGER NOT NULL, spill_bytes INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
  cached INTEGER NOT NULL, seed TEXT NOT NULL, gpu INTEGER NOT NULL, failure_kind TEXT NOT NULL, error_ids TEXT NOT NULL,
  families INTEGER NOT NULL, in_sass INTEGER NOT NULL, executed INTEGER NOT NULL, record TEXT NOT NULL,
  PRIMARY KEY(cell, sample, round));)sql";
    ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  auto [cells, rounds] = sample_bench();
  rounds[0].summary.on_engine = true;
  {
    auto s = Store::open(path);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(s->meta("schema_version"), std::to_string(kSchemaVersion));
    std::vector<RoundRow> mine;
    for (auto& r : rounds)
      if (r.cell == cells[0].id) mine.push_back(r);
    ASSERT_TRUE(s->put_cell(cells[0], mine));
  }
  auto s = Store::open(path);
  ASSERT_TRUE(s) << s.error().message;
  auto back = s->rounds();
  ASSERT_TRUE(back && !back->empty());
  EXPECT_TRUE(back->front().summary.on_engine);
  std::filesystem::remove_all(dir);
}

TEST(BenchReport, FastPAboveZeroIsNotTimedWhereVerifiedKernelsWereNotTimed) {
  // Verified, but with time = false: no speedups. p = 0 is the verified rate; above it "not timed", never 0%.
  std::vector<CellRow> cells = {cell("m/A", 0, "m", "A", false)};
  std::vector<RoundRow> rounds = {round("m/A", 1, 1, true), round("m/A", 2, 1, false)};
  std::string md = render_markdown(compute_metrics(cells, rounds, "x", 2));
  EXPECT_NE(md.find("| m | 50% (1/2) | not timed | not timed |"), std::string::npos) << md;
  // Timed, none verified: 0% is the truth there.
  std::vector<RoundRow> none = {round("m/A", 1, 1, false), round("m/A", 2, 1, false)};
  std::string md0 = render_markdown(compute_metrics(cells, none, "x", 2));
  EXPECT_EQ(md0.find("not timed"), std::string::npos) << md0;
}

TEST(BenchReport, HtmlHoldsEveryChartAndEscapesNames) {
  auto [cells, rounds] = sample_bench();
  for (auto& c : cells) c.model = "<b>m</b>";
  auto html = render_html(compute_metrics(cells, rounds, "x", 2));
  for (auto id : {"chart-speedup", "chart-fastp-nvcc", "chart-fastp-library", "chart-rounds", "chart-failures"})
    EXPECT_NE(html.find(std::string("<svg id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_EQ(html.find("<b>m</b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;m&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // self-contained, nothing runs
}

TEST(BenchReport, TheCpuEngineRateIsRenderedInEveryFormat) {
  auto [cells, rounds] = sample_bench();
  // Task B's two samples passed on the CPU engine only.
  for (auto& r : rounds)
    if (r.cell == "m/B") {
      r.summary.gpu_verified = false;
      r.summary.on_engine = true;
    }
  auto m = compute_metrics(cells, rounds, "x", 2);
  EXPECT_TRUE(m.arms[0].engine_ran);
  std::string md = render_markdown(m);
  EXPECT_NE(md.find("| 0% (0/4) / 25% (1/4); on the CPU engine 50% (2/4) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| B | m | 0/2 (+2 on the CPU engine) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| A | m | 1/2 |"), std::string::npos) << md;
  auto j = nlohmann::json::parse(render_json(m));
  const auto& by_end = j["arms"][0]["by_end"];
  EXPECT_EQ(by_end["verified"]["hits"], 1);
  EXPECT_EQ(by_end["verified_cpu"]["hits"], 2);
  EXPECT_EQ(by_end["verified_cpu"]["of"], 4);
  EXPECT_EQ(j["arms"][0]["engine_ran"], true);
  for (auto& t : j["tasks"]) EXPECT_EQ(t["verified_cpu"], t["task"] == "B" ? 2 : 0) << t.dump();
  std::string html = render_html(m);
  EXPECT_NE(html.find("<th>verified on the CPU engine only</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>25% (1/4)</td><td>50% (2/4)</td>"), std::string::npos) << html;

  // The engine ran and verified nothing: 0%, not silence, and still apart from the GPU's rate.
  for (auto& r : rounds) {
    r.summary.on_engine = true;
    r.summary.passed = false;
    r.summary.gpu_verified = false;
  }
  md = render_markdown(compute_metrics(cells, rounds, "x", 2));
  EXPECT_NE(md.find("not run (no GPU) / not run (no GPU); on the CPU engine 0% (0/4) |"), std::string::npos) << md;
  // A bench on GPUs only never mentions the engine.
  auto [gpu_cells, gpu_rounds] = sample_bench();
  EXPECT_EQ(render_markdown(compute_metrics(gpu_cells, gpu_rounds, "x", 2)).find("CPU engine"), std::string::npos);
  EXPECT_NE(render_html(compute_metrics(gpu_cells, gpu_rounds, "x", 2)).find("<td>not run</td>"), std::string::npos);
}

}  // namespace
}  // namespace ptxforge::bench
