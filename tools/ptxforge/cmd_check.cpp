// ptxforge check: our front end's verdict (microseconds, no ptxas); with --ptxas the
// assembler's verdict beside it.
#include <chrono>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "cli_parse.h"
#include "json_out.h"
#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/heap.h"

namespace ptxforge::cli {

namespace {

std::string verdict(const Diagnostics& d) {
  if (d.error_count() == 0 && d.warning_count() == 0) return "ok";
  return fmt::format("{} error{}, {} warning{}", d.error_count(), d.error_count() == 1 ? "" : "s", d.warning_count(),
                     d.warning_count() == 1 ? "" : "s");
}

}  // namespace

int cmd_check(const std::vector<std::string>& args) {
  CLI::App app("Parse and validate PTX with ptxforge's front end", "check");
  std::vector<std::string> files;
  std::string format = "text", arch, color = "auto";
  bool with_ptxas = false, no_warnings = false, werror = false;
  app.add_option("files", files, "PTX files ('-' for stdin)")->required();
  app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  app.add_flag("--ptxas", with_ptxas, "also assemble with ptxas and show both verdicts");
  app.add_option("--arch", arch, "architecture for --ptxas (default: the module's .target, else the GPU's, else sm_90a)")->check(arch_validator());
  app.add_flag("--no-warnings", no_warnings, "report errors only");
  app.add_flag("--Werror", werror, "treat warnings as errors for the exit code");
  app.add_option("--color", color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
  if (int rc = parse_args(app, args); rc >= 0) return rc;

  keep_freed_memory();
  bool use_color = color == "always" || (color == "auto" && stdout_is_tty());
  int exit_code = kExitOk;
  bool ptxas_missing = false;
  nlohmann::json all = nlohmann::json::array();
  for (auto& file : files) {
    std::string name = file == "-" ? "<stdin>" : file;
    auto text = read_input(file);
    if (!text) {
      std::cerr << "ptxforge check: " << text.error().message << "\n";
      exit_code = kExitUsage;
      if (format == "json") all.push_back(unreadable_json(name, text.error().message));
      continue;
    }
    // The line index is built only when a finding is printed: most modules have none.
    std::optional<SourceText> source;
    auto src = [&]() -> const SourceText& {
      if (!source) source.emplace(name, *text);
      return *source;
    };
    auto t0 = std::chrono::steady_clock::now();
    ptx::ValidateOptions vopts;
    vopts.warnings = !no_warnings;
    ptx::CheckResult ours = ptx::check_borrowed_source(*text, vopts);  // *text outlives it
    double our_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    bool failed = ours.diags.has_errors() || (werror && ours.diags.warning_count() > 0);

    std::optional<toolchain::AssembleResult> theirs;
    // Only ptxas needs an architecture; the module is parsed already.
    std::string arch_used = !with_ptxas || !arch.empty() ? arch : default_arch(ours.module);
    if (with_ptxas && !ptxas_missing) {
      toolchain::AssembleOptions opts;
      opts.arch = arch_used;
      opts.source_name = name;
      if (ours.module.targets_debug()) opts.opt_level = 0;  // as nvcc -G does
      auto r = toolchain::assemble(*text, opts);
      if (!r) {
        std::cerr << "ptxforge check: " << r.error().message << "\n";
        exit_code = kExitUsage;
        ptxas_missing = true;  // the same for every file: said once
      } else {
        theirs = std::move(*r);
        failed = failed || !theirs->ok;
      }
    }
    if (failed) exit_code = std::max(exit_code, kExitInputErrors);

    if (format == "json") {
      nlohmann::json j = diagnostics_json(ours.diags, src());
      j["readable"] = true;
      j["milliseconds"] = our_ms;
      if (theirs) j["ptxas"] = assemble_json(*theirs, arch_used, src());
      all.push_back(std::move(j));
      continue;
    }
    std::cout << (ours.diags.empty() ? std::string() : render_text(ours.diags, src(), use_color));
    if (!theirs) {
      if (ours.diags.empty()) std::cout << fmt::format("{}: ok ({:.2f} ms)\n", name, our_ms);
      continue;
    }
    if (!theirs->diags.empty()) {
      std::cout << "--- ptxas says:\n" << render_text(theirs->diags, src(), use_color);
    }
    std::cout << fmt::format("{}: ptxforge: {} ({:.2f} ms) | ptxas {}: {} ({:.0f} ms)\n", name,
                             verdict(ours.diags), our_ms, arch_used,
                             theirs->ok ? (theirs->diags.empty() ? "ok" : verdict(theirs->diags))
                                        : "FAILED, " + verdict(theirs->diags),
                             theirs->seconds * 1000);
    if (theirs->ok) std::cout << resources_table(*theirs);
  }
  // One shape whatever the number of files: an array of file records (docs/json.md).
  if (format == "json") std::cout << all.dump(2) << "\n";
  return exit_code;
}

}  // namespace ptxforge::cli
