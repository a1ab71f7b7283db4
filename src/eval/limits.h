// ptxforge's policy limits on a candidate, checked at the start of the assemble stage, before
// ptxas runs. They are not ISA rules (`check` stays silent on a module that breaks them): they
// bound what a hostile candidate can make the toolchain and the GPU do. Without them a
// 60-line module with `.global .align 67108864` makes ptxas spend seconds and hundreds of MB
// writing a 64 MiB cubin, and each load of it takes that much device memory; a 256 MiB
// function `.param` makes ptxas run for minutes and gigabytes and then crash. A candidate that
// calls the device allocator (malloc/free) gets a heap that survives between trials, a channel
// to remember outputs in, so it needs the task's leave (`device_heap_bytes`).
// Every finding is a Diagnostic with an id `limit-*` (or `device-heap`) at the offending line.
// The values are documented in docs/task-format.md ("Limits"); each is far above what every
// shipped solution, hand-written test module and compiled corpus module uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ptx/ast.h"
#include "util/diagnostic.h"

namespace ptxforge::eval {

struct Limits {
  uint64_t ptx_bytes = 32ull << 20;     // the PTX text (a .cu's NVRTC output included; nvcc -G of thrust: 9.5 MiB)
  uint64_t cuda_bytes = 1ull << 20;     // a .cu candidate's source
  uint64_t align = 4096;                // `.align` of any variable (swizzled shared memory uses 1024)
  // .global and .const variables laid out in order, alignment gaps included: device memory
  // each load of the module takes (and the time stage restores before every trial).
  uint64_t module_bytes = 256ull << 20;
  // Of those, the initialised ones (and all .const): these are bytes of the cubin, which ptxas
  // writes and the parent reads, so they are held much lower.
  uint64_t module_data_bytes = 16ull << 20;
  uint64_t local_bytes = 512ull << 10;  // one .local variable (the GPU's per-thread maximum)
  uint64_t shared_bytes = 1ull << 20;   // one .shared variable (ptxas itself refuses more than 227 KiB per block)
  uint64_t param_bytes = 32ull << 10;   // one .param variable (kernel parameters stop at 32764 bytes)
  uint64_t cubin_bytes = 64ull << 20;   // what ptxas produced
};

inline constexpr Limits kLimits{};

// What the policy needs besides the module: the sizes of the candidate's texts, and how much
// device heap the task grants (task::Task::device_heap_bytes; 0 forbids the allocator).
struct PolicyInput {
  uint64_t ptx_bytes = 0;
  uint64_t cuda_bytes = 0;  // 0 for a PTX candidate
  uint64_t device_heap_bytes = 0;
};

// Every limit the module breaks, as errors on its lines ([limit-align], [limit-module-bytes],
// [limit-module-data], [limit-local], [limit-shared], [limit-param], [limit-candidate-size], [device-heap]).
Diagnostics check_policy(const ptx::Module& m, const PolicyInput& in, const Limits& limits = kLimits);

// ptxas's output against the cubin limit: an error [limit-cubin-size], or an empty list.
Diagnostics check_cubin_size(uint64_t cubin_bytes, const Limits& limits = kLimits);

// The bytes one declarator of `d` takes: element size (type and vector width) times every
// dimension; an unsized `a[]` counts the scalars of its initializer. Saturates at UINT64_MAX.
uint64_t variable_bytes(const ptx::VarDecl& d, const ptx::Declarator& n);

// The device allocator's functions: a module that declares one without a body calls into the
// driver's heap.
bool is_device_allocator(std::string_view function_name);

// "16 MiB", "4096 bytes": how limits and sizes are written in messages.
std::string byte_text(uint64_t bytes);

}  // namespace ptxforge::eval
