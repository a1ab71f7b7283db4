#include "bench/metrics.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace ptxforge::bench {

double pass_at_k(int n, int c, int k) {
  if (n <= 0 || k <= 0 || k > n) return 0;
  if (n - c < k) return 1;
  // 1 - prod_{i = n-c+1}^{n} (1 - k / i): the ratio of binomials without overflow.
  double fail = 1;
  for (int i = n - c + 1; i <= n; ++i) fail *= 1.0 - static_cast<double>(k) / i;
  return 1 - fail;
}

namespace {

// What one trajectory (a cell's sample) came to.
struct Trajectory {
  bool extracted_first = false, checked_first = false, assembled_first = false, verified_first = false;
  bool extracted = false, checked = false, assembled = false, verified = false, gpu_ran = false;
  bool cpu_verified = false;  // some round passed on the CPU engine only (never counted as verified)
  bool engine_ran = false;    // some round's verify ran on the CPU engine
  int first_verified = 0;  // round, 0: never
  double best_nvcc = 0, best_library = 0;
  const RoundRow* best = nullptr;  // the verified round with the best speedup (the first verified when untimed)
};

bool is_verified(const agent::RoundSummary& s) { return s.passed && s.gpu_verified; }
// A round passes without gpu_verified only where the CPU engine verified it (eval::RunRecord::passed).
bool is_cpu_verified(const agent::RoundSummary& s) { return s.passed && !s.gpu_verified; }

Trajectory summarise(const std::vector<const RoundRow*>& rounds) {
  Trajectory t;
  for (auto* r : rounds) {
    auto& s = r->summary;
    bool v = is_verified(s);
    if (s.round == 1) {
      t.extracted_first = s.extracted;
      t.checked_first = r->checked;
      t.assembled_first = s.assembled;
      t.verified_first = v;
    }
    t.extracted |= s.extracted;
    t.checked |= r->checked;
    t.assembled |= s.assembled;
    t.gpu_ran |= s.assembled && !s.no_gpu && !s.on_engine;  // a round the CPU engine verified ran on no GPU
    t.cpu_verified |= is_cpu_verified(s);
    t.engine_ran |= s.on_engine;
    if (!v) continue;
    if (!t.verified) t.first_verified = s.round;
    t.verified = true;
    if (!t.best || s.speedup_vs_nvcc > t.best->summary.speedup_vs_nvcc) t.best = r;
    t.best_nvcc = std::max(t.best_nvcc, s.speedup_vs_nvcc);
    t.best_library = std::max(t.best_library, s.speedup_vs_library);
  }
  return t;
}

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double log_sum = 0;
  for (double x : v) log_sum += std::log(x);
  return std::exp(log_sum / v.size());
}

void add(Rate& r, bool hit) {
  ++r.of;
  r.hits += hit;
}

std::string stage_of(const RoundRow& r) {
  if (!r.summary.extracted) return "extract";
  return r.summary.stage.empty() ? "unknown" : r.summary.stage;
}

}  // namespace

