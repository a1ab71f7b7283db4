// Whether a GPU can run a task at all. A task names the lowest target its kernels need
// (min_target = "sm_100a" for tcgen05); a GPU whose own target does not satisfy it (an H200,
// sm_90a) can still check and assemble a candidate for that target, but loading the cubin
// would fail with a driver error that names neither target. The pipeline asks here first:
// it assembles for the task's target and skips verify with a reason that names both, and
// `suite validate` counts such a task apart from failures. Satisfaction is the ISA's
// (ptx/target.h): an `a` target means exactly that GPU, an `f` target its family.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ptxforge::eval {

// Why a GPU of target `gpu_target` ("sm_90a", DeviceInfo::arch()) cannot run a task whose
// min_target is `min_target`; nullopt when it can. A min_target that is no target is a gap
// too (the task is wrong, and no GPU can be said to run it); a GPU target that cannot be
// parsed is not (the GPU itself will say what it can do).
std::optional<std::string> target_gap(std::string_view min_target, std::string_view gpu_target);

// The target to check and assemble a candidate for on a GPU (or, with no GPU, a default) of
// target `gpu_target`: its own where it satisfies the task, else the task's min_target, so
// that a candidate for a newer GPU is still assembled by ptxas for the target it needs.
std::string assemble_target(std::string_view min_target, std::string_view gpu_target);

}  // namespace ptxforge::eval
