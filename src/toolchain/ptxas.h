// Assembling PTX: ptxas as a subprocess (timeout, private temp dir, a clean environment,
// limits on memory and on the cubin's size, the bubblewrap sandbox where there is one) or
// nvJitLink in-process.
// Either way the result is the same: ptxas's errors and warnings as Diagnostic records on our
// line numbers, the cubin, per-function resource usage, and the info codes (C7508, ...).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "util/diagnostic.h"
#include "util/result.h"
#include "util/subprocess.h"

namespace ptxforge::toolchain {

struct FunctionResources {
  std::string name;
  bool is_entry = false;
  std::string arch;
  int registers = 0;
  int barriers = 0;
  int shared_bytes = 0;       // static shared memory
  int const_bytes = 0;        // cmem[0..] summed
  int local_bytes = 0;        // lmem
  int stack_frame = 0;
  int spill_stores = 0;
  int spill_loads = 0;
  int cumulative_stack = 0;
  double compile_ms = 0;
  bool operator==(const FunctionResources&) const = default;
};

struct AssembleResult {
  bool ok = false;
  std::string backend;                 // "ptxas" or "nvjitlink"
  std::string tool_version;
  Diagnostics diags;                   // errors, warnings; info lines with codes as notes
  std::vector<std::string> info_codes; // "C7508", ...
  std::vector<FunctionResources> functions;
  std::string cubin;
  std::string log;                     // the tool's raw output
  double seconds = 0;                  // wall time of the whole assemble
  const FunctionResources* find(std::string_view name) const;
};

enum class Backend { ptxas, nvjitlink };

// ptxas's default bounds: 2 GiB of address space, a 256 MiB cubin, 4096 processes.
ResourceLimits default_ptxas_limits();

struct AssembleOptions {
  std::string arch = "sm_90a";
  int opt_level = 3;
  std::chrono::milliseconds timeout{120000};
  Backend backend = Backend::ptxas;
  std::vector<std::string> extra_args;  // e.g. -maxrregcount=128
  // The name ptxas's messages give the input ("Missing .version directive at start of file
  // 'k.ptx'"): the user's file, never the private temp copy ptxas actually reads.
  std::string source_name = "input.ptx";
  // ptxas's bounds (nvJitLink runs in this process and has none); a cpu_seconds of 0 becomes
  // the timeout plus 10 s. A module that would assemble past file_size_bytes (a huge .align
  // or array) fails with an error naming the limit.
  ResourceLimits limits = default_ptxas_limits();
};

// An error Result means the tool is missing or could not run; bad PTX is a normal result
// with ok == false and diagnostics.
Result<AssembleResult> assemble(std::string_view ptx, const AssembleOptions& opts);
Result<AssembleResult> assemble_with_ptxas(std::string_view ptx, const AssembleOptions& opts);
Result<AssembleResult> assemble_with_nvjitlink(std::string_view ptx, const AssembleOptions& opts);

// Parses ptxas-format output ("ptxas k.ptx, line 9; error   : ...", -v resource lines).
// `source` gives columns: a quoted token from the message is looked up on the line.
void parse_ptxas_output(std::string_view log, std::string_view source, AssembleResult& out);

}  // namespace ptxforge::toolchain
