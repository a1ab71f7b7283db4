// ptxforge-nvrtc: the process NVRTC runs in. A .cu candidate is untrusted input to a C++
// front end that opens files (#include), expands macros without bound and allocates without
// limit; running it here, in a bubblewrap sandbox with resource limits (util/sandbox.h),
// keeps the ptxforge process, its environment (API keys) and its files (tasks, references)
// out of reach, and a runaway compile is killed without taking the caller down.
//
// It links nothing of ptxforge: the less code runs beside NVRTC, the less there is to trust.
//
//   ptxforge-nvrtc --library PATH [--library PATH...] --name NAME [--] OPTION...
//     the source on stdin; the PTX on stdout, NVRTC's log on stderr.
//   ptxforge-nvrtc --library PATH... --version
//     "nvrtc MAJOR.MINOR" on stdout: NVRTC loads here.
// Exit codes (toolchain/nvrtc.cpp reads them): 0 compiled, 1 compile error, 2 usage,
// 3 NVRTC missing or broken, 4 out of memory (NVRTC said so, or a crash at the memory limit).
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kCompiled = 0, kCompileError = 1, kUsage = 2, kNoLibrary = 3, kOutOfMemory = 4;
constexpr int kNvrtcOutOfMemory = 1;  // NVRTC_ERROR_OUT_OF_MEMORY

void write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w <= 0) return;
    data += w;
    n -= static_cast<size_t>(w);
  }
}
void say(const char* text) { write_all(2, text, strlen(text)); }

// A crash under RLIMIT_AS is how running out of memory usually ends (an allocation fails
// somewhere that does not check, or bad_alloc reaches terminate). The handler tells that apart
// from a plain crash by the peak of the address space against the limit, with only
// async-signal-safe calls (open, read, write, _exit).
size_t g_as_limit_kb = 0;
void on_fatal_signal(int sig) {
  if (g_as_limit_kb) {
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n > 0) {
      buf[n] = '\0';
      const char* p = strstr(buf, "VmPeak:");
      size_t kb = 0;
      if (p)
        for (p += 7; *p == ' ' || *p == '\t'; ++p) {
        }
      for (; p && *p >= '0' && *p <= '9'; ++p) kb = kb * 10 + static_cast<size_t>(*p - '0');
      // Within 1/8 of the limit: the crash came from an allocation the limit refused.
      if (kb >= g_as_limit_kb - g_as_limit_kb / 8) {
        say("\nptxforge-nvrtc: out of memory (the address-space limit was reached)\n");
        _exit(kOutOfMemory);
      }
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_crash_handlers() {
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) g_as_limit_kb = r.rlim_cur / 1024;
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS})
    signal(sig, on_fatal_signal);
}

using Program = void*;
struct Nvrtc {
  int (*version)(int*, int*) = nullptr;
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*ptx_size)(Program, size_t*) = nullptr;
  int (*get_ptx)(Program, char*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*get_log)(Program, char*) = nullptr;
};

bool load(const std::vector<std::string>& libraries, Nvrtc& n, std::string& why) {
  void* h = nullptr;
  for (auto& l : libraries)
    if ((h = dlopen(l.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
  if (!h) {
    const char* e = dlerror();
    why = std::string("cannot load NVRTC: ") + (e ? e : "no library given");
    return false;
  }
  n.version = reinterpret_cast<decltype(n.version)>(dlsym(h, "nvrtcVersion"));
  n.create = reinterpret_cast<decltype(n.create)>(dlsym(h, "nvrtcCreateProgram"));
  n.compile = reinterpret_cast<decltype(n.compile)>(dlsym(h, "nvrtcCompileProgram"));
  n.ptx_size = reinterpret_cast<decltype(n.ptx_size)>(dlsym(h, "nvrtcGetPTXSize"));
  n.get_ptx = reinterpret_cast<decltype(n.get_ptx)>(dlsym(h, "nvrtcGetPTX"));
  n.log_size = reinterpret_cast<decltype(n.log_size)>(dlsym(h, "nvrtcGetProgramLogSize"));
  n.get_log = reinterpret_cast<decltype(n.get_log)>(dlsym(h, "nvrtcGetProgramLog"));
  if (!n.version || !n.create || !n.compile || !n.ptx_size || !n.get_ptx || !n.log_size || !n.get_log) {
    why = "the NVRTC library lacks an expected function";
    return false;
  }
  // NVRTC opens libnvrtc-builtins.so.<major>.<minor> by name, through the loader's search
  // path; in the sandbox LD_LIBRARY_PATH is gone, so it is loaded here first from the folder
  // NVRTC itself came from, and the loader then finds it already open.
  Dl_info info{};
  int major = 0, minor = 0;
  if (dladdr(reinterpret_cast<void*>(n.create), &info) && info.dli_fname && n.version(&major, &minor) == 0) {
    std::string dir = info.dli_fname;
    dir = dir.substr(0, dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/') + 1);
    std::string builtins = dir + "libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor);
    dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
  }
  return true;
}

std::string read_stdin() {
  std::string s;
  char buf[65536];
  for (ssize_t n; (n = read(0, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> libraries, options;
  std::string name = "candidate.cu";
  bool version = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--library" && i + 1 < argc) libraries.push_back(argv[++i]);
    else if (a == "--name" && i + 1 < argc) name = argv[++i];
    else if (a == "--version") version = true;
    else if (a == "--") {
      options.assign(argv + i + 1, argv + argc);
      break;
    } else {
      say("usage: ptxforge-nvrtc --library PATH... (--version | --name NAME [--] OPTION...)\n"
          "the process ptxforge compiles .cu candidates in; not meant to be run by hand\n");
      return kUsage;
    }
  }
  install_crash_handlers();
  Nvrtc n;
  std::string why;
  if (!load(libraries, n, why)) {
    say(("ptxforge-nvrtc: " + why + "\n").c_str());
    _exit(kNoLibrary);
  }
  if (version) {
    int major = 0, minor = 0;
    n.version(&major, &minor);
    std::string v = "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + "\n";
    write_all(1, v.data(), v.size());
    _exit(kCompiled);
  }
  std::string source = read_stdin();
  Program prog = nullptr;
  if (n.create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != 0) {
    say("ptxforge-nvrtc: nvrtcCreateProgram failed\n");
    _exit(kNoLibrary);
  }
  std::vector<const char*> opts;
  for (auto& o : options) opts.push_back(o.c_str());
  int rc = n.compile(prog, static_cast<int>(opts.size()), opts.data());
  size_t size = 0;
  n.log_size(prog, &size);
  std::string log(size, '\0');
  if (size) n.get_log(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  write_all(2, log.data(), log.size());
  // The front end says "catastrophic error: out of memory", NVRTC's code generator "Memory
  // allocation failure", when an allocation fails under the limit: a memory verdict, not a
  // compile error. (A candidate that prints the phrase itself only mislabels its own failure.)
  bool oom_text = log.find("catastrophic error: out of memory") != std::string::npos ||
                  log.find("Memory allocation failure") != std::string::npos;
  if (rc == kNvrtcOutOfMemory || (rc != 0 && oom_text)) _exit(kOutOfMemory);
  if (rc != 0) _exit(kCompileError);
  n.ptx_size(prog, &size);
  std::string ptx(size, '\0');
  if (size) n.get_ptx(prog, ptx.data());
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  write_all(1, ptx.data(), ptx.size());
  // _exit, not return: no destructors or leak checks of a sanitizer build run over NVRTC's
  // own allocations, and nothing of the library's teardown can change the verdict.
  _exit(kCompiled);
}
