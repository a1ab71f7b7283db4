// The bench report as one self-contained HTML page: tables, and charts drawn as inline SVG
// (no script, no external file), each chart an <svg id="chart-..."> whose marks carry their
// data (data-arm, data-task, data-value), so a test can read the page back.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "bench/report.h"

namespace ptxforge::bench {

namespace {

// Colour of the i-th arm (Tableau 10): distinct on screen and in a screenshot.
const char* arm_colour(size_t i) {
  static const char* c[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return c[i % 10];
}

std::string esc(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string pct(const Rate& r) { return r.of ? fmt::format("{:.0f}% ({}/{})", 100 * r.value(), r.hits, r.of) : "-"; }

std::string legend(const BenchMetrics& m) {
  std::string o = "<div class=\"legend\">";
  for (size_t i = 0; i < m.arms.size(); ++i)
    o += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", arm_colour(i), esc(m.arms[i].label));
  return o + "</div>\n";
}

// Grouped bars: one group per label, one bar per arm. values[g][arm].
std::string grouped_bars(const std::string& id, const std::vector<std::string>& groups, const std::vector<std::vector<double>>& values,
                         const BenchMetrics& m, const std::string& unit, double reference_line, const std::string& data_group) {
  const double w = 860, h = 330, left = 50, bottom = 120, top = 15;
  double hi = reference_line > 0 ? reference_line * 1.25 : 1;
  for (auto& g : values)
    for (double v : g) hi = std::max(hi, v * 1.1);
  double plot_h = h - bottom - top, group_w = (w - left - 10) / std::max<size_t>(1, groups.size());
  double bar_w = std::min(40.0, group_w * 0.8 / std::max<size_t>(1, m.arms.size()));
  std::string o = fmt::format("<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                              "viewBox=\"0 0 {} {}\">\n",
                              id, w, h, w, h);
  auto y_of = [&](double v) { return top + plot_h * (1 - v / hi); };
  for (int t = 0; t <= 4; ++t) {
    double v = hi * t / 4;
    o += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1f}\" "
                     "class=\"tick\" text-anchor=\"end\">{:.2g}{}</text>\n",
                     left, w - 10, y_of(v), y_of(v), left - 4, y_of(v) + 4, v, unit);
  }
  if (reference_line > 0)
    o += fmt::format("<line class=\"reference\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\" "
                     "stroke-dasharray=\"5,4\"/>\n",
                     left, w - 10, y_of(reference_line), y_of(reference_line));
  for (size_t g = 0; g < groups.size(); ++g) {
    double x0 = left + g * group_w + (group_w - bar_w * m.arms.size()) / 2;
    for (size_t a = 0; a < m.arms.size() && a < values[g].size(); ++a) {
      double v = values[g][a];
      if (v <= 0) continue;
      o += fmt::format("<rect class=\"bar\" data-arm=\"{}\" data-{}=\"{}\" data-value=\"{:.4g}\" x=\"{:.1f}\" y=\"{:.1f}\" "
                       "width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {:.3g}{}</title></rect>\n",
                       esc(m.arms[a].label), data_group, esc(groups[g]), v, x0 + a * bar_w, y_of(v), bar_w - 2, y_of(0) - y_of(v),
                       arm_colour(a), esc(groups[g] + ", " + m.arms[a].label), v, unit);
    }
    double cx = left + g * group_w + group_w / 2;
    o += fmt::format("<text class=\"label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" transform=\"rotate(-35 {:.1f} {:.1f})\">{}</text>\n",
                     cx, h - bottom + 14, cx, h - bottom + 14, esc(groups[g].size() > 32 ? groups[g].substr(0, 31) + "…" : groups[g]));
  }
  return o + "</svg>\n";
}

std::string fast_p_chart(const std::string& id, const BenchMetrics& m, bool library) {
  const double w = 420, h = 260, left = 45, bottom = 35, top = 12, right = 12;
  auto x_of = [&](double p) { return left + (w - left - right) * p / 2.0; };
  auto y_of = [&](double v) { return top + (h - top - bottom) * (1 - v); };
  std::string o = fmt::format("<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                              "viewBox=\"0 0 {} {}\">\n",
                              id, w, h, w, h);
  for (int t = 0; t <= 4; ++t)
    o += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/><text class=\"tick\" x=\"{}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{}%</text>\n",
                     left, w - right, y_of(t / 4.0), y_of(t / 4.0), left - 4, y_of(t / 4.0) + 4, t * 25);
  for (double p : kFastP)
    o += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_of(p), h - bottom + 16, p);
  o += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">p (speedup over {})</text>\n", x_of(1), h - 4,
                   library ? "the library" : "nvcc");
  for (size_t a = 0; a < m.arms.size(); ++a) {
    auto& curve = library ? m.arms[a].fast_library : m.arms[a].fast_nvcc;
    if (curve.empty() || curve[0].rate.of == 0 || !m.arms[a].gpu_ran) continue;  // not run is not 0%
    std::string pts;
    for (auto& f : curve) pts += fmt::format("{:.1f},{:.1f} ", x_of(f.p), y_of(f.rate.value()));
    o += fmt::format("<polyline class=\"curve\" data-arm=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"3\"/>\n",
                     esc(m.arms[a].label), pts, arm_colour(a));
    for (auto& f : curve)
      o += fmt::format("<circle class=\"point\" data-arm=\"{}\" data-p=\"{}\" data-value=\"{:.4g}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" "
                       "fill=\"{}\"/>\n",
                       esc(m.arms[a].label), f.p, f.rate.value(), x_of(f.p), y_of(f.rate.value()), arm_colour(a));
  }
  return o + "</svg>\n";
}

}  // namespace

