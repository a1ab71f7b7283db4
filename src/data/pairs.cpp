#include "data/pairs.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ptx/parser.h"
#include "toolchain/nvrtc.h"
#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::data {

namespace fs = std::filesystem;
using nlohmann::json;

std::string normalised_ptx_hash(std::string_view ptx) {
  uint64_t h = 1469598103934665603ull;
  auto feed = [&](char c) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  };
  for (std::string_view line : split(ptx, '\n')) {
    line = trim(line);
    if (line.empty() || starts_with(line, "//")) continue;
    bool blank = false;
    for (char c : line) {
      bool is_blank = c == ' ' || c == '\t' || c == '\r';
      if (is_blank && blank) continue;
      feed(is_blank ? ' ' : c);
      blank = is_blank;
    }
    feed('\n');
  }
  return fmt::format("{:016x}", h);
}

Result<std::vector<SourceUnit>> read_source_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{fmt::format("{} is not a folder", dir)};
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".cu") files.push_back(it->path().string());
  std::sort(files.begin(), files.end());
  std::vector<SourceUnit> out;
  for (auto& f : files) {
    auto text = read_file(f);
    if (!text) return Error{fmt::format("cannot read {}: {}", f, text.error().message)};
    out.push_back({fs::relative(f, dir).string(), "folder:" + fs::path(dir).filename().string(), "", *text});
  }
  return out;
}

