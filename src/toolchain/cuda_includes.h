// The include policy for a .cu candidate, checked before any compiler sees it. A candidate is
// one file: the only headers it may name are the CUDA toolkit's, as `#include <name>` with a
// name that exists under the toolkit's include folders. Everything that could make the
// preprocessor open another file, or hide which file it opens, is refused with the line it
// is on: quoted, absolute and `..` includes, computed includes (`#include MACRO`),
// `__has_include`, `#include_next`, `#import`, `#embed`, include-like pragmas, `#line` with a
// file name, directives spelt with digraphs or trigraphs (`%:include`) and directives split
// by line continuations. The sandbox (util/sandbox.h) is the defence that holds when a check
// like this one is outwitted; this one gives the clear message.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/diagnostic.h"

namespace ptxforge::toolchain {

// The folders a `#include <name>` may resolve in: <cuda_home>/include and its cccl/ (CUDA 13
// keeps libcu++ there), those that exist.
std::vector<std::string> toolkit_include_dirs();

// Every refusal in `source`, one diagnostic per offending line (check ids start "include-").
Diagnostics check_cuda_includes(std::string_view source, const std::vector<std::string>& include_dirs);

}  // namespace ptxforge::toolchain
