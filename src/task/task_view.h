// A task as a model (or a person) is shown it: the description, the kernel's parameters with
// dtypes and element counts, the shown sizes only (held-back sizes never appear), the
// tolerance, required instructions, target and the launch-spec format the answer must use.
#pragma once

#include <string>

#include "task/task_spec.h"

namespace ptxforge::task {

std::string render_task_for_model(const Task& t);

}  // namespace ptxforge::task
