// JSON forms of results for --json / --format json (nlohmann stays inside the CLI).
#pragma once

#include <nlohmann/json.hpp>

#include "toolchain/ptxas.h"
#include "util/diagnostic.h"

namespace ptxforge::cli {

// A file record: {"file", "errors", "warnings", "diagnostics": [...]}, every diagnostic
// carrying its file too, so a consumer may flatten the records without losing it.
inline nlohmann::json diagnostics_json(const Diagnostics& diags, const SourceText& src) {
  nlohmann::json j = nlohmann::json::parse(render_json(diags, src));
  for (auto& d : j["diagnostics"]) d["file"] = src.name();
  return j;
}

// The record of a file that could not be read: the same shape, one error without a line.
inline nlohmann::json unreadable_json(const std::string& name, const std::string& message) {
  nlohmann::json d = {{"file", name}, {"severity", "error"}, {"line", 0},         {"column", 0},
                      {"length", 0},   {"check", "unreadable"}, {"message", message}, {"source_line", ""},
                      {"notes", nlohmann::json::array()}};
  return {{"file", name}, {"errors", 1}, {"warnings", 0}, {"readable", false}, {"diagnostics", {d}}};
}

inline nlohmann::json assemble_json(const toolchain::AssembleResult& r, const std::string& arch, const SourceText& src) {
  nlohmann::json j = diagnostics_json(r.diags, src);
  j["ok"] = r.ok;
  j["backend"] = r.backend;
  j["arch"] = arch;
  j["seconds"] = r.seconds;
  j["info_codes"] = r.info_codes;
  j["cubin_bytes"] = r.cubin.size();
  auto& fs = j["functions"] = nlohmann::json::array();
  for (auto& f : r.functions)
    fs.push_back({{"name", f.name}, {"entry", f.is_entry}, {"registers", f.registers}, {"barriers", f.barriers},
                  {"shared_bytes", f.shared_bytes}, {"const_bytes", f.const_bytes}, {"local_bytes", f.local_bytes},
                  {"stack_frame", f.stack_frame}, {"spill_stores", f.spill_stores}, {"spill_loads", f.spill_loads},
                  {"cumulative_stack", f.cumulative_stack}, {"compile_ms", f.compile_ms}});
  return j;
}

}  // namespace ptxforge::cli
