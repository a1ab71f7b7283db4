// The two HTTP APIs: OpenAI's Chat Completions (also spoken by vLLM, llama.cpp's server,
// Ollama and others) and Anthropic's Messages.
#include <chrono>
#include <functional>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "llm/http.h"
#include "llm/provider.h"

namespace ptxforge::llm {

using nlohmann::json;

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The API's own error message when the body has one ({"error": {"message": ...}}).
std::string api_error(const std::string& body) {
  try {
    json j = json::parse(body);
    if (j.contains("error")) {
      const json& e = j["error"];
      if (e.is_object() && e.contains("message")) return e["message"].get<std::string>();
      if (e.is_string()) return e.get<std::string>();
    }
  } catch (const std::exception&) {
  }
  return body.substr(0, 300);
}

Result<Attempt> post(const HttpRequest& req) {
  auto r = http_post(req);
  if (!r) return r.error();
  return Attempt{r->status, std::move(r->body), r->retry_after_s};
}

// The part both APIs share: POST with retries, a non-200 status as an error quoting the API's
// message, and the JSON body handed to `read` (which throws on a malformed reply).
Result<Reply> exchange(const std::string& who, const HttpRequest& http, const ProviderOptions& opts,
                       const std::function<void(const json&, Reply&)>& read) {
  auto t0 = std::chrono::steady_clock::now();
  Reply reply;
  auto r = with_retries(opts, [&] { return post(http); }, &reply.attempts);
  if (!r) return Error{fmt::format("{}: {}", who, r.error().message)};
  if (r->status != 200) return Error{fmt::format("{}: HTTP {} from {}: {}", who, r->status, http.url, api_error(r->body))};
  try {
    read(json::parse(r->body), reply);
  } catch (const std::exception& e) {
    return Error{fmt::format("{}: malformed reply from {}: {}", who, http.url, e.what())};
  }
  reply.seconds = since(t0);
  return reply;
}

// What both hosted APIs hold: the model, the endpoint (no trailing '/'), the key, the options.
class HostedProvider : public Provider {
 public:
  HostedProvider(std::string model, std::string base, std::string key, ProviderOptions opts)
      : model_(std::move(model)), base_(std::move(base)), key_(std::move(key)), opts_(std::move(opts)) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }
  std::string model() const override { return model_; }

 protected:
  std::string model_, base_, key_;
  ProviderOptions opts_;
};

class OpenAi : public HostedProvider {
 public:
  using HostedProvider::HostedProvider;
  std::string kind() const override { return "openai"; }

  Result<Reply> complete(const Request& req) override {
    json messages = json::array();
    for (auto& m : req.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body = {{"model", model_}, {"messages", messages}, {"temperature", req.temperature}};
    // OpenAI itself wants max_completion_tokens; compatible servers know max_tokens.
    body[base_.find("api.openai.com") != std::string::npos ? "max_completion_tokens" : "max_tokens"] = req.max_tokens;
    HttpRequest http{base_ + "/chat/completions", {"Content-Type: application/json"}, body.dump(), opts_.timeout,
                     opts_.max_reply_bytes};
    if (!key_.empty()) http.headers.push_back("Authorization: Bearer " + key_);
    return exchange("openai:" + model_, http, opts_, [](const json& j, Reply& reply) {
      const json& choice = j.at("choices").at(0);
      const json& msg = choice.at("message");
      if (msg.contains("content") && msg["content"].is_string()) reply.text = msg["content"].get<std::string>();
      reply.truncated = choice.contains("finish_reason") && choice["finish_reason"] == "length";
      if (j.contains("usage") && j["usage"].is_object()) {
        reply.usage.prompt_tokens = j["usage"].value("prompt_tokens", 0L);
        reply.usage.completion_tokens = j["usage"].value("completion_tokens", 0L);
      }
    });
  }
};

class Anthropic : public HostedProvider {
 public:
  using HostedProvider::HostedProvider;
  std::string kind() const override { return "anthropic"; }

  Result<Reply> complete(const Request& req) override {
    std::string system;
    json messages = json::array();
    for (auto& m : req.messages) {
      if (m.role == "system") system += (system.empty() ? "" : "\n\n") + m.content;
      else messages.push_back({{"role", m.role}, {"content", m.content}});
    }
    json body = {{"model", model_}, {"max_tokens", req.max_tokens}, {"temperature", req.temperature}, {"messages", messages}};
    if (!system.empty()) body["system"] = system;
    HttpRequest http{base_ + "/v1/messages",
                     {"Content-Type: application/json", "anthropic-version: 2023-06-01", "x-api-key: " + key_},
                     body.dump(), opts_.timeout, opts_.max_reply_bytes};
    return exchange("anthropic:" + model_, http, opts_, [](const json& j, Reply& reply) {
      for (auto& part : j.at("content"))
        if (part.value("type", "") == "text") reply.text += part.at("text").get<std::string>();
      reply.truncated = j.contains("stop_reason") && j["stop_reason"] == "max_tokens";
      if (j.contains("usage") && j["usage"].is_object()) {
        reply.usage.prompt_tokens = j["usage"].value("input_tokens", 0L);
        reply.usage.completion_tokens = j["usage"].value("output_tokens", 0L);
      }
    });
  }
};

}  // namespace

std::unique_ptr<Provider> make_openai(const std::string& model, const std::string& base_url, const std::string& key,
                                      const ProviderOptions& opts) {
  return std::make_unique<OpenAi>(model, base_url, key, opts);
}

std::unique_ptr<Provider> make_anthropic(const std::string& model, const std::string& base_url, const std::string& key,
                                         const ProviderOptions& opts) {
  return std::make_unique<Anthropic>(model, base_url, key, opts);
}

}  // namespace ptxforge::llm
