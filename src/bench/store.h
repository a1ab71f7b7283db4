// The results store of a bench: one SQLite file (bench.db) holding the bench, its cells (one
// compile session each), every round's summary and run record, stage verdicts, timings,
// resources, proofs, diagnostics, tokens and cost. Written as each cell finishes, in one
// transaction, so a killed bench loses at most the cells that were running. The schema is
// versioned (meta.schema_version) and documented in docs/bench.md; `bench merge` copies the
// cells of several stores into one.
#pragma once

struct sqlite3;  // <sqlite3.h>, included by store.cpp alone

#include <optional>
#include <string>
#include <vector>

#include "agent/session.h"
#include "util/result.h"

namespace ptxforge::bench {

// Version 2 added rounds.on_engine; a version 1 store gains it (0) when opened.
constexpr int kSchemaVersion = 2;

// A cell as the store holds it.
struct CellRow {
  std::string id;
  int index = 0;
  std::string model, model_spec, task, mode, knowledge;
  int level = 1;
  bool has_library = false;
  std::string seed;  // decimal text
  int samples = 1, rounds = 1;
  std::string status;   // the session's status text ("verified", "not verified", ...)
  bool finished = false;  // the session ran to its end (not stopped, not pending)
  std::string session;  // its folder, relative to the store's bench folder
  long prompt_tokens = 0, completion_tokens = 0;
  double cost_usd = 0;
  bool priced = false;
};

// One evaluated round with what the reports need from its run record.
struct RoundRow {
  std::string cell;
  agent::RoundSummary summary;
  bool checked = false;      // the front end passed it
  std::string failure_kind;  // the GPU failure's kind, "" when none
  std::vector<std::string> error_ids;  // diagnostic ids of its errors
  int families = 0, in_sass = 0, executed = 0;  // required families; how many were proven in SASS / executed
  std::string record;        // result.json, as written
};

class Store {
 public:
  // Opens (creating when missing) the store at `path`. A store of another schema version is
  // refused with the reason, never silently rewritten.
  static Result<Store> open(const std::string& path);
  Store(Store&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Store& operator=(Store&&) = delete;
  ~Store();

  Status set_meta(const std::string& key, const std::string& value);
  std::optional<std::string> meta(const std::string& key) const;

  // Replaces everything the store holds about the cell with these rows, in one transaction.
  Status put_cell(const CellRow& cell, const std::vector<RoundRow>& rounds);
  Result<std::vector<CellRow>> cells() const;
  Result<std::vector<RoundRow>> rounds() const;  // every round, by cell index, sample, round
  std::optional<CellRow> cell(const std::string& id) const;

  // Rows of a table as JSON objects (export), in a fixed order.
  Result<std::vector<std::string>> export_jsonl(const std::string& table) const;
  Result<std::string> export_csv(const std::string& table) const;
  static const std::vector<std::string>& tables();

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  Status exec(const std::string& sql) const;
  sqlite3* db_;
};

// The rows of one finished (or stopped) session, read from its folder through
// agent::SessionReader: every round on disk up to the session's round count. What the reader
// found wrong (a gap, a damaged record, a session.json it cannot read) goes to `issues`.
std::vector<RoundRow> read_session_rounds(const std::string& cell_id, const std::string& session_dir,
                                          std::vector<std::string>* issues = nullptr);

}  // namespace ptxforge::bench
