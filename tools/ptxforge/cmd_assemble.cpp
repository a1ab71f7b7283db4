// ptxforge assemble: PTX to cubin with ptxas or nvJitLink, with ptxas's messages on our
// lines and per-function resource usage.
#include <iostream>

#include <fmt/format.h>

#include "cli_parse.h"
#include "json_out.h"
#include "toolchain/ptxas.h"
#include "util/text.h"

namespace ptxforge::cli {

std::string resources_table(const toolchain::AssembleResult& r) {
  std::string out;
  for (auto& f : r.functions)
    out += fmt::format("  {} {}: {} registers, {} barriers, {} B smem, {} B cmem, {} B stack frame, {} B spill stores, "
                       "{} B spill loads{}\n",
                       f.is_entry ? "entry" : "func", f.name, f.registers, f.barriers, f.shared_bytes, f.const_bytes,
                       f.stack_frame, f.spill_stores, f.spill_loads,
                       f.compile_ms > 0 ? fmt::format(", compiled in {:.1f} ms", f.compile_ms) : "");
  if (!r.info_codes.empty()) out += fmt::format("  info codes: {}\n", fmt::join(r.info_codes, " "));
  return out;
}

int cmd_assemble(const std::vector<std::string>& args) {
  CLI::App app("Assemble PTX with ptxas (subprocess) or nvJitLink (in-process)", "assemble");
  std::string file, arch, backend = "ptxas", output;
  int opt = 3;
  double timeout = 120;
  bool json = false;
  app.add_option("file", file, "PTX file ('-' for stdin)")->required();
  app.add_option("--arch", arch, "target architecture (default: the module's .target, else the GPU's, else sm_90a)")->check(arch_validator());
  app.add_option("-O", opt, "ptxas optimisation level (0-3)")->capture_default_str()->check(CLI::Range(0, 3));
  app.add_option("--backend", backend, "ptxas or nvjitlink")->check(CLI::IsMember({"ptxas", "nvjitlink"}))
      ->capture_default_str();
  app.add_option("-o,--output", output, "write the cubin here");
  app.add_option("--timeout", timeout, "seconds before ptxas is killed")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_flag("--json", json, "print the result as JSON");
  if (int rc = parse_args(app, args); rc >= 0) return rc;

  auto text = read_input(file);
  if (!text) {
    std::cerr << "ptxforge assemble: " << text.error().message << "\n";
    return kExitUsage;
  }
  if (arch.empty()) arch = default_arch(*text);
  SourceText src(file == "-" ? "<stdin>" : file, *text);
  toolchain::AssembleOptions opts;
  opts.arch = arch;
  opts.source_name = src.name();
  opts.opt_level = opt;
  opts.backend = backend == "nvjitlink" ? toolchain::Backend::nvjitlink : toolchain::Backend::ptxas;
  opts.timeout = std::chrono::milliseconds(static_cast<long long>(timeout * 1000));
  auto r = toolchain::assemble(*text, opts);
  if (!r) {
    std::cerr << "ptxforge assemble: " << r.error().message << "\n";
    return kExitUsage;
  }
  if (json) {
    std::cout << assemble_json(*r, arch, src).dump(2) << "\n";
  } else {
    std::cout << render_text(r->diags, src, stdout_is_tty());
    std::cout << fmt::format("{}: {} with {} for {} in {:.0f} ms\n", src.name(), r->ok ? "assembled" : "FAILED",
                             r->backend, arch, r->seconds * 1000);
    std::cout << resources_table(*r);
  }
  if (r->ok && !output.empty()) {
    if (auto st = write_file(output, r->cubin); !st) {
      std::cerr << "ptxforge assemble: " << st.error().message << "\n";
      return kExitUsage;
    }
  }
  return r->ok ? kExitOk : kExitInputErrors;
}

}  // namespace ptxforge::cli
