#include "llm/cache.h"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/text.h"

namespace ptxforge::llm {

using nlohmann::json;

ResponseCache::ResponseCache(std::string dir) : dir_(std::move(dir)) {
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
  }
}

std::string ResponseCache::key(const Provider& p, const Request& req) const {
  json k = {{"provider", p.kind()}, {"model", p.model()}, {"temperature", req.temperature},
            {"max_tokens", req.max_tokens}, {"sample", req.sample}};
  json messages = json::array();
  for (auto& m : req.messages) messages.push_back({m.role, m.content});
  k["messages"] = messages;
  std::string text = k.dump();
  return fmt::format("{:016x}{:016x}", fnv1a(text), fnv1a(text, 0x84222325cbf29ce4ull));
}

std::optional<Reply> ResponseCache::get(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  auto text = read_file(dir_ + "/" + key + ".json");
  if (!text) return std::nullopt;
  try {
    json j = json::parse(*text);
    Reply r;
    r.text = j.at("text");
    r.usage.prompt_tokens = j.value("prompt_tokens", 0L);
    r.usage.completion_tokens = j.value("completion_tokens", 0L);
    r.truncated = j.value("truncated", false);
    r.from_cache = true;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is a miss
  }
}

void ResponseCache::put(const std::string& key, const Reply& r) const {
  if (dir_.empty()) return;
  json j = {{"text", r.text}, {"prompt_tokens", r.usage.prompt_tokens}, {"completion_tokens", r.usage.completion_tokens},
            {"truncated", r.truncated}};
  std::string path = dir_ + "/" + key + ".json";
  std::string tmp = path + ".tmp";
  if (write_file(tmp, j.dump())) {
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
  }
}

Result<Reply> complete_cached(Provider& p, const Request& req, const ResponseCache& cache) {
  bool cacheable = p.kind() != "manual" && p.kind() != "replay";
  std::string key = cacheable ? cache.key(p, req) : "";
  if (cacheable)
    if (auto hit = cache.get(key)) return *hit;
  auto r = p.complete(req);
  if (r && cacheable && !r->pending) cache.put(key, *r);
  return r;
}

}  // namespace ptxforge::llm
