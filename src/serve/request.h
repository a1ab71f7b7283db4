// What a client may ask the service for, checked before anything is stored: the JSON body of
// POST /v1/runs and /v1/batch becomes RunRequests here, and every refusal becomes one error
// object of docs/serve.md ({"error": {"code", "message", "field"?, "limit"?, "value"?}}). A
// client sets only what the API names: the sizes (always all, held-back included), the tools
// run and every path stay the server's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "serve/service.h"
#include "serve/task_catalog.h"

namespace ptxforge::serve {

enum class ErrorCode {
  bad_request, unauthorized, not_found, unknown_task, method_not_allowed, too_large,
  queue_full, rate_limited, shutting_down, internal,
};
std::string_view to_string(ErrorCode c);  // "bad_request", ...
int http_status(ErrorCode c);             // 400, 401, 404, 404, 405, 413, 429, 429, 503, 500

struct ApiError {
  ErrorCode code = ErrorCode::internal;
  std::string message;             // lowercase, no file paths, no sizes of held-back sets
  std::string field;               // the JSON path ("runs[3].seeds"); "" when none
  std::string limit;               // "max_body_bytes", "max_queue", ...; "" when none
  std::optional<int64_t> value;    // the limit's value, with `limit`
  int retry_after_s = 0;           // for 429 and 503: the Retry-After header
};
// {"error": {...}}: the body of every refusal.
std::string error_json(const ApiError& e);
ApiError bad_request(std::string field, std::string message);

// The server's limits on what one request may carry (`ptxforge serve` options).
struct RequestLimits {
  size_t max_body_bytes = 4u << 20;
  size_t max_candidate_bytes = 1u << 20;
  size_t max_batch_runs = 256;
  double max_timeout_s = 120;
};

// The rule a task name obeys: [A-Za-z0-9_./-], no "..", no leading "/", at most 128 characters.
bool valid_task_name(std::string_view name);

// POST /v1/runs: the body, the Idempotency-Key header ("" when absent) and the caller's token
// id (auth.h; "" without tokens). One request, or the error to answer with.
std::variant<RunRequest, ApiError> parse_run(std::string_view body, std::string_view idempotency_header,
                                             const std::string& client, const TaskCatalog& tasks,
                                             const RequestLimits& limits);
// POST /v1/batch: all or nothing; an item's error names "runs[i].field". A batch takes no
// Idempotency-Key header (each run carries its own key).
std::variant<std::vector<RunRequest>, ApiError> parse_batch(std::string_view body, std::string_view idempotency_header,
                                                            const std::string& client, const TaskCatalog& tasks,
                                                            const RequestLimits& limits);

// ?wait=SECONDS: a number, clamped to 0..300; nullopt when it is not a number.
std::optional<double> parse_wait(std::string_view text);

}  // namespace ptxforge::serve
