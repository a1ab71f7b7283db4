// The include policy for a .cu candidate, checked before any compiler sees it. A candidate is
// one file: the only headers it may name are the CUDA toolkit's, as `#include <name>` with a
// name that exists under the toolkit's include folders, and the C and C++ standard headers of
// a fixed list (<stdint.h>, <cstdint>, <math.h>, ...), by name only: those resolve in the
// system's include folders, which hold nothing of ours (nvrtc.h says which compiler reads
// them). Everything that could make the
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

// Whether `name` is one of the C/C++ standard headers a candidate may include by name
// ("stdint.h", "cstdint", "type_traits"; not "bits/types.h", not "sys/mman.h").
bool is_standard_header(std::string_view name);
// The list, in a fixed order (for messages and the documentation).
const std::vector<std::string_view>& standard_headers();

// Every refusal in `source`, one diagnostic per offending line (check ids start "include-").
Diagnostics check_cuda_includes(std::string_view source, const std::vector<std::string>& include_dirs);

}  // namespace ptxforge::toolchain
