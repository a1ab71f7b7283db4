// The host side of one verify case, (size set, seed) -> element counts, input bytes, scalar
// bytes and shapes, drawn from the task's generators. The GPU worker and the CPU engine both
// build their cases here, so that for the same task, size set and seed they see the same
// inputs bit for bit and differ only where the kernel's execution does (docs/emu.md section 1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "task/buffers.h"
#include "task/expr.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::task {

struct HostCase {
  Bindings symbols;                                       // the size set's values
  std::map<std::string, size_t> counts;                   // buffer elements (scratch counts are the launch spec's)
  std::map<std::string, HostBytes> in;                    // initial contents of in/inout buffers
  std::map<std::string, std::array<uint8_t, 8>> scalars;  // a scalar's bytes, little-endian, zero-padded to 8
  std::map<std::string, std::vector<int64_t>> shapes;     // a buffer's shape, when the task gives one
};

// Draws the case: every buffer's count, the inputs from the task's distribution (the set's
// override, else the parameter's own) keyed by `seed` and the parameter's index, and every
// scalar's value. A count or value that does not evaluate is an error naming the parameter.
Result<HostCase> make_host_case(const Task& task, const SizeSet& set, uint64_t seed);

}  // namespace ptxforge::task
