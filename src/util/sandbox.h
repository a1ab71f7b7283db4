// How an untrusted tool runs. NVRTC on a candidate's .cu is a C++ front end fed by a model:
// it opens whatever the source #includes, so in this process it could read the environment
// (API keys), the tasks' held-back sizes and reference sources, and hand them back in its
// diagnostics. Every compiler therefore runs as a child with a clean environment and resource
// limits (util/subprocess.h), and, where bubblewrap works, inside a sandbox that sees only the
// CUDA toolkit, the system libraries, the tool and one work folder: no network, no other
// process, no ptxforge data, no home, no working directory.
//
// Where bubblewrap is missing or cannot create namespaces, untrusted work (a .cu candidate)
// is refused with a message naming the missing sandbox; trusted input (ptxas on PTX, nvcc on
// the project's own references) still runs, with the clean environment and the limits.
// PTXFORGE_SANDBOX=bwrap|none|auto forces the choice (auto: bwrap when it works).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "util/result.h"
#include "util/subprocess.h"

namespace ptxforge {

enum class SandboxMode { bwrap, none };
std::string_view to_string(SandboxMode m);

// What the input to a tool is.
enum class Trust {
  untrusted,  // written by a model or a user (.cu candidates): sandbox or refuse
  trusted,    // PTX for ptxas, the project's references: sandbox where possible, else plain
};

// What a tool needs to see beyond the system libraries and the CUDA toolkit.
struct SandboxSpec {
  std::string work_dir;                // read-write, at the same path; the tool's cwd (may be empty)
  std::vector<std::string> read_only;  // further files or folders, each at the same path
  bool host_compiler = false;          // nvcc: /usr/bin, /usr/include, /usr/libexec (gcc, as, ld)
};

// The mode this process uses: PTXFORGE_SANDBOX, else whether bubblewrap works here (probed
// once per process by starting a trivial sandbox).
struct SandboxChoice {
  SandboxMode mode = SandboxMode::none;
  std::string why;  // for none: what is missing ("bwrap not found in PATH", ...)
};
SandboxChoice sandbox_choice();

// The bwrap command line that runs `tool_argv` under `spec` (pure: for tests and for
// run_sandboxed). `bwrap` is the path of the bwrap program.
std::vector<std::string> bwrap_argv(const std::string& bwrap, const SandboxSpec& spec,
                                    const std::vector<std::string>& tool_argv);

// Runs a tool with `opts` (its limits, a clean environment) inside the sandbox where there is
// one. Untrusted input without a sandbox is an Error that names what is missing; an error
// Result otherwise means the tool could not be started.
Result<ProcessResult> run_sandboxed(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                    ProcessOptions opts, const SandboxSpec& spec, Trust trust);

// Why a tool stopped, when one of `limits` or the timeout stopped it ("" when none did):
// "the 256 MiB file-size limit", "the 60 s wall-clock limit", ...
std::string limit_hit(const ProcessResult& r, const ResourceLimits& limits, std::chrono::milliseconds timeout);

// "4 GiB", "256 MiB", "512 KiB" for a byte count.
std::string format_bytes(uint64_t bytes);

}  // namespace ptxforge
