#include "toolchain/nvcc.h"

#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>

#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {

Result<ReferenceBuild> build_reference(const std::string& cu_path, const std::string& arch, std::chrono::milliseconds timeout) {
  auto source = read_file(cu_path);
  if (!source) return source.error();
  auto nvcc = find_cuda_tool("nvcc");
  if (!nvcc) return Error{fmt::format("nvcc not found (looked in {}/bin and PATH); it builds the reference kernels", cuda_home())};
  uint64_t key = fnv1a(arch, fnv1a(*source));
  std::string out = fmt::format("{}/ref-{:016x}-{}.cubin", cache_dir(), key, arch);
  ReferenceBuild b;
  b.cubin_path = out;
  std::error_code ec;
  if (std::filesystem::exists(out, ec)) {
    b.cached = true;
    return b;
  }
  std::string tmp = fmt::format("{}.{}.tmp", out, getpid());
  auto proc = run_process({*nvcc, "-cubin", "-O3", "-arch=" + arch, "-o", tmp, cu_path}, timeout);
  if (!proc) return proc.error();
  b.seconds = proc->seconds;
  if (proc->timed_out) return Error{fmt::format("nvcc took longer than {} s on {}", timeout.count() / 1000, cu_path)};
  if (proc->exit_code != 0) {
    std::filesystem::remove(tmp, ec);
    return Error{fmt::format("nvcc could not build the reference {}:\n{}{}", cu_path, proc->err, proc->out)};
  }
  std::filesystem::rename(tmp, out, ec);  // atomic: parallel runs never see half a cubin
  if (ec) return Error{fmt::format("cannot store {}: {}", out, ec.message())};
  return b;
}

Result<std::string> nvcc_ptx(const std::string& cu_path, const std::string& arch, std::chrono::milliseconds timeout) {
  auto nvcc = find_cuda_tool("nvcc");
  if (!nvcc) return Error{fmt::format("nvcc not found (looked in {}/bin and PATH)", cuda_home())};
  auto dir = TempDir::create("ptxforge-nvcc");
  if (!dir) return dir.error();
  std::string out = dir->path() + "/ref.ptx";
  auto proc = run_process({*nvcc, "-ptx", "-O3", "-arch=" + arch, "-o", out, cu_path}, timeout);
  if (!proc) return proc.error();
  if (proc->exit_code != 0) return Error{fmt::format("nvcc could not compile {}:\n{}", cu_path, proc->err)};
  auto text = read_file(out);
  if (!text) return text.error();
  std::string kept;
  for (auto line : split(*text, '\n'))
    if (!starts_with(trim(line), "//")) kept += std::string(line) + "\n";
  return kept;
}

}  // namespace ptxforge::toolchain
