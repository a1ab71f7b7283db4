// A bench's report, from its metrics: Markdown (to read and to paste), JSON (to plot
// elsewhere) and one self-contained HTML page with inline SVG charts (speedup per task and
// arm, fast_p curves, rounds to the first verified kernel, the failure taxonomy). No clock,
// path or host goes in, so a bench run in shards and merged reports exactly as one run whole.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "bench/metrics.h"

namespace ptxforge::bench {

enum class ReportFormat { markdown, json, html };
std::optional<ReportFormat> parse_report_format(std::string_view s);

std::string render_markdown(const BenchMetrics& m);
std::string render_json(const BenchMetrics& m);
std::string render_html(const BenchMetrics& m);
std::string render(const BenchMetrics& m, ReportFormat f);

}  // namespace ptxforge::bench
