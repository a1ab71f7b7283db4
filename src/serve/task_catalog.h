// The tasks a service answers for, read once at start: the shipped tasks and every task folder
// under the server's --tasks folders. A client names a task; the name is looked up here and
// nowhere else, so no client text ever becomes a path (a name with "..", a leading "/" or a
// character outside [A-Za-z0-9_./-] is simply not found).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::serve {

class TaskCatalog {
 public:
  struct Entry {
    std::string name;  // "level1/vector_add" (relative to its root), the name clients see
    std::string dir;   // the folder holding task.toml
    task::Task task;   // loaded and checked at start
  };
  // The shipped tasks (task::list_task_dirs), then each folder under `extra_dirs` that holds a
  // task.toml (the folder itself or its descendants, two levels deep). A task that fails to load
  // is an error naming it; two tasks with one name are an error.
  static Result<TaskCatalog> load(const std::vector<std::string>& extra_dirs);
  // Tests: a catalog over given entries.
  explicit TaskCatalog(std::vector<Entry> entries);

  const std::vector<Entry>& entries() const { return *entries_; }
  // The entry for a client's name: the full name ("level1/vector_add") or, where it is unique,
  // the last part ("vector_add"); nullptr when unknown or ambiguous. No file system access.
  const Entry* find(std::string_view name) const;

 private:
  std::shared_ptr<const std::vector<Entry>> entries_;
};

}  // namespace ptxforge::serve
