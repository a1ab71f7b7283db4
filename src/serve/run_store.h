// The service's runs on disk (SQLite): every accepted run is a row before the client hears
// of it, and its record is written when it is done, so a server that is killed loses nothing
// and resumes its unfinished runs on the next start. One connection behind a mutex: SQLite
// serialises writers anyway, and a run's row is written three times in its life.
//
// Table runs: seq (INTEGER PRIMARY KEY AUTOINCREMENT: the order runs are taken in), id (TEXT
// UNIQUE: "r_" and 32 hex digits of 128 random bits, so one client cannot reach another's runs
// by counting), client, idempotency_key, task, language, candidate, options_json, state
// (queued | running | done), device, attempts (how many times a run was started), record_json,
// created_ms, started_ms, finished_ms (Unix ms, 0 = not yet). (client, idempotency_key) is
// unique where the key is not empty. PRAGMA application_id marks the file as ours and
// user_version holds the schema version.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "serve/service.h"
#include "util/result.h"

struct sqlite3;

namespace ptxforge::serve {

inline constexpr int kRunStoreSchemaVersion = 1;

struct StoredRun {
  int64_t seq = 0;
  std::string id;
  RunRequest request;  // as submitted; options read back into eval::RunOptions
  RunState state = RunState::queued;
  std::string device;  // the slot that last started it ("gpu0", "cpu1")
  int attempts = 0;    // times started
  std::string record_json;
  int64_t created_ms = 0, started_ms = 0, finished_ms = 0;

  RunView view() const;
};

// The options a request sets, as the store's JSON: device, arch, time, seeds, seed (a decimal
// string: JSON readers keep 53 bits), sanitize, prove_ncu, verify_timeout_ms. The reader
// rejects what the writer would not write.
std::string options_to_json(const eval::RunOptions& o);
Result<eval::RunOptions> options_from_json(const std::string& text);

// A fresh run id: "r_" and 32 lowercase hex digits from the kernel's random source.
std::string new_run_id();

class RunStore {
 public:
  // Opens or creates the database. An error names the file where it is not SQLite, belongs to
  // another program, or was written by a newer schema.
  static Result<std::unique_ptr<RunStore>> open(const std::string& path);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  struct Inserted {
    std::vector<StoredRun> runs;  // in request order: the new row, or the earlier run of a replayed key
    std::vector<bool> replayed;
    bool admitted = true;  // false: `admit` said no, nothing was stored
  };
  // Called inside the transaction with the requests that would become new rows (replays
  // left out); returning false rolls everything back. The scheduler's queue limits.
  using Admit = std::function<bool(const std::vector<const RunRequest*>& fresh)>;
  // One transaction: each request is either the run its (client, key) already has, or a new
  // queued row. Two requests of one batch with one key: the second replays the first.
  Result<Inserted> insert_batch(const std::vector<RunRequest>& requests, int64_t now_ms, const Admit& admit = {});
  // A run starts on `device`: state running, attempts + 1. Not for a run that is done.
  Status mark_running(const std::string& id, const std::string& device, int64_t now_ms);
  Status mark_done(const std::string& id, const std::string& record_json, int64_t now_ms);
  // Every run left running (its server stopped under it) is queued again; returns how many.
  Result<int> requeue_running();
  Result<std::optional<StoredRun>> get(const std::string& id);
  // Queued and running runs, oldest first.
  Result<std::vector<StoredRun>> unfinished();
  struct Counts {
    int64_t queued = 0, running = 0, done = 0;
  };
  Result<Counts> counts();

 private:
  explicit RunStore(sqlite3* db) : db_(db) {}
  Status exec(const char* sql);
  sqlite3* db_;
  std::mutex m_;
};

}  // namespace ptxforge::serve
