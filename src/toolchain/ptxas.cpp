#include <chrono>

#include <fmt/format.h>

#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {

Result<AssembleResult> assemble(std::string_view ptx, const AssembleOptions& opts) {
  return opts.backend == Backend::nvjitlink ? assemble_with_nvjitlink(ptx, opts) : assemble_with_ptxas(ptx, opts);
}

Result<AssembleResult> assemble_with_ptxas(std::string_view ptx, const AssembleOptions& opts) {
  auto start = std::chrono::steady_clock::now();
  auto tool = find_cuda_tool("ptxas");
  if (!tool)
    return Error{fmt::format("ptxas not found (looked in {}/bin and PATH); install the CUDA toolkit "
                             "(e.g. the cuda-nvcc package) or set PTXFORGE_CUDA_HOME",
                             cuda_home())};
  auto dir = TempDir::create("ptxforge-ptxas");
  if (!dir) return dir.error();
  std::string in = dir->path() + "/k.ptx", out = dir->path() + "/k.cubin";
  if (auto st = write_file(in, ptx); !st) return st.error();
  std::vector<std::string> argv = {*tool, "-v", "-arch=" + opts.arch, fmt::format("-O{}", opts.opt_level), in,
                                   "-o", out};
  argv.insert(argv.end(), opts.extra_args.begin(), opts.extra_args.end());
  auto proc = run_process(argv, opts.timeout, dir->path());
  if (!proc) return proc.error();
  AssembleResult r;
  r.backend = "ptxas";
  r.log = proc->err + proc->out;
  for (size_t at = r.log.find(in); at != std::string::npos; at = r.log.find(in, at + opts.source_name.size()))
    r.log.replace(at, in.size(), opts.source_name);
  if (proc->timed_out)
    return Error{fmt::format("ptxas did not finish within {} s", opts.timeout.count() / 1000.0)};
  parse_ptxas_output(r.log, ptx, r);
  r.ok = proc->exit_code == 0 && !r.diags.has_errors();
  if (proc->exit_code != 0 && !r.diags.has_errors()) {
    auto& d = r.diags.error({}, fmt::format("ptxas failed with exit code {}{}", proc->exit_code,
                                            proc->signal ? fmt::format(" (signal {})", proc->signal) : ""), "ptxas");
    d.hint = r.log.empty() ? "" : "its output: " + std::string(trim(r.log)).substr(0, 400);
  }
  if (r.ok) {
    auto cubin = read_file(out);
    if (!cubin) return cubin.error();
    r.cubin = std::move(*cubin);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace ptxforge::toolchain
