#include "llm/provider.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <thread>

#include "util/text.h"

namespace ptxforge::llm {

std::unique_ptr<Provider> make_openai(const std::string& model, const std::string& base_url, const std::string& key,
                                      const ProviderOptions& opts);
std::unique_ptr<Provider> make_anthropic(const std::string& model, const std::string& base_url, const std::string& key,
                                         const ProviderOptions& opts);
std::unique_ptr<Provider> make_command(const std::string& command, const ProviderOptions& opts);
Result<std::unique_ptr<Provider>> make_replay(const std::string& file);
std::unique_ptr<Provider> make_manual(const ProviderOptions& opts);

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
}  // namespace

Result<std::unique_ptr<Provider>> make_provider(const std::string& spec, const ProviderOptions& opts) {
  size_t colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "openai") {
    if (rest.empty()) return Error{"openai needs a model: --model openai:<model>"};
    std::string base = env("OPENAI_BASE_URL");
    std::string key = env("OPENAI_API_KEY");
    if (base.empty()) {
      base = "https://api.openai.com/v1";
      if (key.empty())
        return Error{"OPENAI_API_KEY is not set; export it, or set OPENAI_BASE_URL to a compatible local server "
                     "(vLLM, llama.cpp, Ollama) that needs no key"};
    }
    return make_openai(rest, base, key, opts);
  }
  if (kind == "anthropic") {
    if (rest.empty()) return Error{"anthropic needs a model: --model anthropic:<model>"};
    std::string key = env("ANTHROPIC_API_KEY");
    if (key.empty()) return Error{"ANTHROPIC_API_KEY is not set; export it to use anthropic:<model>"};
    std::string base = env("ANTHROPIC_BASE_URL");
    return make_anthropic(rest, base.empty() ? "https://api.anthropic.com" : base, key, opts);
  }
  if (kind == "cmd") {
    if (trim(rest).empty()) return Error{"cmd needs a command line: --model 'cmd:python3 my_model.py'"};
    return make_command(rest, opts);
  }
  if (kind == "replay") {
    if (rest.empty()) return Error{"replay needs a file: --model replay:<file>"};
    return make_replay(rest);
  }
  if (kind == "manual") return make_manual(opts);
  std::string guess = closest_match(kind, {"openai", "anthropic", "cmd", "replay", "manual"});
  return Error{fmt::format("unknown model provider '{}'{}; use openai:<model>, anthropic:<model>, cmd:<command>, "
                           "replay:<file> or manual",
                           kind, guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess))};
}

Result<Attempt> with_retries(const ProviderOptions& opts, const std::function<Result<Attempt>()>& attempt, int* attempts) {
  auto sleep = opts.sleep ? opts.sleep : [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  std::string last;
  for (int i = 0; i < opts.max_attempts; ++i) {
    if (attempts) *attempts = i + 1;
    auto r = attempt();
    double backoff = std::min(opts.max_backoff_s, std::pow(2.0, i));
    if (!r) {
      last = r.error().message;
    } else if (r->status == 429 || r->status >= 500) {
      last = fmt::format("HTTP {}: {}", r->status, r->body.substr(0, 300));
      if (r->retry_after_s) backoff = std::min(opts.max_backoff_s, std::max(0.0, *r->retry_after_s));
    } else {
      return r;
    }
    if (i + 1 < opts.max_attempts) sleep(backoff);
  }
  return Error{fmt::format("gave up after {} attempts; last: {}", opts.max_attempts, last)};
}

double cost_usd(const Usage& u, const Prices& p) {
  if (!p.known) return 0;
  return (static_cast<double>(u.prompt_tokens) * p.input_per_mtok + static_cast<double>(u.completion_tokens) * p.output_per_mtok) / 1e6;
}

}  // namespace ptxforge::llm
