// Where things are at run time: the running binary, the installed data directory (found
// relative to the binary, so an installed ptxforge runs from any directory), and the CUDA
// toolkit (PTXFORGE_CUDA_HOME, CUDA_HOME, then the configured default, then PATH).
#pragma once

#include <optional>
#include <string>

namespace ptxforge {

std::string executable_path();
// A program installed beside ptxforge ("ptxforge-nvrtc"): next to this executable (installed,
// or ptxforge in its build folder), else where this build put it (a test binary elsewhere).
std::optional<std::string> find_companion_program(const std::string& name);
// $PTXFORGE_DATA_DIR; <prefix>/share/ptxforge when installed; the source tree when run from
// a build directory (found by walking up, or the one it was configured from).
std::optional<std::string> data_dir();
std::string cuda_home();
// A CUDA tool by name ("ptxas"): <cuda_home>/bin/<name>, else PATH; nullopt if neither.
std::optional<std::string> find_cuda_tool(const std::string& name);

// Opens a CUDA toolkit library ("libnvrtc.so.13"): <cuda_home>/lib64 first, then the loader's
// search path. nullptr when neither has it.
void* open_cuda_library(const std::string& soname);

// Where built artifacts are cached (reference cubins): $PTXFORGE_CACHE_DIR, else
// $XDG_CACHE_HOME/ptxforge, else ~/.cache/ptxforge, else $TMPDIR/ptxforge-cache. Created on demand.
std::string cache_dir();

}  // namespace ptxforge
