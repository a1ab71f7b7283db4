// ptxforge doctor: what this machine offers ptxforge: the GPU and its limits, the CUDA tools
// and libraries; and, plainly, what is missing and what that disables. The GPU's facts come
// from the worker process, like everything else that needs the driver.

#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_parse.h"
#include "eval/physical_limit.h"
#include "gpu/peaks.h"
#include "gpu/worker_client.h"
#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::cli {

namespace {

std::string tool_version(const std::string& path) {
  auto p = run_process({path, "--version"}, std::chrono::seconds(20));
  if (!p || p->exit_code != 0) return "(did not report a version)";
  std::string out = p->out + p->err, last;
  for (auto line : split(out, '\n'))
    if (!trim(line).empty()) last = std::string(trim(line));
  return last;
}

// The library stays loaded: unloading NVIDIA's libraries drops the buffers their statically
// linked C++ runtimes allocate at load time, which leak checkers then report as leaks.
bool library_present(const std::string& name) { return open_cuda_library(name) != nullptr; }

}  // namespace

int cmd_doctor(const std::vector<std::string>& args) {
  CLI::App app("Report the GPU and the CUDA toolchain ptxforge can use, and what is missing", "doctor");
  bool remeasure = false;
  app.add_flag("--remeasure", remeasure, "measure the GPU's peaks again instead of reading them from the cache");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  int problems = 0;
  std::cout << "GPU\n";
  gpu::WorkerClient worker(gpu::default_worker_argv());
  auto info = gpu::ask_device_info(worker);  // from the worker: this process never loads libcuda
  if (!info) {
    std::cout << "  none: " << info.error().message << "\n"
              << "  without a GPU, run/compile do check and assemble only and say the kernel was NOT verified\n";
    ++problems;
  } else {
    const auto& i = *info;
    std::cout << fmt::format("  {}  compute capability {}.{} (assembles for {})\n", i.name, i.cc_major, i.cc_minor, i.arch())
              << fmt::format("  {} SMs, {} MHz, {:.1f} GiB memory ({}-bit bus, {} MHz), L2 {:.1f} MB\n", i.sms, i.clock_khz / 1000,
                             static_cast<double>(i.memory_bytes) / (1 << 30), i.bus_width_bits, i.memory_clock_khz / 1000,
                             i.l2_bytes / 1e6)
              << fmt::format("  shared memory: {} KB per block ({} KB opt-in), {} KB per SM; registers: {} per block, {} per SM\n",
                             i.shared_per_block / 1024, i.shared_per_block_optin / 1024, i.shared_per_sm / 1024,
                             i.registers_per_block, i.registers_per_sm)
              << fmt::format("  driver supports CUDA {}.{}\n", i.driver_version / 1000, i.driver_version % 1000 / 10);
    // Every GPU the driver sees: bench and compile --gpus spread work over them (the facts
    // above are GPU 0's; each one is asked through a worker on that GPU).
    std::cout << fmt::format("  GPUs the driver sees: {}\n", i.device_count);
    for (int k = 0; k < i.device_count; ++k) {
      auto other = k == 0 ? Result<gpu::DeviceInfo>(i) : gpu::ask_device_info(gpu::worker_argv_for_gpu(k));
      if (other) std::cout << fmt::format("    GPU {}: {} ({}, {} SMs)\n", k, other->name, other->arch(), other->sms);
      else std::cout << fmt::format("    GPU {}: NOT usable: {}\n", k, other.error().message);
    }
    // The peaks the time stage holds kernels to (measured once, then read from the cache).
    std::string source;
    auto peaks = gpu::device_peaks(worker, i, cache_dir(), remeasure, &source);
    if (!peaks) {
      std::cout << "  peaks: NOT measured: " << peaks.error().message << "\n";
      ++problems;
    } else {
      std::cout << fmt::format("  peaks ({}):\n", source)
                << fmt::format("    memory: copy {} (read + write bytes), read-only {}\n",
                               eval::format_rate(peaks->copy_bytes_per_s, "B"), eval::format_rate(peaks->read_bytes_per_s, "B"))
                << fmt::format("    FP32 FMA {}\n", eval::format_rate(peaks->fma_flops_per_s, "FLOP"));
      // The tensor-core loops (dense flops): the time stage bounds a tensor task by the best
      // loop of its types, with a 5% margin; the table below stands in for any not measured.
      if (!peaks->tensor.empty()) std::cout << "    tensor cores, measured (dense; the time stage's bound, +5%):\n";
      for (auto& t : peaks->tensor)
        std::cout << fmt::format("      {} {} {}\n", gpu::to_string(t.op), gpu::to_string(t.type), eval::format_rate(t.flops_per_s, "FLOP"));
      if (!peaks->tensor_note.empty()) std::cout << "    tensor loops NOT measured: " << peaks->tensor_note << "\n";
      std::vector<std::string> table;
      for (auto tc : {task::TensorCores::tf32, task::TensorCores::f16, task::TensorCores::fp8})
        if (auto t = gpu::tensor_peak_flops(i, tc))
          table.push_back(fmt::format("{} {}", task::to_string(tc), eval::format_rate(*t, "FLOP")));
      if (!table.empty())
        std::cout << fmt::format("    tensor cores, data-sheet table at the boost clock (used only where a loop is missing): {}\n",
                                 fmt::join(table, ", "));
    }
  }
  std::cout << fmt::format("\ntoolchain (CUDA home {})\n", cuda_home());
  struct Tool {
    const char* name;
    const char* needed_for;
    bool required;
  };
  for (Tool t : {Tool{"ptxas", "assemble, run", true}, Tool{"nvcc", "building task references", true},
                 Tool{"cuobjdump", "SASS listings", false}, Tool{"nvdisasm", "SASS listings", false},
                 Tool{"ncu", "executed-instruction proofs", false}, Tool{"compute-sanitizer", "run --sanitize", false}}) {
    auto path = find_cuda_tool(t.name);
    if (path) std::cout << fmt::format("  {:<18} {}  {}\n", t.name, *path, tool_version(*path));
    else {
      std::cout << fmt::format("  {:<18} MISSING: needed for {}\n", t.name, t.needed_for);
      if (t.required) ++problems;
    }
  }
  for (auto [lib, use] : {std::pair{"libnvrtc.so.13", "compiling .cu candidates"},
                          std::pair{"libnvJitLink.so.13", "assemble --backend nvjitlink"},
                          std::pair{"libcublas.so.13", "library baselines"},
                          std::pair{"libcublasLt.so.13", "the cuBLASLt baselines of the tensor-core GEMM tasks"},
                          std::pair{"libcudnn.so.9", "the cuDNN attention baseline (cudnn_sdpa)"}}) {
    bool ok = library_present(lib);
    std::cout << fmt::format("  {:<18} {}\n", lib, ok ? "present" : fmt::format("MISSING: needed for {}", use));
  }
  auto data = data_dir();
  std::cout << fmt::format("\ndata: {}\n", data ? *data : "(not found: set PTXFORGE_DATA_DIR)");
  std::cout << fmt::format("cache: {}\n", cache_dir());
  return problems ? kExitUsage : kExitOk;
}

}  // namespace ptxforge::cli
