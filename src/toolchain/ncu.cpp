#include "toolchain/ncu.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {

namespace {

// "1,234" or "1234" -> 1234; anything else (a blank, "n/a") -> nullopt.
std::optional<uint64_t> count_of(std::string_view s) {
  s = trim(s);
  uint64_t v = 0;
  bool any = false;
  for (char c : s) {
    if (c == ',' ) continue;
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
    any = true;
  }
  return any ? std::optional<uint64_t>(v) : std::nullopt;
}

// The opcode of a SASS source cell: "@!P0 HMMA.16816.F32 R4, R8, ..." -> "HMMA.16816.F32".
std::string opcode_of(std::string_view source) {
  source = trim(source);
  if (!source.empty() && source.front() == '@') {
    size_t space = source.find_first_of(" \t");
    source = space == std::string_view::npos ? std::string_view{} : trim(source.substr(space));
  }
  std::string_view op = source.substr(0, source.find_first_of(" \t;"));
  if (op.empty() || !(op[0] >= 'A' && op[0] <= 'Z')) return "";
  return std::string(op);
}

}  // namespace

// One CSV record's fields ("a","b,c","d""e" -> a | b,c | d"e); `line` holds no newline.
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

std::string regex_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}


std::vector<std::string> ncu_profile_argv(const std::string& ncu, const std::string& report,
                                          const std::vector<std::string>& entries, int launches,
                                          const std::vector<std::string>& worker_argv) {
  std::vector<std::string> names;
  for (auto& e : entries) names.push_back(regex_escape(e));
  std::vector<std::string> argv = {ncu,
                                   "--clock-control", "none",
                                   "--section", "SourceCounters",
                                   "--target-processes", "all",
                                   "--kernel-name-base", "mangled",  // the entry names as the PTX spells them
                                   "--kernel-name", fmt::format("regex:^({})$", fmt::join(names, "|")),
                                   "--launch-count", std::to_string(std::max(1, launches)),
                                   // ncu's own messages go to a file: the worker's stdout carries its replies
                                   "--log-file", report + ".log",
                                   "-f", "-o", report};
  argv.insert(argv.end(), worker_argv.begin(), worker_argv.end());
  return argv;
}

Result<SourceCounters> parse_source_counters_csv(std::string_view csv) {
  SourceCounters out;
  int source = -1, executed = -1, pred_on = -1;
  size_t rows = 0;
  for (std::string_view line : split(csv, '\n')) {
    if (trim(line).empty()) continue;
    auto f = csv_fields(line);
    // A header (one per kernel in the page): find the columns by name.
    bool header = std::find(f.begin(), f.end(), "Source") != f.end();
    if (header) source = executed = pred_on = -1;  // each kernel's header places its own columns
    for (size_t i = 0; header && i < f.size(); ++i) {
      if (f[i] == "Source") source = static_cast<int>(i);
      else if (f[i] == "Instructions Executed") executed = static_cast<int>(i);
      else if (f[i] == "Predicated-On Thread Instructions Executed") pred_on = static_cast<int>(i);
    }
    if (header || source < 0 || executed < 0 || pred_on < 0) continue;
    if (static_cast<int>(f.size()) <= std::max({source, executed, pred_on})) continue;
    std::string op = opcode_of(f[source]);
    auto e = count_of(f[executed]), p = count_of(f[pred_on]);
    if (op.empty() || !e || !p) continue;
    OpcodeCounts& c = out[op];
    c.warp_executions += *e;
    c.predicated_on += *p;
    ++rows;
  }
  if (rows == 0) {
    std::string first(csv.substr(0, std::min<size_t>(csv.find('\n'), 200)));
    return Error{fmt::format("ncu's source page has no SASS rows with 'Source', 'Instructions Executed' and "
                             "'Predicated-On Thread Instructions Executed' (it begins: {})",
                             first.empty() ? "nothing" : first)};
  }
  return out;
}

Result<SourceCounters> read_source_counters(const std::string& ncu, const std::string& report_file) {
  auto proc = run_process({ncu, "-i", report_file, "--page", "source", "--csv", "--print-source", "sass"},
                          std::chrono::seconds(300));
  if (!proc) return proc.error();
  if (proc->exit_code != 0)
    return Error{fmt::format("ncu could not read {} (exit {}): {}", report_file, proc->exit_code,
                             trim(proc->err.empty() ? proc->out : proc->err).substr(0, 400))};
  return parse_source_counters_csv(proc->out);
}

OpcodeCounts counts_for(const SourceCounters& c, std::string_view prefix) {
  OpcodeCounts sum;
  for (auto it = c.lower_bound(prefix); it != c.end() && starts_with(it->first, prefix); ++it)
    if (starts_with_dotted(it->first, prefix)) {
      sum.warp_executions += it->second.warp_executions;
      sum.predicated_on += it->second.predicated_on;
    }
  return sum;
}

}  // namespace ptxforge::toolchain
