// The bubblewrap sandbox the compilers run in, and the fallback where it cannot run
// (sandbox.h says which work is refused then).
#include "util/sandbox.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <sstream>

#include "util/paths.h"
#include "util/text.h"

namespace ptxforge {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path && *path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    fs::path p = fs::path(dir) / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

// `path` as it is on this machine: a symlink is recreated (its target must be bound too), a
// file or folder is bound read-only, a missing path is left out.
void expose(std::vector<std::string>& a, const std::string& path, bool writable = false) {
  std::error_code ec;
  auto st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st)) return;
  if (fs::is_symlink(st)) {
    auto target = fs::read_symlink(path, ec);
    if (ec) return;
    a.insert(a.end(), {"--symlink", target.string(), path});
    return;
  }
  a.insert(a.end(), {writable ? "--bind" : "--ro-bind", path, path});
}

// The CUDA toolkit: the parts a compiler reads, at their real place, and the configured path
// (often the symlink /usr/local/cuda) pointing there. Not the whole root: where the toolkit
// is /usr (a distribution's packages), that would be all of /usr.
void expose_cuda(std::vector<std::string>& a) {
  std::error_code ec;
  std::string home = cuda_home();
  fs::path real = fs::canonical(home, ec);
  if (ec) return;
  for (const char* part : {"bin", "include", "lib", "lib64", "nvvm", "targets"}) {
    // A part that is a symlink (lib64 -> lib, or out of the toolkit) is bound from where it
    // points, so that nothing beside the toolkit has to be visible for it to resolve.
    fs::path p = real / part, target = fs::canonical(p, ec);
    if (!ec && fs::is_directory(target, ec)) a.insert(a.end(), {"--ro-bind", target.string(), p.string()});
  }
  if (fs::path(home).lexically_normal() != real) a.insert(a.end(), {"--symlink", real.string(), home});
}

SandboxChoice probe_bwrap() {
  auto bwrap = find_in_path("bwrap");
  if (!bwrap) return {SandboxMode::none, "bwrap (Debian package bubblewrap) is not installed"};
  auto truth = find_in_path("true");
  if (!truth) return {SandboxMode::none, "no 'true' program to probe bwrap with"};
  SandboxSpec spec;
  spec.read_only = {fs::canonical(*truth).string()};
  ProcessOptions o;
  o.limits.file_size_bytes = 1 << 20;
  auto r = run_process(bwrap_argv(*bwrap, spec, {fs::canonical(*truth).string()}), std::chrono::seconds(20), o);
  if (!r) return {SandboxMode::none, "bwrap cannot be started: " + r.error().message};
  if (r->exit_code != 0) {
    std::string err(trim(r->err));
    if (auto nl = err.find('\n'); nl != std::string::npos) err.resize(nl);
    return {SandboxMode::none, fmt::format("bwrap cannot create its namespaces here ({})",
                                           err.empty() ? fmt::format("exit code {}", r->exit_code) : err)};
  }
  return {SandboxMode::bwrap, ""};
}

}  // namespace

std::string_view to_string(SandboxMode m) { return m == SandboxMode::bwrap ? "bwrap" : "none"; }

SandboxChoice sandbox_choice() {
  const char* forced = std::getenv("PTXFORGE_SANDBOX");
  std::string f = forced ? forced : "";
  if (f == "none") return {SandboxMode::none, "PTXFORGE_SANDBOX=none"};
  if (f == "bwrap") return {SandboxMode::bwrap, ""};
  if (!f.empty() && f != "auto")
    return {SandboxMode::none, fmt::format("PTXFORGE_SANDBOX has the unknown value '{}' (bwrap, none or auto)", f)};
  static SandboxChoice probed;
  static std::once_flag once;
  std::call_once(once, [] { probed = probe_bwrap(); });
  return probed;
}

std::vector<std::string> bwrap_argv(const std::string& bwrap, const SandboxSpec& spec,
                                    const std::vector<std::string>& tool_argv) {
  std::vector<std::string> a = {bwrap,
                                // No network, no other process, no host name, no IPC; gone when we are.
                                "--unshare-all", "--die-with-parent",
                                // setsid: the tool cannot push keystrokes into our terminal (TIOCSTI).
                                "--new-session", "--cap-drop", "ALL",
                                // The environment is rebuilt from nothing.
                                "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
                                "--setenv", "LANG", "C",
                                // A fresh /proc shows only the sandbox's processes (so /proc/self/environ
                                // holds the three variables above); a minimal /dev; a private /tmp.
                                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"};
  // The dynamic loader and the system libraries; /usr/share, /etc, /home, /root are not there.
  for (const char* p : {"/usr/lib", "/usr/lib64", "/lib", "/lib64", "/etc/ld.so.cache"}) expose(a, p);
  if (spec.host_compiler) {
    // nvcc drives gcc (cc1plus under /usr/lib/gcc), as and ld, and gcc reads the C++ headers.
    for (const char* p : {"/usr/bin", "/bin", "/usr/include", "/usr/libexec", "/etc/alternatives"}) expose(a, p);
  }
  expose_cuda(a);
  for (auto& p : spec.read_only) expose(a, p);
  if (!spec.work_dir.empty()) {
    a.insert(a.end(), {"--bind", spec.work_dir, spec.work_dir});
    a.insert(a.end(), {"--chdir", spec.work_dir});
  } else {
    a.insert(a.end(), {"--chdir", "/tmp"});
  }
  a.push_back("--");
  a.insert(a.end(), tool_argv.begin(), tool_argv.end());
  return a;
}

Result<ProcessResult> run_sandboxed(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                    ProcessOptions opts, const SandboxSpec& spec, Trust trust) {
  SandboxChoice choice = sandbox_choice();
  opts.env = ChildEnv::clean;  // whatever the caller asked: a compiler never inherits
  if (choice.mode == SandboxMode::none) {
    if (trust == Trust::untrusted)
      return Error{fmt::format("refused: compiling CUDA C++ from a candidate needs the bubblewrap sandbox, and there is "
                               "none here: {}. Install bubblewrap (scripts/setup does) or give the candidate as PTX",
                               choice.why)};
    if (opts.cwd.empty()) opts.cwd = spec.work_dir;
    return run_process(argv, timeout, opts);
  }
  auto bwrap = find_in_path("bwrap");
  if (!bwrap) return Error{"PTXFORGE_SANDBOX=bwrap, but bwrap (Debian package bubblewrap) is not installed"};
  opts.cwd.clear();  // bwrap's --chdir sets it inside
  return run_process(bwrap_argv(*bwrap, spec, argv), timeout, opts);
}

std::string format_bytes(uint64_t bytes) {
  if (bytes && bytes % (uint64_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes && bytes % (uint64_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes && bytes % (uint64_t{1} << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

std::string limit_hit(const ProcessResult& r, const ResourceLimits& limits, std::chrono::milliseconds timeout) {
  if (r.timed_out) return fmt::format("the {:g} s wall-clock limit", static_cast<double>(timeout.count()) / 1000);
  // A signal reaches us directly without a sandbox; bwrap passes it on as exit code 128+signal.
  auto died_of = [&](int sig) { return r.signal == sig || r.exit_code == 128 + sig; };
  if (limits.file_size_bytes && died_of(SIGXFSZ))
    return fmt::format("the {} file-size limit", format_bytes(limits.file_size_bytes));
  if (limits.cpu_seconds && (died_of(SIGXCPU) || (died_of(SIGKILL) && r.seconds >= static_cast<double>(limits.cpu_seconds))))
    return fmt::format("the {} s CPU-time limit", limits.cpu_seconds);
  return "";
}

}  // namespace ptxforge
