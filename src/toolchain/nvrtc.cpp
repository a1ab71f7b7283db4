#include "toolchain/nvrtc.h"

#include <dlfcn.h>

#include <fmt/format.h>
#include <mutex>
#include <vector>

#include "util/paths.h"

namespace ptxforge::toolchain {

namespace {

// NVRTC's C API, declared here so the build needs no nvrtc.h (nvrtcResult is an int enum).
using Program = void*;
struct Nvrtc {
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*ptx_size)(Program, size_t*) = nullptr;
  int (*get_ptx)(Program, char*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*get_log)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  std::string load_error;
};

const Nvrtc& library() {
  static Nvrtc lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = open_cuda_library("libnvrtc.so.13");
    if (!h) h = open_cuda_library("libnvrtc.so");
    if (!h) {
      lib.load_error = fmt::format("NVRTC not found (looked in {}/lib64 and the library path); it compiles .cu candidates", cuda_home());
      return;
    }
    lib.create = reinterpret_cast<decltype(lib.create)>(dlsym(h, "nvrtcCreateProgram"));
    lib.compile = reinterpret_cast<decltype(lib.compile)>(dlsym(h, "nvrtcCompileProgram"));
    lib.ptx_size = reinterpret_cast<decltype(lib.ptx_size)>(dlsym(h, "nvrtcGetPTXSize"));
    lib.get_ptx = reinterpret_cast<decltype(lib.get_ptx)>(dlsym(h, "nvrtcGetPTX"));
    lib.log_size = reinterpret_cast<decltype(lib.log_size)>(dlsym(h, "nvrtcGetProgramLogSize"));
    lib.get_log = reinterpret_cast<decltype(lib.get_log)>(dlsym(h, "nvrtcGetProgramLog"));
    lib.destroy = reinterpret_cast<decltype(lib.destroy)>(dlsym(h, "nvrtcDestroyProgram"));
    if (!lib.create || !lib.compile || !lib.ptx_size || !lib.get_ptx || !lib.log_size || !lib.get_log || !lib.destroy)
      lib.load_error = "the NVRTC library lacks an expected function";
  });
  return lib;
}

}  // namespace

Status nvrtc_available() {
  const Nvrtc& n = library();
  if (!n.load_error.empty()) return Error{n.load_error};
  return ok_status();
}

Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch) {
  return compile_cuda_to_ptx(source, name, arch, {"-std=c++17", "-default-device", "-lineinfo"});
}

Result<CudaCompile> compile_cuda_to_ptx(const std::string& source, const std::string& name, const std::string& arch,
                                        const std::vector<std::string>& options) {
  const Nvrtc& n = library();
  if (!n.load_error.empty()) return Error{n.load_error};
  Program prog = nullptr;
  if (n.create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != 0) return Error{"nvrtcCreateProgram failed"};
  // CUDA 13 keeps libcu++, CUB and Thrust under include/cccl.
  std::vector<std::string> all = {"--gpu-architecture=" + arch, "-I" + cuda_home() + "/include",
                                  "-I" + cuda_home() + "/include/cccl"};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> opts;
  for (auto& o : all) opts.push_back(o.c_str());
  int rc = n.compile(prog, static_cast<int>(opts.size()), opts.data());
  CudaCompile out;
  size_t size = 0;
  n.log_size(prog, &size);
  out.log.resize(size);
  if (size) n.get_log(prog, out.log.data());
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  if (rc != 0) {
    n.destroy(&prog);
    return Error{fmt::format("NVRTC could not compile {}:\n{}", name, out.log)};
  }
  n.ptx_size(prog, &size);
  out.ptx.resize(size);
  n.get_ptx(prog, out.ptx.data());
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  n.destroy(&prog);
  return out;
}

}  // namespace ptxforge::toolchain
