// A response cache keyed on (provider, model, messages, parameters, sample): rerunning a
// session asks no model twice, so reruns are reproducible and free. One JSON file per reply
// under <cache dir>/llm/. Keys and headers are not part of the key and never stored.
#pragma once

#include <optional>
#include <string>

#include "llm/provider.h"

namespace ptxforge::llm {

class ResponseCache {
 public:
  explicit ResponseCache(std::string dir);  // "" disables the cache
  std::string key(const Provider& p, const Request& req) const;
  std::optional<Reply> get(const std::string& key) const;
  void put(const std::string& key, const Reply& r) const;

 private:
  std::string dir_;
};

// Asks the cache first, then the provider; stores fresh replies (not manual/replay ones).
Result<Reply> complete_cached(Provider& p, const Request& req, const ResponseCache& cache);

}  // namespace ptxforge::llm
