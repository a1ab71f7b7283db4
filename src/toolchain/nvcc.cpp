// nvcc as a bounded child: on a copy of the source in a private folder, in the bubblewrap
// sandbox where there is one (with the host compiler it drives visible), a clean environment,
// limits on memory, file size and time, and its log filtered to the source's own lines.
#include "toolchain/nvcc.h"

#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>

#include "toolchain/compiler_log.h"
#include "util/paths.h"
#include "util/sandbox.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {

namespace {

struct NvccRun {
  ProcessResult proc;
  std::string log;     // filtered, naming the caller's path
  std::string output;  // the output file's bytes, when nvcc succeeded
  std::string stopped; // the limit that stopped it, or ""
};

// nvcc `flags` on a private copy of `cu_path` (kept under its own file name, so messages
// read naturally), writing `out_name` in the same folder.
Result<NvccRun> run_nvcc(const std::string& cu_path, const std::vector<std::string>& flags, const std::string& out_name,
                         std::chrono::milliseconds timeout) {
  auto nvcc = find_cuda_tool("nvcc");
  if (!nvcc) return Error{fmt::format("nvcc not found (looked in {}/bin and PATH); it builds the reference kernels", cuda_home())};
  auto source = read_file(cu_path);
  if (!source) return source.error();
  auto dir = TempDir::create("ptxforge-nvcc");
  if (!dir) return dir.error();
  std::string base = std::filesystem::path(cu_path).filename().string();
  if (base.empty() || base[0] == '-') base = "source.cu";
  std::string copy = dir->path() + "/" + base, out = dir->path() + "/" + out_name;
  if (auto st = write_file(copy, *source); !st) return st.error();
  std::vector<std::string> argv = {*nvcc};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", out, copy});
  ProcessOptions po;
  po.limits = default_nvcc_limits();
  po.limits.cpu_seconds = static_cast<uint64_t>(timeout.count() / 1000) + 10;
  po.max_output = size_t{64} << 20;
  SandboxSpec spec;
  spec.work_dir = dir->path();
  spec.host_compiler = true;
  auto proc = run_sandboxed(argv, timeout, po, spec, Trust::trusted);
  if (!proc) return proc.error();
  NvccRun r;
  r.proc = std::move(*proc);
  r.stopped = limit_hit(r.proc, po.limits, timeout);
  LogFilter filter;
  filter.candidate_name = copy;
  filter.display_name = cu_path;
  filter.candidate_source = *source;
  r.log = filter_compiler_log(r.proc.err + r.proc.out, filter);
  if (r.proc.exit_code == 0 && r.stopped.empty()) {
    auto bytes = read_file(out);
    if (!bytes) return bytes.error();
    r.output = std::move(*bytes);
  }
  return r;
}

}  // namespace

ResourceLimits default_nvcc_limits() {
  ResourceLimits l;
  l.address_space_bytes = uint64_t{16} << 30;
  l.file_size_bytes = uint64_t{256} << 20;
  l.processes = 4096;
  return l;
}

Result<ReferenceBuild> build_reference(const std::string& cu_path, const std::string& arch, std::chrono::milliseconds timeout) {
  auto source = read_file(cu_path);
  if (!source) return source.error();
  uint64_t key = fnv1a(arch, fnv1a(*source));
  std::string out = fmt::format("{}/ref-{:016x}-{}.cubin", cache_dir(), key, arch);
  ReferenceBuild b;
  b.cubin_path = out;
  std::error_code ec;
  if (std::filesystem::exists(out, ec)) {
    b.cached = true;
    return b;
  }
  auto run = run_nvcc(cu_path, {"-cubin", "-O3", "-arch=" + arch}, "reference.cubin", timeout);
  if (!run) return run.error();
  b.seconds = run->proc.seconds;
  if (!run->stopped.empty()) return Error{fmt::format("nvcc was stopped by {} building {}", run->stopped, cu_path)};
  if (run->proc.exit_code != 0)
    return Error{fmt::format("nvcc could not build the reference {}:\n{}", cu_path, run->log)};
  std::string tmp = fmt::format("{}.{}.tmp", out, getpid());
  if (auto st = write_file(tmp, run->output); !st) return st.error();
  std::filesystem::rename(tmp, out, ec);  // atomic: parallel runs never see half a cubin
  if (ec) return Error{fmt::format("cannot store {}: {}", out, ec.message())};
  return b;
}

Result<std::string> nvcc_ptx(const std::string& cu_path, const std::string& arch, std::chrono::milliseconds timeout) {
  auto run = run_nvcc(cu_path, {"-ptx", "-O3", "-arch=" + arch}, "ref.ptx", timeout);
  if (!run) return run.error();
  if (!run->stopped.empty()) return Error{fmt::format("nvcc was stopped by {} compiling {}", run->stopped, cu_path)};
  if (run->proc.exit_code != 0) return Error{fmt::format("nvcc could not compile {}:\n{}", cu_path, run->log)};
  std::string kept;
  for (auto line : split(run->output, '\n'))
    if (!starts_with(trim(line), "//")) kept += std::string(line) + "\n";
  return kept;
}

}  // namespace ptxforge::toolchain
