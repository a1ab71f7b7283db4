// What of a compiler's log may be passed on. A log goes into check diagnostics, then into
// result.json, feedback.md, the model's next prompt and exported training data; a compiler
// quotes the source text of whatever file a message is located in. So only what is located
// in the candidate itself is kept (its messages, and quoted lines that really are the
// candidate's own lines); a message located in a toolkit or system header becomes
// "error in toolkit header <cuda_fp16.hpp>:123" with no text from that header; anything not
// recognised is dropped, and the number of dropped lines is said.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptxforge::toolchain {

struct LogFilter {
  std::string candidate_name;            // how the compiler names the candidate's file
  std::string display_name;              // how the kept lines name it (empty: candidate_name)
  std::string_view candidate_source;     // to check that a quoted line is the candidate's
  // A message in a header under one of these is reduced to "<sev> in toolkit (or system)
  // header <relative path>:line"; anywhere else, dropped.
  std::vector<std::string> toolkit_dirs = default_toolkit_header_dirs();
  std::vector<std::string> system_dirs = {"/usr/include", "/usr/local/include", "/usr/lib/gcc"};

  // The toolkit's include folders under both names (as given to -I, and their real place).
  static std::vector<std::string> default_toolkit_header_dirs();
};

// The kept lines of `log`, each ending in a newline.
std::string filter_compiler_log(std::string_view log, const LogFilter& filter);

}  // namespace ptxforge::toolchain
