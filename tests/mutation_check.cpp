// Mutation test: one-defect mutants of the corpus (nvcc output for sm_90a), judged by our
// front end and by ptxas. Prints the agreement table; fails if we miss an error ptxas reports
// for a syntax or declaration defect, or report an error on a module ptxas accepts.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "data/mutate.h"
#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

using namespace ptxforge;
namespace fs = std::filesystem;

namespace {

struct Row {
  int mutants = 0, ptxas_errors = 0, our_errors = 0, our_warnings = 0, missed = 0, false_alarms = 0, same_line = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (!find_cuda_tool("ptxas")) {
    std::puts("SKIP: ptxas not installed");
    return 77;
  }
  if (argc < 2 || !fs::is_directory(argv[1])) {
    std::puts("usage: mutation_check <corpus output dir> (run the corpus test first)");
    return 77;
  }
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(argv[1]))
    if (ends_with(e.path().string(), "_sm_90a.ptx")) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::puts("SKIP: no corpus modules found (the corpus test writes them)");
    return 77;
  }
  std::map<std::string, Row> table;
  std::vector<std::string> problems;
  for (auto& f : files) {
    auto text = read_file(f);
    if (!text) continue;
    for (auto& m : data::mutants_of(*text)) {
      Row& row = table[m.kind];
      ++row.mutants;
      auto ours = ptx::check_source(m.text);
      toolchain::AssembleOptions opts;
      auto theirs = toolchain::assemble_with_ptxas(m.text, opts);
      if (!theirs) {
        problems.push_back(theirs.error().message);
        continue;
      }
      bool we_error = ours.diags.has_errors(), they_error = !theirs->ok;
      row.ptxas_errors += they_error;
      row.our_errors += we_error;
      row.our_warnings += ours.diags.warning_count() > 0;
      if (they_error && !we_error) {
        ++row.missed;
        problems.push_back(fmt::format("missed ({}) {} line {}: ptxas says {}", m.kind, f, m.line,
                                       theirs->diags.list().empty() ? "?" : theirs->diags.list()[0].message));
      }
      if (we_error && !they_error) {
        ++row.false_alarms;
        const Diagnostic* first = nullptr;
        for (auto& d : ours.diags.list())
          if (!first && d.severity == Severity::error) first = &d;
        problems.push_back(fmt::format("false alarm ({}) {} line {}: we say {} (line {})", m.kind, f, m.line,
                                       first->message, first->loc.line));
      }
      if (we_error && they_error) {
        uint32_t our_line = 0, their_line = 0;
        for (auto& d : ours.diags.list())
          if (d.severity == Severity::error) { our_line = d.loc.line; break; }
        for (auto& d : theirs->diags.list())
          if (d.severity == Severity::error) { their_line = d.loc.line; break; }
        row.same_line += our_line == their_line;
      }
    }
  }
  fmt::print("{:<28} {:>7} {:>12} {:>10} {:>8} {:>12} {:>14} {:>12}\n", "defect", "mutants", "ptxas errors",
             "our errors", "missed", "false alarms", "same line/both", "our warnings");
  int missed_hard = 0, false_alarms = 0;
  for (auto& [kind, r] : table) {
    int both = std::min(r.ptxas_errors, r.our_errors);
    fmt::print("{:<28} {:>7} {:>12} {:>10} {:>8} {:>12} {:>14} {:>12}\n", kind, r.mutants, r.ptxas_errors,
               r.our_errors, r.missed, r.false_alarms, fmt::format("{}/{}", r.same_line, both), r.our_warnings);
    if (kind != "lower .target" && kind != "wrong type suffix") missed_hard += r.missed;
    false_alarms += r.false_alarms;
  }
  for (auto& p : problems) fmt::print("  {}\n", p);
  fmt::print("mutation: {} missed syntax/declaration errors, {} false alarms\n", missed_hard, false_alarms);
  return missed_hard == 0 && false_alarms == 0 ? 0 : 1;
}