BenchMetrics compute_metrics(const std::vector<CellRow>& cells_in, const std::vector<RoundRow>& rounds, const std::string& name,
                             int cells_in_grid) {
  BenchMetrics m;
  m.name = name;
  m.cells_in_grid = cells_in_grid;
  std::vector<CellRow> cells = cells_in;
  std::sort(cells.begin(), cells.end(), [](const CellRow& a, const CellRow& b) { return a.index < b.index; });
  m.cells = static_cast<int>(cells.size());

  // Arms in grid order; the label names only what the bench varies.
  std::set<std::string> modes, levels;
  for (auto& c : cells) {
    modes.insert(c.mode);
    levels.insert(c.knowledge);
  }
  auto arm_index = [&](const CellRow& c) {
    for (size_t i = 0; i < m.arms.size(); ++i)
      if (m.arms[i].model == c.model && m.arms[i].mode == c.mode && m.arms[i].knowledge == c.knowledge) return i;
    ArmMetrics a;
    a.model = c.model;
    a.mode = c.mode;
    a.knowledge = c.knowledge;
    a.label = c.model;
    if (modes.size() > 1) a.label += " · " + c.mode;
    if (levels.size() > 1) a.label += " · " + c.knowledge;
    m.arms.push_back(a);
    return m.arms.size() - 1;
  };

  std::map<std::string, std::vector<const RoundRow*>> by_cell;
  for (auto& r : rounds) by_cell[r.cell].push_back(&r);

  int max_samples = 1, max_rounds = 1;
  for (auto& c : cells) {
    max_samples = std::max(max_samples, c.samples);
    max_rounds = std::max(max_rounds, c.rounds);
  }
  for (int k : {1, 2, 4, 5, 8, 10, 16, 32, 64})
    if (k <= max_samples) m.ks.push_back(k);
  if (std::find(m.ks.begin(), m.ks.end(), max_samples) == m.ks.end()) m.ks.push_back(max_samples);

  std::vector<std::vector<double>> nvcc_speedups, library_speedups;
  std::vector<std::vector<std::pair<double, double>>> pass_sums;  // per arm, per k: (verified, assembled) sums
  std::vector<int> cells_with_k;
  std::map<std::pair<std::string, std::string>, int> failure_index;  // (axis, name) -> failures[]
  auto count_failure = [&](const std::string& axis, const std::string& what, size_t arm) {
    auto key = std::make_pair(axis, what);
    auto it = failure_index.find(key);
    if (it == failure_index.end()) {
      it = failure_index.emplace(key, static_cast<int>(m.failures.size())).first;
      m.failures.push_back({axis, what, {}, 0});
    }
    auto& f = m.failures[it->second];
    f.counts.resize(std::max(f.counts.size(), arm + 1), 0);
    ++f.counts[arm];
    ++f.total;
  };

  std::vector<std::string> task_order;
  std::map<std::pair<std::string, size_t>, TaskResult> results;
  for (auto& c : cells) {
    if (c.finished) ++m.finished;
    size_t ai = arm_index(c);
    if (nvcc_speedups.size() < m.arms.size()) {
      nvcc_speedups.resize(m.arms.size());
      library_speedups.resize(m.arms.size());
      pass_sums.resize(m.arms.size(), std::vector<std::pair<double, double>>(m.ks.size()));
    }
    auto& a = m.arms[ai];
    if (a.first_verified.empty()) a.first_verified.assign(max_rounds + 1, 0);
    if (a.fast_nvcc.empty())
      for (double p : kFastP) {
        a.fast_nvcc.push_back({p, {}});
        a.fast_library.push_back({p, {}});
      }
    ++a.cells;
    a.prompt_tokens += c.prompt_tokens;
    a.completion_tokens += c.completion_tokens;
    a.cost_usd += c.cost_usd;
    a.priced |= c.priced;
    if (std::find(task_order.begin(), task_order.end(), c.task) == task_order.end()) task_order.push_back(c.task);
    auto& tr = results[{c.task, ai}];
    if (tr.task.empty()) {
      tr.task = c.task;
      tr.arm = a.label;
      tr.has_library = c.has_library;
      tr.status = c.status;
    }

    auto& cell_rounds = by_cell[c.id];
    int verified_samples = 0, assembled_samples = 0;
    for (int k = 1; k <= c.samples; ++k) {
      std::vector<const RoundRow*> mine;
      for (auto* r : cell_rounds)
        if (r->summary.sample == k) mine.push_back(r);
      Trajectory t = summarise(mine);
      ++a.trajectories;
      ++tr.trajectories;
      add(a.extracted_first, t.extracted_first);
      add(a.checked_first, t.checked_first);
      add(a.assembled_first, t.assembled_first);
      add(a.verified_first, t.verified_first);
      add(a.extracted, t.extracted);
      add(a.checked, t.checked);
      add(a.assembled, t.assembled);
      add(a.verified, t.verified);
      add(a.verified_cpu, t.cpu_verified && !t.verified);
      a.gpu_ran |= t.gpu_ran;
      a.engine_ran |= t.engine_ran || t.cpu_verified;
      tr.verified_cpu += t.cpu_verified && !t.verified;
      verified_samples += t.verified;
      assembled_samples += t.assembled;
      a.first_verified[t.verified ? t.first_verified - 1 : max_rounds] += 1;
      for (size_t i = 0; i < kFastP.size(); ++i) {
        double p = kFastP[i];
        add(a.fast_nvcc[i].rate, t.verified && (p == 0 || t.best_nvcc > p));
        if (c.has_library) add(a.fast_library[i].rate, t.verified && (p == 0 || t.best_library > p));
      }
      if (t.verified) {
        ++tr.verified;
        tr.best_nvcc = std::max(tr.best_nvcc, t.best_nvcc);
        tr.best_library = std::max(tr.best_library, t.best_library);
        if (t.best_nvcc > 0) nvcc_speedups[ai].push_back(t.best_nvcc);
        if (t.best_library > 0) library_speedups[ai].push_back(t.best_library);
        if (t.best && t.best->families > 0) {
          add(a.proven_sass, t.best->in_sass == t.best->families);
          add(a.proven_executed, t.best->executed == t.best->families);
        }
      }
    }
    for (size_t i = 0; i < m.ks.size(); ++i) {
      pass_sums[ai][i].first += pass_at_k(c.samples, verified_samples, m.ks[i]);
      pass_sums[ai][i].second += pass_at_k(c.samples, assembled_samples, m.ks[i]);
    }
    for (auto* r : cell_rounds) {
      auto& s = r->summary;
      if (s.gpu_verified && s.gpu >= 0) ++m.rounds_per_gpu[s.gpu];
      if (s.passed || (s.no_gpu && s.assembled)) continue;  // nothing failed (a CPU-only round stops at assemble)
      count_failure("stage", stage_of(*r), ai);
      std::set<std::string> ids(r->error_ids.begin(), r->error_ids.end());  // once per round each
      for (auto& id : ids) count_failure("diagnostic", id, ai);
      if (!r->failure_kind.empty()) count_failure("failure kind", r->failure_kind, ai);
    }
  }
  for (size_t ai = 0; ai < m.arms.size(); ++ai) {
    auto& a = m.arms[ai];
    a.geomean_nvcc = geomean(nvcc_speedups[ai]);
    a.geomean_library = geomean(library_speedups[ai]);
    a.timed_nvcc = static_cast<int>(nvcc_speedups[ai].size());
    a.timed_library = static_cast<int>(library_speedups[ai].size());
    for (size_t i = 0; i < m.ks.size(); ++i) {
      a.pass_at.emplace_back(m.ks[i], a.cells ? pass_sums[ai][i].first / a.cells : 0);
      a.assembled_at.emplace_back(m.ks[i], a.cells ? pass_sums[ai][i].second / a.cells : 0);
    }
  }
  for (auto& f : m.failures) f.counts.resize(m.arms.size(), 0);
  std::stable_sort(m.failures.begin(), m.failures.end(), [](const FailureClass& x, const FailureClass& y) {
    if (x.axis != y.axis) return x.axis > y.axis;  // stage, failure kind, diagnostic
    if (x.total != y.total) return x.total > y.total;
    return x.name < y.name;
  });
  m.tasks = task_order;
  for (auto& t : task_order)
    for (size_t ai = 0; ai < m.arms.size(); ++ai) {
      auto it = results.find({t, ai});
      if (it == results.end()) continue;
      m.results.push_back(it->second);
      if (m.arms[ai].mode == "translate") m.translate.push_back(it->second);
    }
  return m;
}

Result<BenchMetrics> compute_metrics(const Store& store) {
  auto cells = store.cells();
  if (!cells) return cells.error();
  auto rounds = store.rounds();
  if (!rounds) return rounds.error();
  int grid = 0;
  if (auto g = store.meta("cells_in_grid")) grid = std::atoi(g->c_str());
  return compute_metrics(*cells, *rounds, store.meta("name").value_or(""), grid);
}

}  // namespace ptxforge::bench
