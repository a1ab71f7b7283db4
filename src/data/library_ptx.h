// A third source of PTX for training: the PTX that installed libraries and binaries carry in
// their fatbins (kept there for GPUs newer than their SASS). cuobjdump extracts it; there is
// no CUDA source, so these modules feed `data mutate` (code unlike the generator's) and are
// labelled by ptxas like every pair. Where cuobjdump is not installed this says so.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "data/pairs.h"
#include "util/result.h"

namespace ptxforge::data {

struct LibraryStats {
  int files = 0, files_with_ptx = 0, modules = 0, duplicates = 0, not_assembled = 0;
  std::vector<std::string> problems;  // a file cuobjdump could not read, one line each
};

// The target a module names (".target sm_90a, texmode_independent" -> "sm_90a"); "" if none.
std::string ptx_target(std::string_view ptx);

// The files to search: each path itself, or every regular file under a folder that can hold
// device code (*.so*, *.a, *.o, *.cubin, *.fatbin, executables), sorted.
Result<std::vector<std::string>> library_files(const std::vector<std::string>& paths);

// Every PTX module embedded in the files, as pairs without source (origin "library:<file>",
// compiler "cuobjdump"), labelled by ptxas for the module's own target (sm_75 for an older
// one: this ptxas builds nothing older). A module whose normalised hash is in `seen` is a
// duplicate; new hashes are added.
Result<std::vector<Pair>> library_pairs(const std::vector<std::string>& files, std::set<std::string>& seen, LibraryStats& stats);

}  // namespace ptxforge::data
