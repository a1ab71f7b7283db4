#include "util/paths.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

namespace ptxforge {

namespace fs = std::filesystem;

std::string executable_path() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::optional<std::string> find_companion_program(const std::string& name) {
  std::vector<fs::path> dirs;
  if (auto exe = executable_path(); !exe.empty()) dirs.push_back(fs::path(exe).parent_path());
#ifdef PTXFORGE_COMPANION_DIR
  dirs.push_back(PTXFORGE_COMPANION_DIR);
#endif
  for (auto& d : dirs)
    if (access((d / name).c_str(), X_OK) == 0) return (d / name).string();
  return std::nullopt;
}

std::optional<std::string> data_dir() {
  if (const char* env = std::getenv("PTXFORGE_DATA_DIR"); env && *env) return std::string(env);
  fs::path exe = executable_path();
  if (exe.empty()) return std::nullopt;
  std::error_code ec;
  // Installed: <prefix>/bin/ptxforge next to <prefix>/share/ptxforge.
  fs::path installed = exe.parent_path().parent_path() / PTXFORGE_DATA_SUBDIR;
  if (fs::is_directory(installed, ec)) return installed.string();
  // In a build tree: walk up to the source tree that holds examples/, or, for a build
  // directory outside the sources, the source tree this binary was configured from.
  for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
    if (fs::is_directory(dir / "examples", ec) && fs::exists(dir / "CMakeLists.txt", ec)) return dir.string();
  if (fs::is_directory(fs::path(PTXFORGE_SOURCE_DIR) / "examples", ec)) return std::string(PTXFORGE_SOURCE_DIR);
  return std::nullopt;
}

std::string cuda_home() {
  for (const char* var : {"PTXFORGE_CUDA_HOME", "CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return PTXFORGE_DEFAULT_CUDA_HOME;
}

std::optional<std::string> find_cuda_tool(const std::string& name) {
  fs::path p = fs::path(cuda_home()) / "bin" / name;
  if (access(p.c_str(), X_OK) == 0) return p.string();
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    fs::path q = fs::path(dir) / name;
    if (access(q.c_str(), X_OK) == 0) return q.string();
  }
  return std::nullopt;
}

std::string cache_dir() {
  auto env = [](const char* n) -> std::string {
    const char* v = getenv(n);
    return v && *v ? v : "";
  };
  std::string dir = env("PTXFORGE_CACHE_DIR");
  if (dir.empty() && !env("XDG_CACHE_HOME").empty()) dir = env("XDG_CACHE_HOME") + "/ptxforge";
  if (dir.empty() && !env("HOME").empty()) dir = env("HOME") + "/.cache/ptxforge";
  if (dir.empty()) dir = (env("TMPDIR").empty() ? std::string("/tmp") : env("TMPDIR")) + "/ptxforge-cache";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return dir;
}

void* open_cuda_library(const std::string& soname) {
  void* h = dlopen((cuda_home() + "/lib64/" + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
  return h ? h : dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
}

}  // namespace ptxforge
