// JSON forms of results for --json / --format json (nlohmann stays inside the CLI).
#pragma once

#include <nlohmann/json.hpp>

#include "toolchain/ptxas.h"
#include "util/diagnostic.h"

namespace ptxforge::cli {

inline nlohmann::json diagnostics_json(const Diagnostics& diags, const SourceText& src) {
  return nlohmann::json::parse(render_json(diags, src));
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
