// NVRTC in its sandboxed child (nvrtc.h): the parent's side. It checks the includes, starts
// ptxforge-nvrtc (tools/ptxforge/nvrtc_child.cpp) through util/sandbox.h with the source on
// stdin, and turns the child's exit into a compile result or an error that says which limit
// stopped it. A candidate NVRTC fails on for a header it cannot open goes to nvcc, run the
// same way (the policy, the limits, the sandbox) with the host compiler's headers visible.
#include "toolchain/nvrtc.h"

#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "toolchain/compiler_log.h"
#include "toolchain/cuda_includes.h"
#include "util/diagnostic.h"
#include "util/paths.h"
#include "util/sandbox.h"
#include "util/text.h"

namespace ptxforge::toolchain {

namespace {

// ptxforge-nvrtc's exit codes (nvrtc_child.cpp).
constexpr int kCompileError = 1, kNoLibrary = 3, kOutOfMemory = 4;

struct Child {
  std::string program;
  std::vector<std::string> argv_head;  // the program and its --library options
};

Result<Child> find_child() {
  auto program = find_companion_program("ptxforge-nvrtc");
  if (!program)
    return Error{"ptxforge-nvrtc, the process NVRTC compiles .cu candidates in, is not installed beside ptxforge"};
  std::error_code ec;
  Child c;
  c.program = std::filesystem::canonical(*program, ec).string();
  if (ec) c.program = *program;
  c.argv_head = {c.program};
  // The toolkit's copy first, then whatever the loader finds (a distribution's package).
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so"}) {
    c.argv_head.insert(c.argv_head.end(), {"--library", cuda_home() + "/lib64/" + soname});
    c.argv_head.insert(c.argv_head.end(), {"--library", soname});
  }
  return c;
}

SandboxSpec child_spec(const Child& c) {
  SandboxSpec spec;
  spec.read_only = {c.program};
  return spec;
}

ProcessOptions child_options(const NvrtcLimits& limits, const std::string& input) {
  ProcessOptions o;
  o.input = input;
  o.limits = limits.process;
  o.max_output = limits.max_ptx_bytes;
  return o;
}

// bwrap's own failures (a bind it could not make, no namespaces) are lines starting "bwrap:".
bool sandbox_failed(const ProcessResult& r) { return r.exit_code == 1 && starts_with(r.err, "bwrap: "); }

std::string first_line(std::string_view s) {
  s = trim(s);
  return std::string(s.substr(0, s.find('\n')));
}

// The include policy's refusal of `source`, if any.
std::optional<Error> policy_refusal(const std::string& source, const std::string& name, const std::vector<std::string>& dirs) {
  Diagnostics d = check_cuda_includes(source, dirs);
  if (!d.has_errors()) return std::nullopt;
  return Error{fmt::format("{} was not compiled: its #include lines break the include policy (a candidate is one file and may "
                           "include CUDA toolkit headers and C/C++ standard headers by name, as #include <name>)\n{}",
                           name, render_text(d, SourceText(name, source)))};
}

// The header NVRTC's log says it could not open ("cannot open source file \"stdint.h\"", or
// "could not open ..." when it has no include folder), or "".
std::string unopened_header(std::string_view log) {
  for (std::string_view marker : {"cannot open source file \"", "could not open source file \""}) {
    size_t at = log.find(marker);
    if (at == std::string_view::npos) continue;
    at += marker.size();
    size_t end = log.find('"', at);
    if (end != std::string_view::npos && end > at) return std::string(log.substr(at, end - at));
  }
  return "";
}

const std::vector<std::string> kCandidateOptions = {"-std=c++17", "-default-device", "-lineinfo"};

Result<CudaCompile> run_nvrtc(const std::string& source, const std::string& name, const std::string& arch,
                              const std::vector<std::string>& options, const NvrtcLimits& limits, std::string* unopened);

}  // namespace

NvrtcLimits default_nvrtc_limits() {
  NvrtcLimits l;
  l.wall = std::chrono::seconds(60);
  l.process.address_space_bytes = uint64_t{4} << 30;
  l.process.file_size_bytes = uint64_t{256} << 20;
  l.process.cpu_seconds = 120;
  l.process.processes = 4096;
  l.max_ptx_bytes = size_t{256} << 20;
  return l;
}

