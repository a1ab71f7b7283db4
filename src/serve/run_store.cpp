// The run store over SQLite (run_store.h). WAL, so readers (GET) do not wait on the writer,
// and synchronous=NORMAL: a commit survives the process being killed at any point, which is
// the failure the service promises to survive (a power cut may lose the last commits).
#include "serve/run_store.h"

#include <sqlite3.h>

#include <cstdio>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "task/seeds.h"

namespace ptxforge::serve {

namespace {

using nlohmann::json;

// "ptfs": a database of another program (a bench store) is refused, not written into.
constexpr int kApplicationId = 0x70746673;

const char* kSchema = R"sql(
CREATE TABLE runs(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  client TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  task TEXT NOT NULL,
  language TEXT NOT NULL,
  candidate TEXT NOT NULL,
  options_json TEXT NOT NULL,
  state TEXT NOT NULL,
  device TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  record_json TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  started_ms INTEGER NOT NULL DEFAULT 0,
  finished_ms INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX runs_key ON runs(client, idempotency_key) WHERE idempotency_key != '';
CREATE INDEX runs_state ON runs(state, seq);
)sql";

const char* kColumns =
    "seq, id, client, idempotency_key, task, language, candidate, options_json, state, device, attempts, record_json, "
    "created_ms, started_ms, finished_ms";

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK) s_ = nullptr;
  }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return s_ != nullptr; }
  std::string error() const { return sqlite3_errmsg(db_); }
  void bind(int i, const std::string& v) { sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  int step() { return sqlite3_step(s_); }
  std::string text(int c) const {
    auto p = sqlite3_column_text(s_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(s_, c)) : std::string();
  }
  int64_t integer(int c) const { return sqlite3_column_int64(s_, c); }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

std::optional<RunState> state_from(std::string_view s) {
  for (auto st : {RunState::queued, RunState::running, RunState::done})
    if (to_string(st) == s) return st;
  return std::nullopt;
}

Result<StoredRun> row_of(const Stmt& s) {
  StoredRun r;
  r.seq = s.integer(0);
  r.id = s.text(1);
  r.request.client = s.text(2);
  r.request.idempotency_key = s.text(3);
  r.request.task = s.text(4);
  std::string lang = s.text(5);
  if (lang == "ptx") r.request.language = Language::ptx;
  else if (lang == "cuda") r.request.language = Language::cuda;
  else return Error{fmt::format("run {}: unknown language '{}'", r.id, lang)};
  r.request.candidate = s.text(6);
  auto opts = options_from_json(s.text(7));
  if (!opts) return Error{fmt::format("run {}: {}", r.id, opts.error().message)};
  r.request.options = *opts;
  auto st = state_from(s.text(8));
  if (!st) return Error{fmt::format("run {}: unknown state '{}'", r.id, s.text(8))};
  r.state = *st;
  r.device = s.text(9);
  r.attempts = static_cast<int>(s.integer(10));
  r.record_json = s.text(11);
  r.created_ms = s.integer(12);
  r.started_ms = s.integer(13);
  r.finished_ms = s.integer(14);
  return r;
}

}  // namespace

RunView StoredRun::view() const {
  RunView v;
  v.id = id;
  v.state = state;
  v.task = request.task;
  v.created_ms = created_ms;
  v.started_ms = started_ms;
  v.finished_ms = finished_ms;
  v.device = device;
  v.client = request.client;
  if (state == RunState::done) v.record_json = record_json;
  return v;
}

std::string options_to_json(const eval::RunOptions& o) {
  json j = {{"device", std::string(eval::to_string(o.device))},
            {"arch", o.arch},
            {"time", o.time},
            {"seeds", o.seeds},
            {"seed", o.seed ? json(task::seed_text(*o.seed)) : json(nullptr)},
            {"sanitize", o.sanitize},
            {"prove_ncu", o.prove_ncu},
            {"verify_timeout_ms", o.verify_timeout.count()}};
  return j.dump();
}

Result<eval::RunOptions> options_from_json(const std::string& text) {
  eval::RunOptions o;
  try {
    json j = json::parse(text);
    auto device = eval::device_from_string(j.at("device").get<std::string>());
    if (!device) return Error{fmt::format("options: unknown device '{}'", j.at("device").get<std::string>())};
    o.device = *device;
    o.arch = j.at("arch").get<std::string>();
    o.time = j.at("time").get<bool>();
    o.seeds = j.at("seeds").get<int>();
    if (!j.at("seed").is_null()) {
      auto seed = task::parse_seed(j.at("seed").get<std::string>());
      if (!seed) return Error{"options: " + seed.error().message};
      o.seed = *seed;
    }
    o.sanitize = j.at("sanitize").get<bool>();
    o.prove_ncu = j.at("prove_ncu").get<bool>();
    o.verify_timeout = std::chrono::milliseconds(j.at("verify_timeout_ms").get<int64_t>());
  } catch (const std::exception& e) {
    return Error{fmt::format("options: {}", e.what())};
  }
  return o;
}

