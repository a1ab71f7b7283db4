#include "bench/store.h"

#include <sqlite3.h>

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/session_reader.h"
#include "eval/record_json.h"
#include "task/seeds.h"
#include "util/text.h"

namespace ptxforge::bench {

using nlohmann::json;

namespace {

// Version 2. Every table but meta and cells is keyed by (cell, sample, round).
const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells(
  id TEXT PRIMARY KEY, idx INTEGER NOT NULL, model TEXT NOT NULL, model_spec TEXT NOT NULL, task TEXT NOT NULL,
  level INTEGER NOT NULL, has_library INTEGER NOT NULL, mode TEXT NOT NULL, knowledge TEXT NOT NULL, seed TEXT NOT NULL,
  samples INTEGER NOT NULL, rounds INTEGER NOT NULL, status TEXT NOT NULL, finished INTEGER NOT NULL, session TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, priced INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rounds(
  cell TEXT NOT NULL, sample INTEGER NOT NULL, round INTEGER NOT NULL, verdict TEXT NOT NULL, stage TEXT NOT NULL,
  extracted INTEGER NOT NULL, checked INTEGER NOT NULL, assembled INTEGER NOT NULL, passed INTEGER NOT NULL,
  gpu_verified INTEGER NOT NULL, no_gpu INTEGER NOT NULL, speedup_vs_nvcc REAL NOT NULL, speedup_vs_library REAL NOT NULL,
  registers INTEGER NOT NULL, spill_bytes INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
  cached INTEGER NOT NULL, seed TEXT NOT NULL, gpu INTEGER NOT NULL, failure_kind TEXT NOT NULL, error_ids TEXT NOT NULL,
  families INTEGER NOT NULL, in_sass INTEGER NOT NULL, executed INTEGER NOT NULL, record TEXT NOT NULL,
  on_engine INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(cell, sample, round));
CREATE TABLE IF NOT EXISTS stages(cell TEXT, sample INTEGER, round INTEGER, stage TEXT, status TEXT, seconds REAL, summary TEXT);
CREATE TABLE IF NOT EXISTS timings(cell TEXT, sample INTEGER, round INTEGER, size_set TEXT, candidate_ms REAL,
  reference_ms REAL, library TEXT, library_ms REAL, trials INTEGER);
CREATE TABLE IF NOT EXISTS resources(cell TEXT, sample INTEGER, round INTEGER, function TEXT, registers INTEGER,
  shared_bytes INTEGER, spill_stores INTEGER, spill_loads INTEGER);
CREATE TABLE IF NOT EXISTS proofs(cell TEXT, sample INTEGER, round INTEGER, family TEXT, in_ptx INTEGER, in_sass INTEGER,
  executed INTEGER, executed_warps INTEGER);
CREATE TABLE IF NOT EXISTS diagnostics(cell TEXT, sample INTEGER, round INTEGER, check_id TEXT, severity TEXT, line INTEGER,
  message TEXT);
)sql";

const std::vector<std::string> kChildTables = {"rounds", "stages", "timings", "resources", "proofs", "diagnostics"};

// A prepared statement that finalizes itself; binds by position from 1.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) { ok_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) == SQLITE_OK; }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return ok_; }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, long long v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  // Binds each value in turn from position 1.
  template <typename... T>
  Stmt& all(const T&... v) {
    int i = 1;
    (bind_one(i++, v), ...);
    return *this;
  }
  int step() { return sqlite3_step(s_); }
  bool run() {
    int rc = sqlite3_step(s_);
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    return rc == SQLITE_DONE;
  }
  std::string text(int c) const {
    auto p = sqlite3_column_text(s_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(s_, c)) : std::string();
  }
  long long integer(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  sqlite3_stmt* raw() const { return s_; }

 private:
  void bind_one(int i, const std::string& v) { bind(i, v); }
  void bind_one(int i, const char* v) { bind(i, std::string(v)); }
  void bind_one(int i, bool v) { bind(i, static_cast<long long>(v)); }
  void bind_one(int i, int v) { bind(i, static_cast<long long>(v)); }
  void bind_one(int i, long v) { bind(i, static_cast<long long>(v)); }
  void bind_one(int i, long long v) { bind(i, v); }
  void bind_one(int i, unsigned long v) { bind(i, static_cast<long long>(v)); }
  void bind_one(int i, unsigned long long v) { bind(i, static_cast<long long>(v)); }
  void bind_one(int i, double v) { bind(i, v); }
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

std::string order_of(const std::string& table) {
  if (table == "meta") return "key";
  if (table == "cells") return "idx";
  return "cell, sample, round, rowid";
}

}  // namespace

Result<Store> Store::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Error{fmt::format("cannot open the results store {}: {}", path, why)};
  }
  sqlite3_busy_timeout(db, 10000);
  Store s(db);
  if (auto st = s.exec(kSchema); !st) return Error{fmt::format("{} is not a results store: {}", path, st.error().message)};
  auto v = s.meta("schema_version");
  if (v && *v == "1") {  // a bench begun before rounds.on_engine: its rounds ran before the CPU engine existed
    if (auto st = s.exec("ALTER TABLE rounds ADD COLUMN on_engine INTEGER NOT NULL DEFAULT 0"); !st)
      return Error{fmt::format("cannot upgrade the results store {}: {}", path, st.error().message)};
    v.reset();
  }
  if (!v) {
    if (auto st = s.set_meta("schema_version", std::to_string(kSchemaVersion)); !st) return st.error();
  } else if (*v != std::to_string(kSchemaVersion)) {
    return Error{fmt::format("{} has schema version {}; this ptxforge reads version {}", path, *v, kSchemaVersion)};
  }
  return s;
}

