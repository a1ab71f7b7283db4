// The parent's side of the CPU engine (docs/emu.md, section 1): which size sets an engine job
// runs, the reference as PTX, and how the engine's findings and wrong elements read. The
// engine itself is a child process (`ptxforge emu-worker`) behind a gpu::JobRunner; nothing
// here includes emu/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/measurement.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::eval {

// A size set whose buffers total at most this runs on the engine by default: an interpreter
// is some thousand times slower than a GPU, and 4 MiB keeps a level-1 verify near a second.
inline constexpr int64_t kDefaultCpuSetBytes = int64_t{4} << 20;

// The size sets an engine job runs: the task's cpu_sizes, else every set (shown or held back)
// whose buffers total at most kDefaultCpuSetBytes, else the smallest shown set. With
// `held_back` false, held-back sets are dropped (the smallest shown set stands in when none is
// left). Never empty while the task has a shown set: an empty list would mean "every set".
std::vector<std::string> cpu_size_sets(const task::Task& t, bool held_back);

// The reference as PTX for the engine, and where it came from.
struct ReferencePtx {
  std::string path;
  std::string source;  // "nvcc 13.0" / "reference.ptx (nvcc 13.0.88)" / "NVRTC"
};

// reference.cu made PTX for the task's min_target: by nvcc (cached by content under
// `cache_folder`), else the committed reference.ptx beside it when its first line's hash is
// reference.cu's (a stale file is an error: its kernel may not be the reference's), else by
// NVRTC. Without any of them the error says what to install or run.
Result<ReferencePtx> reference_ptx(const task::Task& t, const std::string& cache_folder);

// The first line scripts/refresh-reference-ptx writes: "// reference.cu sha256 <hex>, nvcc <v>".
// Returns the hex, or "" when the line is not of that form.
std::string reference_ptx_hash(std::string_view reference_ptx_text);

// "'c'[2, 17] (element 1041): expected 3.5, got 0.25, last written by thread (17,0,0) of CTA
// (8,0,0) at line 44", or "..., never written".
std::string describe_wrong_element(const gpu::WrongElement& w);
// "[emu-race]": the check that failed a case on the engine ("" without a finding).
std::string finding_suffix(const gpu::Failure& f);

}  // namespace ptxforge::eval
