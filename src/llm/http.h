// One HTTP client for the LLM providers (libcurl, loaded at the first request:
// llm/curl_library.h): a JSON POST with a timeout, a cap on the reply's size, and the
// Retry-After header kept for the retry logic. Transport failures (unreachable host, timeout,
// oversized reply, no libcurl) are Errors that name the URL but never the headers, so API keys
// do not end up in logs.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace ptxforge::llm {

struct HttpResponse {
  long status = 0;
  std::string body;
  std::optional<double> retry_after_s;
};

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::chrono::milliseconds timeout{300000};
  size_t max_reply_bytes = size_t{8} << 20;
};

Result<HttpResponse> http_post(const HttpRequest& req);

}  // namespace ptxforge::llm