Store::~Store() {
  if (db_) sqlite3_close(db_);
}

Status Store::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : "unknown error";
    sqlite3_free(err);
    return Error{why};
  }
  return ok_status();
}

Status Store::set_meta(const std::string& key, const std::string& value) {
  Stmt s(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
  if (!s.ok() || !s.all(key, value).run()) return Error{fmt::format("writing the store: {}", sqlite3_errmsg(db_))};
  return ok_status();
}

std::optional<std::string> Store::meta(const std::string& key) const {
  Stmt s(db_, "SELECT value FROM meta WHERE key = ?");
  s.all(key);
  if (s.ok() && s.step() == SQLITE_ROW) return s.text(0);
  return std::nullopt;
}

Status Store::put_cell(const CellRow& c, const std::vector<RoundRow>& rounds) {
  if (auto st = exec("BEGIN IMMEDIATE"); !st) return st;
  auto fail = [&](const char* what) -> Status {
    std::string why = sqlite3_errmsg(db_);
    (void)exec("ROLLBACK");
    return Error{fmt::format("writing {} of cell {} to the store: {}", what, c.id, why)};
  };
  for (auto& t : kChildTables) {
    Stmt del(db_, "DELETE FROM " + t + " WHERE cell = ?");
    if (!del.ok() || !del.all(c.id).run()) return fail(t.c_str());
  }
  Stmt cell(db_, "INSERT OR REPLACE INTO cells VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!cell.ok() || !cell.all(c.id, c.index, c.model, c.model_spec, c.task, c.level, c.has_library, c.mode, c.knowledge, c.seed,
                              c.samples, c.rounds, c.status, c.finished, c.session, c.prompt_tokens, c.completion_tokens,
                              c.cost_usd, c.priced)
                           .run())
    return fail("the cell");
  Stmt round(db_, "INSERT INTO rounds VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  Stmt stage(db_, "INSERT INTO stages VALUES(?,?,?,?,?,?,?)");
  Stmt timing(db_, "INSERT INTO timings VALUES(?,?,?,?,?,?,?,?,?)");
  Stmt resource(db_, "INSERT INTO resources VALUES(?,?,?,?,?,?,?,?)");
  Stmt proof(db_, "INSERT INTO proofs VALUES(?,?,?,?,?,?,?,?)");
  Stmt diag(db_, "INSERT INTO diagnostics VALUES(?,?,?,?,?,?,?)");
  if (!round.ok() || !stage.ok() || !timing.ok() || !resource.ok() || !proof.ok() || !diag.ok()) return fail("statements");
  for (auto& r : rounds) {
    const auto& s = r.summary;
    std::string ids;
    for (auto& id : r.error_ids) ids += (ids.empty() ? "" : " ") + id;
    if (!round.all(c.id, s.sample, s.round, s.verdict, s.stage, s.extracted, r.checked, s.assembled, s.passed, s.gpu_verified,
                   s.no_gpu, s.speedup_vs_nvcc, s.speedup_vs_library, s.registers, s.spill_bytes, s.prompt_tokens,
                   s.completion_tokens, s.cached, task::seed_text(s.seed), s.gpu, r.failure_kind, ids, r.families, r.in_sass,
                   r.executed, r.record, s.on_engine)
             .run())
      return fail("a round");
    if (r.record.empty()) continue;
    auto rec = eval::record_from_json(r.record);
    if (!rec) continue;  // a damaged result.json: the round's summary is all there is
    auto tri = [](const std::optional<bool>& v) { return v ? static_cast<long long>(*v) : -1LL; };
    for (auto& st : rec->stages)
      if (!stage.all(c.id, s.sample, s.round, std::string(eval::to_string(st.id)), std::string(eval::stage_status_name(st.status)),
                     st.seconds, st.summary)
               .run())
        return fail("a stage");
    if (rec->time)
      for (auto& t : rec->time->sizes)
        if (!timing.all(c.id, s.sample, s.round, t.size_set, t.candidate.median_ms, t.reference.median_ms, t.library_name,
                        t.library ? t.library->median_ms : 0.0, t.candidate.trials)
                 .run())
          return fail("a timing");
    for (auto& f : rec->resources)
      if (!resource.all(c.id, s.sample, s.round, f.name, f.registers, f.shared_bytes, f.spill_stores, f.spill_loads).run())
        return fail("resources");
    for (auto& p : rec->proofs)
      if (!proof.all(c.id, s.sample, s.round, p.family, p.in_ptx, tri(p.in_sass), tri(p.executed),
                     static_cast<long long>(p.executed_warps))
               .run())
        return fail("a proof");
    for (auto& d : rec->diagnostics.list())
      if (!diag.all(c.id, s.sample, s.round, d.check_id, std::string(severity_name(d.severity)), static_cast<long long>(d.loc.line),
                    d.message)
               .run())
        return fail("a diagnostic");
  }
  return exec("COMMIT");
}

Result<std::vector<CellRow>> Store::cells() const {
  Stmt s(db_, "SELECT * FROM cells ORDER BY idx");
  if (!s.ok()) return Error{sqlite3_errmsg(db_)};
  std::vector<CellRow> out;
  while (s.step() == SQLITE_ROW) {
    CellRow c;
    c.id = s.text(0);
    c.index = static_cast<int>(s.integer(1));
    c.model = s.text(2);
    c.model_spec = s.text(3);
    c.task = s.text(4);
    c.level = static_cast<int>(s.integer(5));
    c.has_library = s.integer(6) != 0;
    c.mode = s.text(7);
    c.knowledge = s.text(8);
    c.seed = s.text(9);
    c.samples = static_cast<int>(s.integer(10));
    c.rounds = static_cast<int>(s.integer(11));
    c.status = s.text(12);
    c.finished = s.integer(13) != 0;
    c.session = s.text(14);
    c.prompt_tokens = s.integer(15);
    c.completion_tokens = s.integer(16);
    c.cost_usd = s.real(17);
    c.priced = s.integer(18) != 0;
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<CellRow> Store::cell(const std::string& id) const {
  auto all = cells();
  if (!all) return std::nullopt;
  for (auto& c : *all)
    if (c.id == id) return c;
  return std::nullopt;
}

Result<std::vector<RoundRow>> Store::rounds() const {
  Stmt s(db_, "SELECT r.* FROM rounds r JOIN cells c ON c.id = r.cell ORDER BY c.idx, r.sample, r.round");
  if (!s.ok()) return Error{sqlite3_errmsg(db_)};
  std::vector<RoundRow> out;
  while (s.step() == SQLITE_ROW) {
    RoundRow r;
    r.cell = s.text(0);
    auto& m = r.summary;
    m.sample = static_cast<int>(s.integer(1));
    m.round = static_cast<int>(s.integer(2));
    m.verdict = s.text(3);
    m.stage = s.text(4);
    m.extracted = s.integer(5) != 0;
    r.checked = s.integer(6) != 0;
    m.assembled = s.integer(7) != 0;
    m.passed = s.integer(8) != 0;
    m.gpu_verified = s.integer(9) != 0;
    m.no_gpu = s.integer(10) != 0;
    m.speedup_vs_nvcc = s.real(11);
    m.speedup_vs_library = s.real(12);
    m.registers = static_cast<int>(s.integer(13));
    m.spill_bytes = static_cast<int>(s.integer(14));
    m.prompt_tokens = s.integer(15);
    m.completion_tokens = s.integer(16);
    m.cached = s.integer(17) != 0;
    if (auto seed = task::parse_seed(s.text(18))) m.seed = *seed;
    m.gpu = static_cast<int>(s.integer(19));
    r.failure_kind = s.text(20);
    const std::string ids = s.text(21);  // split's views point into it: it must outlive them
    for (auto id : split(ids, ' '))
      if (!id.empty()) r.error_ids.emplace_back(id);
    r.families = static_cast<int>(s.integer(22));
    r.in_sass = static_cast<int>(s.integer(23));
    r.executed = static_cast<int>(s.integer(24));
    r.record = s.text(25);
    m.on_engine = s.integer(26) != 0;
    out.push_back(std::move(r));
  }
  return out;
}

const std::vector<std::string>& Store::tables() {
  static const std::vector<std::string> t = {"meta", "cells", "rounds", "stages", "timings", "resources", "proofs", "diagnostics"};
  return t;
}

Result<std::vector<std::string>> Store::export_jsonl(const std::string& table) const {
  if (std::find(tables().begin(), tables().end(), table) == tables().end())
    return Error{fmt::format("no table '{}' (tables: meta, cells, rounds, stages, timings, resources, proofs, diagnostics)", table)};
  Stmt s(db_, fmt::format("SELECT * FROM {} ORDER BY {}", table, order_of(table)));
  if (!s.ok()) return Error{sqlite3_errmsg(db_)};
  std::vector<std::string> out;
  int n = sqlite3_column_count(s.raw());
  while (s.step() == SQLITE_ROW) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();  // the table's column order
    for (int c = 0; c < n; ++c) {
      std::string name = sqlite3_column_name(s.raw(), c);
      switch (sqlite3_column_type(s.raw(), c)) {
        case SQLITE_INTEGER: row[name] = s.integer(c); break;
        case SQLITE_FLOAT: row[name] = s.real(c); break;
        case SQLITE_NULL: row[name] = nullptr; break;
        default: row[name] = s.text(c);
      }
    }
    out.push_back(row.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  return out;
}

Result<std::string> Store::export_csv(const std::string& table) const {
  auto rows = export_jsonl(table);
  if (!rows) return rows.error();
  std::string out;
  auto field = [](const nlohmann::ordered_json& v) {
    std::string s = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  bool header = false;
  for (auto& line : *rows) {
    auto row = nlohmann::ordered_json::parse(line);
    if (!header) {
      std::string h;
      for (auto& [k, _] : row.items()) h += (h.empty() ? "" : ",") + k;
      out += h + "\n";
      header = true;
    }
    std::string l;
    bool first = true;
    for (auto& [_, v] : row.items()) {
      l += (first ? "" : ",") + field(v);
      first = false;
    }
    out += l + "\n";
  }
  return out;
}

namespace {

// What the reports need from a round's run record.
void fill_from_record(RoundRow& row, const eval::RunRecord& rec) {
  if (auto* check = rec.find_stage(eval::StageId::check)) row.checked = check->status == eval::StageStatus::passed;
  if (rec.failure) row.failure_kind = std::string(gpu::to_string(rec.failure->kind));
  for (auto& d : rec.diagnostics.list())
    if (d.severity == Severity::error) row.error_ids.push_back(d.check_id);
  for (auto& p : rec.proofs) {
    ++row.families;
    if (p.in_sass == true) ++row.in_sass;
    if (p.executed == true) ++row.executed;
  }
}

}  // namespace

std::vector<RoundRow> read_session_rounds(const std::string& cell_id, const std::string& session_dir,
                                          std::vector<std::string>* issues) {
  std::vector<RoundRow> out;
  auto reader = agent::SessionReader::open(session_dir);
  if (!reader) {
    if (issues) issues->push_back(reader.error().message);
    return out;
  }
  for (auto& t : reader->trajectories()) {
    if (issues)
      for (auto& i : t.issues) issues->push_back(i.message);
    for (auto& round : t.rounds) {
      RoundRow row;
      row.cell = cell_id;
      row.summary = round.summary;
      if (auto text = reader->record_text(round)) {
        row.record = *text;
        // A damaged record: the round's summary is all there is.
        if (auto rec = eval::record_from_json(*text)) fill_from_record(row, *rec);
        else if (issues) issues->push_back(fmt::format("{}: {}", round.dir, rec.error().message));
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace ptxforge::bench