Status nvrtc_available() {
  SandboxChoice sandbox = sandbox_choice();
  if (sandbox.mode == SandboxMode::none)
    return Error{fmt::format("NVRTC compiles .cu candidates only inside the bubblewrap sandbox, and there is none here: {}",
                             sandbox.why)};
  auto child = find_child();
  if (!child) return child.error();
  // One probe per process and toolkit: it starts a sandbox, which takes a few milliseconds.
  static std::mutex mu;
  static std::map<std::string, std::string> probed;  // cuda_home -> "" or why not
  std::lock_guard lock(mu);
  auto [it, fresh] = probed.try_emplace(cuda_home());
  if (fresh) {
    auto r = run_sandboxed([&] { auto a = child->argv_head; a.push_back("--version"); return a; }(),
                           std::chrono::seconds(30), child_options(default_nvrtc_limits(), ""), child_spec(*child),
                           Trust::untrusted);
    if (!r) it->second = r.error().message;
    else if (r->exit_code != 0)
      it->second = r->exit_code == kNoLibrary
                       ? fmt::format("NVRTC not found (looked in {}/lib64 and the library path); it compiles .cu candidates", cuda_home())
                       : fmt::format("NVRTC's sandboxed child does not start: {}", first_line(r->err + r->out));
  }
  if (!it->second.empty()) return Error{it->second};
  return ok_status();
}

std::string_view to_string(CudaCompiler c) { return c == CudaCompiler::nvcc ? "nvcc" : "nvrtc"; }

Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch) {
  return compile_cuda_candidate(source, name, arch, default_nvrtc_limits());
}

Result<CudaCompile> compile_cuda_candidate(const std::string& source, const std::string& name, const std::string& arch,
                                           const NvrtcLimits& limits) {
  std::string unopened;
  auto r = run_nvrtc(source, name, arch, kCandidateOptions, limits, &unopened);
  if (r || unopened.empty()) return r;
  std::string why = fmt::format("NVRTC cannot open <{}>: it ships no C/C++ library headers", unopened);
  if (!find_cuda_tool("nvcc"))
    return Error{fmt::format("{} was not compiled: {}, and nvcc, which compiles such a candidate instead, is not installed "
                             "(looked in {}/bin and PATH); libcu++ has many of them as <cuda/std/...> (<cuda/std/cstdint>)\n{}",
                             name, why, cuda_home(), r.error().message)};
  auto n = compile_cuda_with_nvcc(source, name, arch, limits);
  if (!n) return Error{fmt::format("{}; nvcc, which compiles such a candidate instead, failed too: {}", why, n.error().message)};
  n->note = why + "; compiled with nvcc";
  return n;
}

Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch,
                                        const std::vector<std::string>& options) {
  return compile_cuda_to_ptx(source, name, arch, options, default_nvrtc_limits());
}

Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch,
                                        const std::vector<std::string>& options, const NvrtcLimits& limits) {
  return run_nvrtc(source, name, arch, options, limits, nullptr);
}

namespace {

Result<CudaCompile> run_nvrtc(const std::string& source, const std::string& name, const std::string& arch,
                              const std::vector<std::string>& options, const NvrtcLimits& limits, std::string* unopened) {
  std::vector<std::string> include_dirs = toolkit_include_dirs();
  if (auto refused = policy_refusal(source, name, include_dirs)) return *refused;
  auto child = find_child();
  if (!child) return child.error();
  std::vector<std::string> argv = child->argv_head;
  argv.insert(argv.end(), {"--name", name, "--", "--gpu-architecture=" + arch});
  for (auto& d : include_dirs) argv.push_back("-I" + d);
  argv.insert(argv.end(), options.begin(), options.end());
  auto r = run_sandboxed(argv, limits.wall, child_options(limits, source), child_spec(*child), Trust::untrusted);
  if (!r) return Error{fmt::format("{} was not compiled: {}", name, r.error().message)};
  LogFilter filter;
  filter.candidate_name = name;
  filter.candidate_source = source;
  if (std::string hit = limit_hit(*r, limits.process, limits.wall); !hit.empty())
    return Error{fmt::format("NVRTC was stopped compiling {} by {} (a runaway macro or template expansion does this); "
                             "nothing of its output is kept",
                             name, hit)};
  if (r->output_capped)
    return Error{fmt::format("NVRTC's PTX for {} passed the {} output limit; refused", name, format_bytes(limits.max_ptx_bytes))};
  if (r->exit_code == kOutOfMemory)
    return Error{fmt::format("NVRTC ran out of its {} memory limit compiling {} (a runaway macro or template expansion does "
                             "this)\n{}",
                             format_bytes(limits.process.address_space_bytes), name, filter_compiler_log(r->err, filter))};
  if (sandbox_failed(*r)) return Error{fmt::format("the sandbox for NVRTC could not start: {}", first_line(r->err))};
  if (r->exit_code == kNoLibrary)
    return Error{fmt::format("NVRTC not found (looked in {}/lib64 and the library path); it compiles .cu candidates: {}",
                             cuda_home(), first_line(r->err))};
  if (r->exit_code == kCompileError) {
    if (unopened) *unopened = unopened_header(r->err);
    return Error{fmt::format("NVRTC could not compile {}:\n{}", name, filter_compiler_log(r->err, filter))};
  }
  if (r->exit_code != 0) {
    int sig = r->signal ? r->signal : r->exit_code > 128 ? r->exit_code - 128 : 0;
    return Error{sig ? fmt::format("NVRTC crashed compiling {} (signal {}, {})", name, sig, strsignal(sig))
                     : fmt::format("NVRTC's child exited with code {} compiling {}", r->exit_code, name)};
  }
  CudaCompile out;
  out.ptx = std::move(r->out);
  out.log = filter_compiler_log(r->err, filter);
  while (!out.log.empty() && out.log.back() == '\n') out.log.pop_back();
  return out;
}

}  // namespace