namespace {

std::vector<KernelSignature> signatures(const std::string& ptx) {
  Diagnostics ignored;
  ptx::Module m = ptx::parse(ptx, ignored);
  std::vector<KernelSignature> out;
  for (auto& item : m.items) {
    auto* f = std::get_if<ptx::Function>(&item.node);
    if (!f || !f->is_entry) continue;
    KernelSignature k;
    k.name = std::string(f->name);
    for (auto& p : f->params) {
      std::string type = p.align ? fmt::format(".align {} {}", p.align, std::string_view(p.type)) : std::string(p.type);
      for (auto& d : p.names) {
        std::string dims;
        for (auto& dim : d.dims) dims += dim ? fmt::format("[{}]", *dim) : "[]";
        k.params.push_back(type + dims);
      }
    }
    out.push_back(std::move(k));
  }
  return out;
}

// nvcc's error lines, one line, for the stats.
std::string first_error(const std::string& log) {
  for (std::string_view l : split(log, '\n'))
    if (l.find("error") != std::string_view::npos) return std::string(trim(l)).substr(0, 300);
  return std::string(trim(log)).substr(0, 300);
}

// nvcc names internal-linkage symbols _INTERNAL_<8 hex digits>_..., the digits different on
// every run; the same digits for a source (a hash of its id) make the pairs reproducible.
std::string stable_internal_names(std::string ptx, const std::string& source_id) {
  std::string digits = normalised_ptx_hash(source_id).substr(0, 8);
  const std::string tag = "_INTERNAL_";
  for (size_t at = ptx.find(tag); at != std::string::npos; at = ptx.find(tag, at + tag.size())) {
    size_t d = at + tag.size();
    bool hex = d + 9 <= ptx.size() && ptx[d + 8] == '_' &&
               std::all_of(ptx.begin() + d, ptx.begin() + d + 8, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
    if (hex) ptx.replace(d, 8, digits);
  }
  return ptx;
}

// NVRTC's options for an nvcc flag set made only of flags it takes the same way; nothing for
// one it does not (that set goes to nvcc).
std::optional<std::vector<std::string>> nvrtc_options(std::string_view flags) {
  std::vector<std::string> out;
  for (auto f : split(flags, ' ')) {
    f = trim(f);
    if (f.empty() || f == "-O3") continue;  // -O3 is host code's level: NVVM optimises device code by default in both
    if (f == "-G" || f == "-lineinfo") {
      out.emplace_back(f);
      continue;
    }
    return std::nullopt;
  }
  return out;
}

}  // namespace

Status label_with_ptxas(Pair& p, int opt_level) {
  p.kernels = signatures(p.ptx);
  toolchain::AssembleOptions ao;
  ao.arch = p.arch;
  ao.source_name = "unit.ptx";
  ao.opt_level = opt_level;
  auto as = toolchain::assemble_with_ptxas(p.ptx, ao);
  if (!as) return as.error();
  p.assembles = as->ok;
  p.resources = as->functions;
  if (!as->ok) p.ptxas_error = as->diags.list().empty() ? as->log.substr(0, 300) : as->diags.list()[0].message;
  return ok_status();
}

Status label_all_with_ptxas(std::vector<Pair>& pairs, int opt_level) {
  std::atomic<size_t> next{0};
  std::mutex m;
  std::optional<Error> first;
  auto work = [&] {
    for (size_t i = next++; i < pairs.size(); i = next++) {
      if (auto st = label_with_ptxas(pairs[i], opt_level); !st) {
        std::lock_guard<std::mutex> lock(m);
        if (!first) first = st.error();
      }
    }
  };
  size_t n = std::min<size_t>(pairs.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (first) return *first;
  return ok_status();
}

Result<std::vector<Pair>> make_pairs(const std::vector<SourceUnit>& units, const PairOptions& o, PairStats& stats) {
  auto nvcc = find_cuda_tool("nvcc");
  bool nvrtc = o.compiler != Compiler::nvcc && toolchain::nvrtc_available().ok();
  if (o.compiler == Compiler::nvrtc && !nvrtc) return toolchain::nvrtc_available().error();
  if (!nvcc && (o.compiler == Compiler::nvcc || !nvrtc))
    return Error{"nvcc is not installed (looked in the CUDA toolkit and PATH) and NVRTC does not load: source/PTX pairs need one"};
  auto tmp = TempDir::create("ptxforge-pairs");
  if (!tmp) return tmp.error();
  std::set<std::string> seen;
  std::vector<Pair> out;
  for (auto& u : units) {
    // -G and -lineinfo PTX embed the source's path and the compile directory: for nvcc both
    // are fixed by the source's text ($TMPDIR/ptxforge-nvcc/<hash>/unit.cu), so a run is
    // reproduced byte for byte on the same machine; NVRTC names the program unit.cu. The
    // output goes to this run's own folder.
    const char* tmpdir = std::getenv("TMPDIR");
    std::string src_dir = fmt::format("{}/ptxforge-nvcc/{}", tmpdir && *tmpdir ? tmpdir : "/tmp", normalised_ptx_hash(u.text));
    std::string cu = src_dir + "/unit.cu", ptx_path = tmp->path() + "/unit.ptx";
    bool written = false;
    for (auto& arch : o.archs)
      for (auto& flags : o.flags) {
        std::optional<std::string> text;
        std::string compiler, problem;
        auto options = nvrtc ? nvrtc_options(flags) : std::nullopt;
        if (options) {
          auto r = toolchain::compile_cuda_to_ptx(u.text, "unit.cu", arch, *options);
          if (r) {
            text = std::move(r->ptx);
            compiler = "nvrtc";
          } else {
            problem = first_error(r.error().message);
          }
        }
        if (!text && o.compiler != Compiler::nvrtc && nvcc) {
          if (!written) {
            std::error_code ec;
            fs::create_directories(src_dir, ec);
            auto held = read_file(cu);
            if (!held || *held != u.text)
              if (auto st = write_file(cu, u.text); !st) return st.error();
            written = true;
          }
          std::vector<std::string> argv = {*nvcc, "-ptx", "-arch=" + arch, "-o", ptx_path, cu};
          for (auto& f : split(flags, ' '))
            if (!trim(f).empty()) argv.insert(argv.begin() + 1, std::string(trim(f)));
          auto proc = run_process(argv, std::chrono::minutes(3), src_dir);
          if (!proc) return proc.error();
          if (proc->exit_code == 0) {
            auto ptx = read_file(ptx_path);
            if (!ptx) return ptx.error();
            text = std::move(*ptx);
            compiler = "nvcc";
          } else {
            problem = first_error(proc->err + proc->out);
          }
        }
        if (!text) {
          ++stats.nvcc_failed;
          stats.problems.push_back(fmt::format("{} ({}, {}): {}", u.id, arch, flags,
                                               problem.empty() ? "NVRTC does not take these flags" : problem));
          continue;
        }
        ++(compiler == "nvrtc" ? stats.by_nvrtc : stats.by_nvcc);
        Pair p;
        *text = stable_internal_names(std::move(*text), u.id);
        p.hash = normalised_ptx_hash(*text);
        if (!seen.insert(p.hash).second) {
          ++stats.duplicates;
          continue;
        }
        p.source_id = u.id;
        p.origin = u.origin;
        p.family = u.family;
        p.arch = arch;
        p.flags = flags;
        p.compiler = compiler;
        p.cuda = u.text;
        p.ptx = std::move(*text);
        // ptxas assembles -G modules only at -O0.
        if (auto st = label_with_ptxas(p, flags.find("-G") != std::string::npos ? 0 : 3); !st) return st.error();
        if (!p.assembles) ++stats.not_assembled;
        ++stats.compiled;
        out.push_back(std::move(p));
      }
  }
  return out;
}

std::string pair_json(const Pair& p) {
  json kernels = json::array(), resources = json::array();
  for (auto& k : p.kernels) kernels.push_back({{"name", k.name}, {"params", k.params}});
  for (auto& f : p.resources)
    resources.push_back({{"name", f.name}, {"entry", f.is_entry}, {"registers", f.registers}, {"shared_bytes", f.shared_bytes},
                         {"local_bytes", f.local_bytes}, {"spill_stores", f.spill_stores}, {"spill_loads", f.spill_loads}});
  nlohmann::ordered_json j = {{"kind", "pair"}, {"source_id", p.source_id}, {"origin", p.origin}, {"family", p.family},
                              {"arch", p.arch}, {"flags", p.flags}, {"compiler", p.compiler}, {"hash", p.hash}, {"assembles", p.assembles}};
  if (!p.ptxas_error.empty()) j["ptxas_error"] = p.ptxas_error;
  j["kernels"] = kernels;
  j["resources"] = resources;
  j["cuda"] = p.cuda;
  j["ptx"] = p.ptx;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace ptxforge::data
