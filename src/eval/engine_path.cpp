// The CPU engine's size sets, the reference as PTX (nvcc, else the committed reference.ptx
// whose hash pins its reference.cu, else NVRTC) and the texts of wrong elements. SHA-256 is
// here because the committed file's first line names the source by it (sha256sum's digest,
// so scripts/refresh-reference-ptx needs no ptxforge).
#include "eval/engine_path.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/sha256.h"
#include "eval/sanitize.h"
#include "eval/stages.h"
#include "toolchain/nvcc.h"
#include "toolchain/nvrtc.h"
#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::eval {

std::string_view to_string(Device d) {
  switch (d) {
    case Device::automatic: return "auto";
    case Device::gpu: return "gpu";
    case Device::cpu: return "cpu";
  }
  return "?";
}

std::optional<Device> device_from_string(std::string_view s) {
  for (Device d : {Device::automatic, Device::gpu, Device::cpu})
    if (to_string(d) == s) return d;
  return std::nullopt;
}

std::vector<std::string> cpu_size_sets(const task::Task& t, bool held_back) {
  std::vector<std::string> names;
  if (!t.cpu_sizes.empty()) {
    names = t.cpu_sizes;
  } else {
    for (auto* s : t.size_sets(true))
      if (case_bytes(t, *s) <= kDefaultCpuSetBytes) names.push_back(s->name);
  }
  if (!held_back) {
    std::erase_if(names, [&](const std::string& n) {
      auto sets = t.size_sets(true);
      return std::any_of(sets.begin(), sets.end(), [&](auto* s) { return s->name == n && !s->shown; });
    });
  }
  if (names.empty())
    if (const task::SizeSet* smallest = shown_size_set_by_bytes(t, false)) names.push_back(smallest->name);
  return names;
}

namespace {

std::string nvcc_version_note() {
  auto nvcc = find_cuda_tool("nvcc");
  if (!nvcc) return "nvcc";
  auto run = run_process({*nvcc, "--version"}, std::chrono::seconds(30));
  if (!run) return "nvcc";
  size_t at = run->out.find(", V");
  if (at == std::string::npos) return "nvcc";
  size_t end = run->out.find_first_of(" \n", at + 3);
  return "nvcc " + run->out.substr(at + 3, end == std::string::npos ? std::string::npos : end - at - 3);
}

std::string dims(const std::array<uint32_t, 3>& d) { return fmt::format("({},{},{})", d[0], d[1], d[2]); }

}  // namespace


std::string reference_ptx_hash(std::string_view text) {
  constexpr std::string_view kPrefix = "// reference.cu sha256 ";
  if (!starts_with(text, kPrefix)) return "";
  std::string_view rest = text.substr(kPrefix.size());
  size_t end = rest.find_first_of(", \n");
  std::string_view hex = rest.substr(0, end);
  if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != std::string_view::npos) return "";
  return std::string(hex);
}

Result<ReferencePtx> reference_ptx(const task::Task& t, const std::string& cache_folder) {
  std::string cu = t.dir + "/reference.cu";
  auto source = read_file(cu);
  if (!source) return Error{"the task's reference: " + source.error().message};
  const std::string& arch = t.min_target;
  if (find_cuda_tool("nvcc")) {
    uint64_t key = fnv1a(arch, fnv1a(*source));
    std::string out = fmt::format("{}/ref-{:016x}-{}.ptx", cache_folder, key, arch);
    std::string note = nvcc_version_note();
    std::error_code ec;
    if (std::filesystem::exists(out, ec)) return ReferencePtx{out, note + " (cached)"};
    auto ptx = toolchain::nvcc_ptx(cu, arch);
    if (!ptx) return Error{"the task's reference does not build as PTX: " + ptx.error().message};
    std::filesystem::create_directories(cache_folder, ec);
    std::string tmp = fmt::format("{}.{}.tmp", out, getpid());
    if (auto st = write_file(tmp, *ptx); !st) return st.error();
    std::filesystem::rename(tmp, out, ec);  // atomic: parallel runs never read half a file
    if (ec) return Error{fmt::format("cannot store {}: {}", out, ec.message())};
    return ReferencePtx{out, note};
  }
  // No toolkit: the committed PTX, if it is reference.cu's.
  std::string committed = t.dir + "/reference.ptx";
  if (auto text = read_file(committed)) {
    std::string pinned = reference_ptx_hash(*text);
    if (pinned.empty())
      return Error{fmt::format("{} has no first line '// reference.cu sha256 <hex>, <nvcc version>'; run "
                               "scripts/refresh-reference-ptx where nvcc is installed", committed)};
    if (pinned != sha256_hex(*source))
      return Error{fmt::format("{} is stale: it was made from another reference.cu; run scripts/refresh-reference-ptx "
                               "where nvcc is installed", committed)};
    std::string first(text->substr(0, text->find('\n')));
    size_t comma = first.find(", ");
    return ReferencePtx{committed, "reference.ptx" + (comma == std::string::npos ? "" : " (" + first.substr(comma + 2) + ")")};
  }
  auto nvrtc = toolchain::compile_cuda_to_ptx(*source, cu, arch);
  if (nvrtc) {
    std::string out = fmt::format("{}/ref-nvrtc-{:016x}-{}.ptx", cache_folder, fnv1a(arch, fnv1a(*source)), arch);
    std::error_code ec;
    std::filesystem::create_directories(cache_folder, ec);
    if (auto st = write_file(out, nvrtc->ptx); !st) return st.error();
    return ReferencePtx{out, "NVRTC"};
  }
  return Error{fmt::format("no PTX for the task's reference: nvcc is not installed, {} does not exist, and NVRTC "
                           "could not compile it ({})",
                           committed, nvrtc.error().message)};
}

std::string describe_wrong_element(const gpu::WrongElement& w) {
  std::string at = w.multi_index.empty() ? fmt::format("'{}'[{}]", w.output, w.index)
                                         : fmt::format("'{}'[{}] (element {})", w.output, fmt::join(w.multi_index, ", "), w.index);
  std::string who = "never written";
  if (w.writer)
    who = fmt::format("last written by thread {} of CTA {} at line {}", dims(w.writer->thread.thread), dims(w.writer->thread.cta),
                      w.writer->line);
  else if (!w.never_written)
    who = "its writer not tracked";
  return fmt::format("{}: expected {}, got {}, {}", at, w.expected, w.actual, who);
}

std::string finding_suffix(const gpu::Failure& f) {
  if (!f.finding || f.finding->check.empty()) return "";
  return fmt::format(" [{}]", f.finding->check);
}

}  // namespace ptxforge::eval
