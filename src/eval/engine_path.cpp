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

// FIPS 180-4, one block at a time.
struct Sha256 {
  std::array<uint32_t, 8> h{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void block(const uint8_t* p) {
    static constexpr uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
        0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
        0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
        0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
        0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
        0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t{p[4 * i]} << 24 | uint32_t{p[4 * i + 1]} << 16 | uint32_t{p[4 * i + 2]} << 8 | uint32_t{p[4 * i + 3]};
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto v = h;
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = v[7] + (rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[i] + w[i];
      uint32_t t2 = (rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
      for (int j = 7; j > 0; --j) v[j] = v[j - 1];
      v[4] += t1;
      v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; ++i) h[i] += v[i];
  }
};

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

std::string sha256_hex(std::string_view data) {
  Sha256 s;
  std::string tail(data.substr(data.size() - data.size() % 64));
  for (size_t i = 0; i + 64 <= data.size(); i += 64) s.block(reinterpret_cast<const uint8_t*>(data.data() + i));
  uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  tail.push_back(static_cast<char>(0x80));
  while (tail.size() % 64 != 56) tail.push_back('\0');
  for (int i = 7; i >= 0; --i) tail.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  for (size_t i = 0; i < tail.size(); i += 64) s.block(reinterpret_cast<const uint8_t*>(tail.data() + i));
  std::string hex;
  for (uint32_t w : s.h) hex += fmt::format("{:08x}", w);
  return hex;
}

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
