// Pulling the candidate out of a model's reply. Replies come with prose, several code
// blocks, no fences at all, a fence left open by a truncated reply, launch lines outside the
// code, or no .version/.target header; all of that is tolerated. A reply with no kernel in it
// is an error whose message is written to be fed back to the model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace ptxforge::agent {

struct Extracted {
  enum Kind { ptx, cuda } kind = ptx;
  std::string code;                // what becomes candidate.ptx / candidate.cu
  std::vector<std::string> notes;  // what extraction did: "took the last of 3 code blocks", "added a header"
};

// `arch` is the target a missing header gets (the version is the lowest both it and the
// body need).
Result<Extracted> extract_candidate(std::string_view reply, const std::string& arch = "sm_90a");

}  // namespace ptxforge::agent