std::string render_html(const BenchMetrics& m) {
  std::string title = "ptxforge bench: " + (m.name.empty() ? std::string("(unnamed)") : m.name);
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + esc(title) + "</title>\n";
  o += "<style>body{font:14px/1.4 sans-serif;margin:24px;color:#222;background:#fff}table{border-collapse:collapse;margin:8px 0 20px}"
       "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
       ".legend span{margin-right:16px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}"
       ".tick,.label{font-size:11px;fill:#444}.note{color:#666}.charts{display:flex;flex-wrap:wrap;gap:16px}</style></head><body>\n";
  o += fmt::format("<h1>{}</h1>\n<p id=\"summary\">{} of {} cells in the store, {} finished.</p>\n", esc(title), m.cells,
                   m.cells_in_grid ? m.cells_in_grid : m.cells, m.finished);
  o += legend(m);

  o += "<h2>Stages</h2>\n<table id=\"arms\"><tr><th>arm</th><th>trajectories</th><th>extracted</th><th>checked</th><th>assembled</th>"
       "<th>verified</th><th>verified on the CPU engine only</th><th>geomean vs nvcc</th><th>geomean vs library</th><th>proven executed</th></tr>\n";
  for (auto& a : m.arms)
    o += fmt::format("<tr data-arm=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                     "<td>{}</td></tr>\n",
                     esc(a.label), esc(a.label), a.trajectories, pct(a.extracted), pct(a.checked), pct(a.assembled),
                     a.gpu_ran ? pct(a.verified) : "not run (no GPU)",
                     a.engine_ran || a.verified_cpu.hits ? pct(a.verified_cpu) : "not run",
                     a.geomean_nvcc > 0 ? fmt::format("{:.2f}x", a.geomean_nvcc) : "-",
                     a.geomean_library > 0 ? fmt::format("{:.2f}x", a.geomean_library) : "-", pct(a.proven_executed));
  o += "</table>\n";

  o += "<h2>Best verified speedup over nvcc per task</h2>\n";
  std::vector<std::vector<double>> speed(m.tasks.size(), std::vector<double>(m.arms.size(), 0));
  bool any_timed = false;
  for (auto& r : m.results)
    for (size_t t = 0; t < m.tasks.size(); ++t)
      for (size_t a = 0; a < m.arms.size(); ++a)
        if (m.tasks[t] == r.task && m.arms[a].label == r.arm) {
          speed[t][a] = r.best_nvcc;
          any_timed |= r.best_nvcc > 0;
        }
  if (!any_timed) o += "<p class=\"note\">No verified, timed kernel: the chart is empty (on a machine without a GPU nothing is timed).</p>\n";
  o += grouped_bars("chart-speedup", m.tasks, speed, m, "x", 1.0, "task");

  o += "<h2>fast_p: verified and more than p times as fast</h2>\n";
  if (std::none_of(m.arms.begin(), m.arms.end(), [](const ArmMetrics& a) { return a.gpu_ran; }))
    o += "<p class=\"note\">No kernel was run on a GPU: there is no curve to draw.</p>\n";
  o += "<div class=\"charts\">";
  o += fast_p_chart("chart-fastp-nvcc", m, false) + fast_p_chart("chart-fastp-library", m, true) + "</div>\n";

  o += "<h2>Rounds to the first verified kernel</h2>\n";
  size_t buckets = m.arms.empty() ? 0 : m.arms[0].first_verified.size();
  std::vector<std::string> names;
  std::vector<std::vector<double>> counts(buckets, std::vector<double>(m.arms.size(), 0));
  for (size_t i = 0; i < buckets; ++i) names.push_back(i + 1 == buckets ? "never" : fmt::format("round {}", i + 1));
  for (size_t a = 0; a < m.arms.size(); ++a)
    for (size_t i = 0; i < buckets && i < m.arms[a].first_verified.size(); ++i) counts[i][a] = m.arms[a].first_verified[i];
  o += grouped_bars("chart-rounds", names, counts, m, "", 0, "bucket");

  o += "<h2>Failure taxonomy (rounds)</h2>\n";
  std::vector<std::string> classes;
  std::vector<std::vector<double>> fails;
  for (auto& f : m.failures) {
    if (classes.size() == 16) break;
    classes.push_back(f.axis + ": " + f.name);
    fails.emplace_back(f.counts.begin(), f.counts.end());
  }
  if (classes.empty()) o += "<p class=\"note\">No round failed.</p>\n";
  o += grouped_bars("chart-failures", classes, fails, m, "", 0, "class");

  o += "<h2>Per task</h2>\n<table id=\"tasks\"><tr><th>task</th><th>arm</th><th>verified</th><th>vs nvcc</th><th>vs library</th><th>status</th></tr>\n";
  for (auto& r : m.results)
    o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}/{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(r.task), esc(r.arm), r.verified,
                     r.trajectories, r.best_nvcc > 0 ? fmt::format("{:.2f}x", r.best_nvcc) : "-",
                     !r.has_library ? "no baseline" : r.best_library > 0 ? fmt::format("{:.2f}x", r.best_library) : "-", esc(r.status));
  o += "</table>\n";
  if (!m.translate.empty()) {
    o += "<h2>Translate: the model vs nvcc on the same CUDA source</h2>\n<table id=\"translate\"><tr><th>task</th><th>arm</th><th>model / nvcc</th></tr>\n";
    for (auto& r : m.translate)
      o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(r.task), esc(r.arm),
                       r.best_nvcc > 0 ? fmt::format("{:.2f}x", r.best_nvcc) : "-");
    o += "</table>\n";
  }
  o += "<p class=\"note\">Definitions of every number: docs/bench.md.</p>\n</body></html>\n";
  return o;
}

}  // namespace ptxforge::bench
