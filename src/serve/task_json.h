// The bodies of GET /v1/tasks and GET /v1/tasks/{name}: a task as a model is shown it. Only
// the shown size sets are named; a held-back set's name, sizes and even their number stay on
// the server, since a client that knew them could fit a kernel to them.
#pragma once

#include <string>

#include "serve/task_catalog.h"

namespace ptxforge::serve {

// {"tasks": [{"name", "level", "summary"}, ...]} in the catalog's order.
std::string task_list_json(const TaskCatalog& tasks);
// {"name", "prompt", "shown_size_sets", "required", "baseline"} for one entry.
std::string task_json(const TaskCatalog::Entry& entry);
// The description's first sentence, on one line: the list's summary.
std::string task_summary(const task::Task& t);

}  // namespace ptxforge::serve
