// nvJitLink in-process, loaded with dlopen so that ptxforge builds and runs where the library
// is absent (then it says what to install). It runs the same ptxas inside the library, so its
// log has the same format and goes through the same parser.
#include <dlfcn.h>

#include <chrono>
#include <mutex>

#include <fmt/format.h>

#include "toolchain/ptxas.h"
#include "util/paths.h"

namespace ptxforge::toolchain {

namespace {

using Handle = void*;
using CreateFn = int (*)(Handle*, uint32_t, const char**);
using AddDataFn = int (*)(Handle, int, const void*, size_t, const char*);
using CompleteFn = int (*)(Handle);
using SizeFn = int (*)(Handle, size_t*);
using GetFn = int (*)(Handle, char*);
using DestroyFn = int (*)(Handle*);
constexpr int kInputPtx = 2;  // NVJITLINK_INPUT_PTX (NONE = 0, CUBIN = 1, PTX = 2)

struct NvJitLink {
  CreateFn create = nullptr;
  AddDataFn add_data = nullptr;
  CompleteFn complete = nullptr;
  SizeFn cubin_size = nullptr, error_size = nullptr, info_size = nullptr;
  GetFn cubin = nullptr, error_log = nullptr, info_log = nullptr;
  DestroyFn destroy = nullptr;
  std::string load_error;
};

const NvJitLink& library() {
  static NvJitLink lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = open_cuda_library("libnvJitLink.so.13");
    if (!h) h = open_cuda_library("libnvJitLink.so");
    if (!h) {
      lib.load_error = fmt::format("nvJitLink not found (looked in {}/lib64 and the library path); install the CUDA "
                                   "toolkit's libnvjitlink or use --backend ptxas",
                                   cuda_home());
      return;
    }
    auto sym = [&](const char* versioned, const char* plain) {
      void* p = dlsym(h, versioned);
      return p ? p : dlsym(h, plain);
    };
    lib.create = reinterpret_cast<CreateFn>(sym("__nvJitLinkCreate_13_0", "nvJitLinkCreate"));
    lib.add_data = reinterpret_cast<AddDataFn>(sym("__nvJitLinkAddData_13_0", "nvJitLinkAddData"));
    lib.complete = reinterpret_cast<CompleteFn>(sym("__nvJitLinkComplete_13_0", "nvJitLinkComplete"));
    lib.cubin_size = reinterpret_cast<SizeFn>(sym("__nvJitLinkGetLinkedCubinSize_13_0", "nvJitLinkGetLinkedCubinSize"));
    lib.cubin = reinterpret_cast<GetFn>(sym("__nvJitLinkGetLinkedCubin_13_0", "nvJitLinkGetLinkedCubin"));
    lib.error_size = reinterpret_cast<SizeFn>(sym("__nvJitLinkGetErrorLogSize_13_0", "nvJitLinkGetErrorLogSize"));
    lib.error_log = reinterpret_cast<GetFn>(sym("__nvJitLinkGetErrorLog_13_0", "nvJitLinkGetErrorLog"));
    lib.info_size = reinterpret_cast<SizeFn>(sym("__nvJitLinkGetInfoLogSize_13_0", "nvJitLinkGetInfoLogSize"));
    lib.info_log = reinterpret_cast<GetFn>(sym("__nvJitLinkGetInfoLog_13_0", "nvJitLinkGetInfoLog"));
    lib.destroy = reinterpret_cast<DestroyFn>(sym("__nvJitLinkDestroy_13_0", "nvJitLinkDestroy"));
    if (!lib.create || !lib.add_data || !lib.complete || !lib.cubin_size || !lib.cubin || !lib.error_size ||
        !lib.error_log || !lib.info_size || !lib.info_log || !lib.destroy)
      lib.load_error = "the nvJitLink library found lacks the CUDA 13 entry points";
  });
  return lib;
}

std::string read_log(Handle h, SizeFn size, GetFn get) {
  size_t n = 0;
  if (size(h, &n) != 0 || n == 0) return "";
  std::string s(n, '\0');
  if (get(h, s.data()) != 0) return "";
  if (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

Result<AssembleResult> assemble_with_nvjitlink(std::string_view ptx, const AssembleOptions& opts) {
  const NvJitLink& lib = library();
  if (!lib.load_error.empty()) return Error{lib.load_error};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> args = {"-arch=" + opts.arch, fmt::format("-O{}", opts.opt_level), "-verbose"};
  for (auto& a : opts.extra_args) args.push_back("-Xptxas=" + a);
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  Handle h = nullptr;
  if (int rc = lib.create(&h, static_cast<uint32_t>(argv.size()), argv.data()); rc != 0)
    return Error{fmt::format("nvJitLinkCreate failed with code {} (options: {})", rc, fmt::join(args, " "))};
  std::string data(ptx);
  AssembleResult r;
  r.backend = "nvjitlink";
  int rc = lib.add_data(h, kInputPtx, data.data(), data.size(), opts.source_name.c_str());
  if (rc == 0) rc = lib.complete(h);
  r.log = read_log(h, lib.error_size, lib.error_log) + read_log(h, lib.info_size, lib.info_log);
  // ptxas's own lines keep their "ptxas" prefix; the linker's summary lines ("info    :
  // Function properties for 'k':") describe the linked image and are left out, so both
  // backends report the same per-function figures.
  parse_ptxas_output(r.log, ptx, r);
  if (rc == 0) {
    size_t n = 0;
    if (lib.cubin_size(h, &n) == 0 && n > 0) {
      r.cubin.resize(n);
      if (lib.cubin(h, r.cubin.data()) != 0) r.cubin.clear();
    }
  } else if (!r.diags.has_errors()) {
    r.diags.error({}, fmt::format("nvJitLink failed with code {}", rc), "ptxas");
  }
  lib.destroy(&h);
  r.ok = rc == 0 && !r.diags.has_errors();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace ptxforge::toolchain