std::string new_run_id() {
  unsigned char bytes[16];
  bool read = false;
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    read = std::fread(bytes, 1, sizeof bytes, f) == sizeof bytes;
    std::fclose(f);
  }
  if (!read) {
    std::random_device rd;  // the kernel's source too, on Linux
    for (auto& b : bytes) b = static_cast<unsigned char>(rd());
  }
  std::string id = "r_";
  for (unsigned char b : bytes) id += fmt::format("{:02x}", b);
  return id;
}

Result<std::unique_ptr<RunStore>> RunStore::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Error{fmt::format("cannot open the run database {}: {}", path, why)};
  }
  std::unique_ptr<RunStore> s(new RunStore(db));
  sqlite3_busy_timeout(db, 10000);
  auto pragma = [&](const char* name) -> Result<int64_t> {
    Stmt q(db, fmt::format("PRAGMA {}", name));
    if (!q.ok()) return Error{q.error()};
    if (q.step() != SQLITE_ROW) return Error{q.error()};
    return q.integer(0);
  };
  // The first read is where SQLite finds out that a file is not a database.
  auto app = pragma("application_id");
  if (!app) return Error{fmt::format("{} is not a ptxforge serve database: {}", path, app.error().message)};
  auto version = pragma("user_version");
  if (!version) return Error{fmt::format("{} is not a ptxforge serve database: {}", path, version.error().message)};
  auto tables = pragma("schema_version");  // 0 for a file with nothing in it yet
  if (!tables) return Error{fmt::format("cannot read {}: {}", path, tables.error().message)};
  bool empty = *tables == 0;
  if (!empty && *app != kApplicationId)
    return Error{fmt::format("{} is an SQLite database of another program, not a ptxforge serve database", path)};
  if (*version > kRunStoreSchemaVersion)
    return Error{fmt::format("{} was written by a newer ptxforge (schema version {}; this one reads version {})", path,
                             *version, kRunStoreSchemaVersion)};
  if (auto st = s->exec("PRAGMA journal_mode = WAL"); !st) return Error{fmt::format("{}: {}", path, st.error().message)};
  if (auto st = s->exec("PRAGMA synchronous = NORMAL"); !st) return Error{fmt::format("{}: {}", path, st.error().message)};
  if (empty) {
    std::string create = fmt::format("BEGIN IMMEDIATE; {} PRAGMA application_id = {}; PRAGMA user_version = {}; COMMIT;",
                                     kSchema, kApplicationId, kRunStoreSchemaVersion);
    if (auto st = s->exec(create.c_str()); !st) {
      (void)s->exec("ROLLBACK");
      return Error{fmt::format("cannot create the run database {}: {}", path, st.error().message)};
    }
  }
  return s;
}

RunStore::~RunStore() { sqlite3_close(db_); }

Status RunStore::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    return Error{why};
  }
  return ok_status();
}

Result<RunStore::Inserted> RunStore::insert_batch(const std::vector<RunRequest>& requests, int64_t now_ms, const Admit& admit) {
  std::lock_guard lock(m_);
  if (auto st = exec("BEGIN IMMEDIATE"); !st) return Error{"cannot store the runs: " + st.error().message};
  auto fail = [&](std::string why) -> Result<Inserted> {
    (void)exec("ROLLBACK");
    return Error{"cannot store the runs: " + why};
  };
  Inserted out;
  // First the replays, so that `admit` sees only what would be new.
  std::vector<std::optional<StoredRun>> earlier(requests.size());
  std::vector<const RunRequest*> fresh;
  std::vector<size_t> first_of_key(requests.size(), SIZE_MAX);  // an earlier request of this batch with the key
  for (size_t i = 0; i < requests.size(); ++i) {
    const RunRequest& q = requests[i];
    if (!q.idempotency_key.empty()) {
      Stmt find(db_, fmt::format("SELECT {} FROM runs WHERE client = ?1 AND idempotency_key = ?2", kColumns));
      if (!find.ok()) return fail(find.error());
      find.bind(1, q.client);
      find.bind(2, q.idempotency_key);
      if (find.step() == SQLITE_ROW) {
        auto row = row_of(find);
        if (!row) return fail(row.error().message);
        earlier[i] = *row;
        continue;
      }
      for (size_t k = 0; k < i; ++k)
        if (!earlier[k] && first_of_key[k] == SIZE_MAX && requests[k].client == q.client &&
            requests[k].idempotency_key == q.idempotency_key) {
          first_of_key[i] = k;
          break;
        }
      if (first_of_key[i] != SIZE_MAX) continue;
    }
    fresh.push_back(&q);
  }
  if (admit && !admit(fresh)) {
    (void)exec("ROLLBACK");
    out.admitted = false;
    return out;
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (earlier[i]) {
      out.runs.push_back(*earlier[i]);
      out.replayed.push_back(true);
      continue;
    }
    if (first_of_key[i] != SIZE_MAX) {
      out.runs.push_back(out.runs[first_of_key[i]]);
      out.replayed.push_back(true);
      continue;
    }
    StoredRun r;
    r.id = new_run_id();
    r.request = requests[i];
    r.created_ms = now_ms;
    Stmt ins(db_,
             "INSERT INTO runs(id, client, idempotency_key, task, language, candidate, options_json, state, created_ms) "
             "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8)");
    if (!ins.ok()) return fail(ins.error());
    ins.bind(1, r.id);
    ins.bind(2, r.request.client);
    ins.bind(3, r.request.idempotency_key);
    ins.bind(4, r.request.task);
    ins.bind(5, std::string(to_string(r.request.language)));
    ins.bind(6, r.request.candidate);
    ins.bind(7, options_to_json(r.request.options));
    ins.bind(8, now_ms);
    if (ins.step() != SQLITE_DONE) return fail(ins.error());
    r.seq = sqlite3_last_insert_rowid(db_);
    out.runs.push_back(std::move(r));
    out.replayed.push_back(false);
  }
  if (auto st = exec("COMMIT"); !st) return fail(st.error().message);
  return out;
}

