// ptxas as a bounded child (ptxas.h). PTX cannot make ptxas open a file, so without a sandbox
// it still runs (Trust::trusted), with the clean environment and the limits.
#include <chrono>

#include <fmt/format.h>

#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/sandbox.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {

ResourceLimits default_ptxas_limits() {
  ResourceLimits l;
  // The suite's largest kernels need under 100 MB; a module with a 1 GiB .align needs over
  // 4 GB and a minute before it writes a byte, so the memory limit is what stops it first.
  l.address_space_bytes = uint64_t{2} << 30;
  l.file_size_bytes = uint64_t{256} << 20;
  l.processes = 4096;
  return l;
}

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
  ProcessOptions po;
  po.limits = opts.limits;
  if (!po.limits.cpu_seconds) po.limits.cpu_seconds = static_cast<uint64_t>(opts.timeout.count() / 1000) + 10;
  po.max_output = size_t{64} << 20;  // -v prints a few lines per function
  SandboxSpec spec;
  spec.work_dir = dir->path();
  auto proc = run_sandboxed(argv, opts.timeout, po, spec, Trust::trusted);
  if (!proc) return proc.error();
  AssembleResult r;
  r.backend = "ptxas";
  r.log = proc->err + proc->out;
  for (size_t at = r.log.find(in); at != std::string::npos; at = r.log.find(in, at + opts.source_name.size()))
    r.log.replace(at, in.size(), opts.source_name);
  if (proc->timed_out)
    return Error{fmt::format("ptxas did not finish within {} s", opts.timeout.count() / 1000.0)};
  if (std::string hit = limit_hit(*proc, po.limits, opts.timeout); !hit.empty()) {
    // The module's fault, not the environment's: an assemble error like any other.
    auto& d = r.diags.error({}, fmt::format("ptxas was stopped by {}: the module would assemble to more than ptxas may "
                                            "produce or use", hit), "ptxas-limit");
    d.hint = "a huge .align, array or initializer in .global/.const/.shared makes the cubin this large";
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  if (proc->output_capped) {
    r.diags.error({}, "ptxas printed more than 64 MiB of messages; stopped", "ptxas-limit");
    return r;
  }
  parse_ptxas_output(r.log, ptx, r);
  r.ok = proc->exit_code == 0 && !r.diags.has_errors();
  if (proc->exit_code != 0 && !r.diags.has_errors()) {
    auto& d = r.diags.error({}, fmt::format("ptxas failed with exit code {}{}", proc->exit_code,
                                            proc->signal ? fmt::format(" (signal {})", proc->signal) : ""), "ptxas");
    d.hint = r.log.empty() ? "" : "its output: " + std::string(trim(r.log)).substr(0, 400);
    // ptxas that fails an allocation under RLIMIT_AS exits without a word.
    if (trim(r.log).empty() && po.limits.address_space_bytes) {
      d.message += fmt::format(" and no message, under its {} memory limit: the module most likely needs more memory than that "
                               "to assemble",
                               format_bytes(po.limits.address_space_bytes));
      d.check_id = "ptxas-limit";
      d.hint = "a huge .align, array or initializer in .global/.const/.shared makes the cubin this large";
    }
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
