// Language models behind one interface. A provider takes a conversation and returns the
// model's reply text with its token usage. Kinds, chosen by a spec string:
//   openai:<model>      Chat Completions; OPENAI_BASE_URL points it at vLLM, llama.cpp, Ollama ...
//   anthropic:<model>   the Messages API
//   cmd:<command line>  runs a program per request: the request as JSON on stdin, the reply on stdout
//   manual              writes the prompt to a file and stops; a person or agent writes the reply
//   replay:<file>       replays recorded replies in order (demos, tests)
// HTTP providers retry 429 and 5xx with backoff, honouring Retry-After. Keys come from the
// environment and are never written anywhere. A reply the API says was stopped by the token
// limit is marked `truncated`, so the loop does not check half a module as a broken one.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace ptxforge::llm {

struct Message {
  std::string role;  // system, user, assistant
  std::string content;
};

struct Request {
  std::vector<Message> messages;
  double temperature = 0.2;
  int max_tokens = 32768;  // the loop always sets it (agent/options.h: --max-tokens); the same default
  int sample = 0;  // which of k independent samples: part of the cache key
  int round = 0;   // 0-based round of the session (replay answers by round)
  std::string exchange_dir;  // the round's folder in the session (manual writes its note there)
};

struct Usage {
  long prompt_tokens = 0, completion_tokens = 0;
};

struct Reply {
  std::string text;
  Usage usage;
  bool from_cache = false;
  bool pending = false;       // manual: the reply must be written by hand; `text` says where
  bool truncated = false;     // the model stopped at the request's max_tokens: `text` is cut off
  double seconds = 0;
  int attempts = 1;
};

struct ProviderOptions {
  std::chrono::milliseconds timeout{600000};
  int max_attempts = 5;                       // 1 + retries on 429 / 5xx / transport errors
  double max_backoff_s = 60;
  size_t max_reply_bytes = size_t{4} << 20;
  std::function<void(double seconds)> sleep;  // injectable for tests; default sleeps
  std::string manual_dir;                     // manual: where prompts and replies are exchanged
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual Result<Reply> complete(const Request& req) = 0;
  virtual std::string kind() const = 0;   // "openai"
  virtual std::string model() const = 0;  // "gpt-4.1", the command, the replay file
  std::string spec() const { return kind() + ":" + model(); }
};

// Builds a provider from its spec; an error names what is missing (e.g. the key variable).
Result<std::unique_ptr<Provider>> make_provider(const std::string& spec, const ProviderOptions& opts);

// Retries `attempt` on retryable failures. `attempt` returns the HTTP status and body, or an
// Error for a transport failure; `retry_after` is the server's hint, when it gave one.
struct Attempt {
  long status = 0;
  std::string body;
  std::optional<double> retry_after_s;
};
Result<Attempt> with_retries(const ProviderOptions& opts, const std::function<Result<Attempt>()>& attempt, int* attempts);

// Cost is only computed from prices the user gives (USD per million tokens); none is guessed.
struct Prices {
  double input_per_mtok = 0, output_per_mtok = 0;
  bool known = false;
};
double cost_usd(const Usage& u, const Prices& p);

}  // namespace ptxforge::llm
