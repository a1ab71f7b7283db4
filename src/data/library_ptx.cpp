#include "data/library_ptx.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::data {

namespace fs = std::filesystem;

std::string ptx_target(std::string_view ptx) {
  for (std::string_view line : split(ptx, '\n')) {
    line = trim(line);
    if (!starts_with(line, ".target")) continue;
    line = trim(line.substr(7));
    size_t end = line.find_first_of(", \t/");
    return std::string(line.substr(0, end));
  }
  return "";
}

namespace {

bool may_hold_device_code(const fs::path& p) {
  std::string name = p.filename().string(), ext = p.extension().string();
  if (ext == ".a" || ext == ".o" || ext == ".cubin" || ext == ".fatbin" || ext == ".so") return true;
  if (name.find(".so.") != std::string::npos) return true;
  std::error_code ec;
  auto perms = fs::status(p, ec).permissions();
  return !ec && ext.empty() && (perms & fs::perms::owner_exec) != fs::perms::none;
}

// "sm_52" -> 52; 0 for what is not sm_NN.
int sm_number(const std::string& target) {
  if (!starts_with(target, "sm_")) return 0;
  int n = 0;
  for (size_t i = 3; i < target.size() && std::isdigit(static_cast<unsigned char>(target[i])); ++i) n = n * 10 + (target[i] - '0');
  return n;
}

}  // namespace

Result<std::vector<std::string>> library_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (auto& path : paths) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) {
      out.push_back(path);
      continue;
    }
    if (!fs::is_directory(path, ec)) return Error{fmt::format("{}: no such file or folder", path)};
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file() && !it->is_symlink() && may_hold_device_code(it->path())) found.push_back(it->path().string());
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

Result<std::vector<Pair>> library_pairs(const std::vector<std::string>& files, std::set<std::string>& seen, LibraryStats& stats) {
  if (files.empty()) return std::vector<Pair>{};
  auto cuobjdump = find_cuda_tool("cuobjdump");
  if (!cuobjdump)
    return Error{fmt::format("cuobjdump is not installed (looked in {}/bin and PATH): it extracts the PTX embedded in "
                             "libraries' fatbins; without it this source gives nothing",
                             cuda_home())};
  std::vector<Pair> out;
  for (auto& file : files) {
    ++stats.files;
    auto tmp = TempDir::create("ptxforge-libptx");
    if (!tmp) return tmp.error();
    std::string abs = fs::absolute(file).string();
    auto proc = run_process({*cuobjdump, "-xptx", "all", abs}, std::chrono::minutes(10), tmp->path());
    if (!proc) return proc.error();
    std::vector<std::string> ptx_files;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(tmp->path(), ec))
      if (e.path().extension() == ".ptx") ptx_files.push_back(e.path().filename().string());
    std::sort(ptx_files.begin(), ptx_files.end());
    if (proc->exit_code != 0 && ptx_files.empty()) {
      std::string why(trim(proc->err.empty() ? proc->out : proc->err));
      if (why.find("does not contain device code") == std::string::npos)
        stats.problems.push_back(fmt::format("{}: {}", file, why.substr(0, 200)));
      continue;
    }
    if (!ptx_files.empty()) ++stats.files_with_ptx;
    std::string lib = fs::path(file).filename().string();
    std::vector<Pair> found;
    for (auto& name : ptx_files) {
      auto text = read_file(tmp->path() + "/" + name);
      if (!text) return text.error();
      Pair p;
      p.hash = normalised_ptx_hash(*text);
      if (!seen.insert(p.hash).second) {
        ++stats.duplicates;
        continue;
      }
      p.source_id = fmt::format("lib:{}/{}", lib, name);
      p.origin = "library:" + lib;
      p.compiler = "cuobjdump";
      std::string target = ptx_target(*text);
      p.arch = sm_number(target) >= 75 ? target : "sm_75";
      p.ptx = std::move(*text);
      found.push_back(std::move(p));
    }
    if (auto st = label_all_with_ptxas(found); !st) return st.error();
    for (auto& p : found) {
      if (!p.assembles) ++stats.not_assembled;
      ++stats.modules;
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace ptxforge::data