Status RunStore::mark_running(const std::string& id, const std::string& device, int64_t now_ms) {
  std::lock_guard lock(m_);
  Stmt up(db_, "UPDATE runs SET state = 'running', device = ?2, started_ms = ?3, attempts = attempts + 1 "
               "WHERE id = ?1 AND state != 'done'");
  if (!up.ok()) return Error{up.error()};
  up.bind(1, id);
  up.bind(2, device);
  up.bind(3, now_ms);
  if (up.step() != SQLITE_DONE) return Error{fmt::format("cannot mark run {} running: {}", id, up.error())};
  if (sqlite3_changes(db_) != 1) return Error{fmt::format("run {} is unknown or done", id)};
  return ok_status();
}

Status RunStore::mark_done(const std::string& id, const std::string& record_json, int64_t now_ms) {
  std::lock_guard lock(m_);
  Stmt up(db_, "UPDATE runs SET state = 'done', record_json = ?2, finished_ms = ?3 WHERE id = ?1");
  if (!up.ok()) return Error{up.error()};
  up.bind(1, id);
  up.bind(2, record_json);
  up.bind(3, now_ms);
  if (up.step() != SQLITE_DONE) return Error{fmt::format("cannot store the record of run {}: {}", id, up.error())};
  if (sqlite3_changes(db_) != 1) return Error{fmt::format("run {} is unknown", id)};
  return ok_status();
}

Result<int> RunStore::requeue_running() {
  std::lock_guard lock(m_);
  if (auto st = exec("UPDATE runs SET state = 'queued' WHERE state = 'running'"); !st)
    return Error{"cannot queue the interrupted runs again: " + st.error().message};
  return sqlite3_changes(db_);
}

Result<std::optional<StoredRun>> RunStore::get(const std::string& id) {
  std::lock_guard lock(m_);
  Stmt q(db_, fmt::format("SELECT {} FROM runs WHERE id = ?1", kColumns));
  if (!q.ok()) return Error{q.error()};
  q.bind(1, id);
  int rc = q.step();
  if (rc == SQLITE_DONE) return std::optional<StoredRun>();
  if (rc != SQLITE_ROW) return Error{fmt::format("cannot read run {}: {}", id, q.error())};
  auto row = row_of(q);
  if (!row) return row.error();
  return std::optional<StoredRun>(std::move(*row));
}

Result<std::vector<StoredRun>> RunStore::unfinished() {
  std::lock_guard lock(m_);
  Stmt q(db_, fmt::format("SELECT {} FROM runs WHERE state != 'done' ORDER BY seq", kColumns));
  if (!q.ok()) return Error{q.error()};
  std::vector<StoredRun> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    auto row = row_of(q);
    if (!row) return row.error();
    out.push_back(std::move(*row));
  }
  if (rc != SQLITE_DONE) return Error{"cannot read the unfinished runs: " + q.error()};
  return out;
}

Result<RunStore::Counts> RunStore::counts() {
  std::lock_guard lock(m_);
  Stmt q(db_, "SELECT state, count(*) FROM runs GROUP BY state");
  if (!q.ok()) return Error{q.error()};
  Counts c;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    std::string st = q.text(0);
    (st == "queued" ? c.queued : st == "running" ? c.running : c.done) = q.integer(1);
  }
  if (rc != SQLITE_DONE) return Error{"cannot count the runs: " + q.error()};
  return c;
}

}  // namespace ptxforge::serve