Result<CudaCompile> compile_cuda_with_nvcc(const std::string& source, const std::string& name, const std::string& arch,
                                           const NvrtcLimits& limits) {
  if (auto refused = policy_refusal(source, name, toolkit_include_dirs())) return *refused;
  auto nvcc = find_cuda_tool("nvcc");
  if (!nvcc) return Error{fmt::format("nvcc not found (looked in {}/bin and PATH)", cuda_home())};
  auto dir = TempDir::create("ptxforge-cu");
  if (!dir) return dir.error();
  // A fixed file name: the name the caller gave is put back into the PTX and the messages.
  std::string cu = dir->path() + "/candidate.cu", ptx_path = dir->path() + "/candidate.ptx";
  if (auto st = write_file(cu, source); !st) return st.error();
  std::vector<std::string> argv = {*nvcc, "-ptx", "-arch=" + arch, "-std=c++17", "-lineinfo", "-o", ptx_path};
  // The folders the policy checked, under the names the log filter knows (nvcc's own are
  // spelt <toolkit>/bin/../targets/...); libcu++ a system folder, as nvcc has it.
  for (auto& d : toolkit_include_dirs()) {
    if (d.ends_with("/cccl")) argv.push_back("-isystem");
    argv.push_back(d.ends_with("/cccl") ? d : "-I" + d);
  }
  argv.push_back(cu);
  ProcessOptions po;
  po.limits = limits.process;
  po.max_output = size_t{1} << 20;  // its messages; the PTX goes to a file under the file-size limit
  SandboxSpec spec;
  spec.work_dir = dir->path();
  spec.host_compiler = true;  // gcc preprocesses for nvcc, and <stdint.h> is the system's
  auto r = run_sandboxed(argv, limits.wall, po, spec, Trust::untrusted);
  if (!r) return Error{fmt::format("{} was not compiled: {}", name, r.error().message)};
  LogFilter filter;
  filter.candidate_name = cu;
  filter.display_name = name;
  filter.candidate_source = source;
  std::string log = filter_compiler_log(r->err + r->out, filter);
  if (std::string hit = limit_hit(*r, limits.process, limits.wall); !hit.empty())
    return Error{fmt::format("nvcc was stopped compiling {} by {} (a runaway macro or template expansion does this); nothing "
                             "of its output is kept",
                             name, hit)};
  if (sandbox_failed(*r)) return Error{fmt::format("the sandbox for nvcc could not start: {}", first_line(r->err))};
  if (r->exit_code != 0) {
    while (!log.empty() && log.back() == '\n') log.pop_back();
    return Error{fmt::format("nvcc could not compile {} (exit code {}):\n{}", name, r->exit_code,
                             log.empty() ? first_line(r->err + r->out) : log)};
  }
  std::error_code ec;
  if (limits.max_ptx_bytes && std::filesystem::file_size(ptx_path, ec) > limits.max_ptx_bytes && !ec)
    return Error{fmt::format("nvcc's PTX for {} passed the {} output limit; refused", name, format_bytes(limits.max_ptx_bytes))};
  auto ptx = read_file(ptx_path);
  if (!ptx) return Error{fmt::format("nvcc wrote no PTX for {}: {}", name, ptx.error().message)};
  CudaCompile out;
  // `.file 1 "<the private copy>"` names the candidate as NVRTC's PTX does; a quote in the
  // name would end the PTX string early.
  std::string shown = name;
  for (char& c : shown)
    if (c == '"' || c == '\\' || c == '\n') c = '_';
  std::string from = "\"" + cu + "\"", to = "\"" + shown + "\"";
  for (size_t at = ptx->find(from); at != std::string::npos; at = ptx->find(from, at + to.size())) ptx->replace(at, from.size(), to);
  out.ptx = std::move(*ptx);
  out.log = log;
  while (!out.log.empty() && out.log.back() == '\n') out.log.pop_back();
  out.compiler = CudaCompiler::nvcc;
  return out;
}

}  // namespace ptxforge::toolchain
