// The verification service's contract between its HTTP front (serve/http_server.h, request
// parsing, auth) and its core (the run store, the queue and the device workers). The front
// speaks only to RunService; the core implements it over SQLite and eval::Pipeline, and tests
// of the front pass a fake. docs/serve.md is the page on the whole service.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/stages.h"
#include "util/result.h"

namespace ptxforge::serve {

enum class Language { ptx, cuda };
std::string_view to_string(Language l);  // "ptx", "cuda"

// One run as a client asked for it, validated (serve/request.h builds it). The candidate is
// text; the core writes it to a private temporary folder, never to a path a client names.
struct RunRequest {
  std::string task;       // a task name the server knows (checked by the front before queueing)
  std::string candidate;  // PTX with `// @launch` lines, or CUDA C++
  Language language = Language::ptx;
  eval::RunOptions options;     // device, arch, time, seeds, seed, sanitize, prove_ncu, verify_timeout
  std::string idempotency_key;  // "" when none
  std::string client;           // the token's id (auth.h: never the token itself); "" without tokens
};

enum class RunState { queued, running, done };
std::string_view to_string(RunState s);  // "queued", "running", "done"

// A run as GET /v1/runs/{id} shows it.
struct RunView {
  std::string id;
  RunState state = RunState::queued;
  std::string task;
  int64_t created_ms = 0, started_ms = 0, finished_ms = 0;  // Unix ms; 0 = not yet
  std::string device;       // "gpu0", "cpu1", ... once started
  std::string record_json;  // the model-audience record (serve/model_view.h) once done
  bool replayed = false;    // an idempotent POST answered with an earlier run
  // The token that submitted it (RunRequest::client): a run is shown to that token only, so a
  // run id seen elsewhere (a log, a shared notebook) does not open another client's verdicts.
  // Never sent to a client.
  std::string client;
};

// Why a submission was refused before it was stored.
enum class Refusal { queue_full, rate_limited, shutting_down, internal };

struct Submitted {
  std::vector<RunView> runs;          // in request order, when accepted
  std::optional<Refusal> refusal;     // when refused: nothing was stored
  std::string message;                // the refusal's reason
  int retry_after_s = 0;              // for queue_full / rate_limited / shutting_down
};

struct Health {
  size_t queue_depth = 0;
  int gpu_workers = 0, cpu_workers = 0;
  bool shutting_down = false;
  size_t running = 0;  // runs on a worker now (after shutdown: those its grace did not see end)
};

class RunService {
 public:
  virtual ~RunService() = default;
  // Stores every request (one transaction) before answering, then queues them. All or none:
  // a batch that does not fit the queue is refused whole. A request whose idempotency key
  // (for its client) was seen before answers with that run (replayed = true) and stores nothing.
  virtual Submitted submit(const std::vector<RunRequest>& requests) = 0;
  // The run, or nullopt for an unknown id. With a wait above zero, blocks until the run is done
  // or the wait passes (or shutdown begins).
  virtual Result<std::optional<RunView>> get(const std::string& id, std::chrono::milliseconds wait) = 0;
  virtual Health health() = 0;
  // Prometheus text (format 0.0.4) of the core's counters; the front appends its own.
  virtual std::string metrics_text() = 0;
  // Stop taking runs (submit refuses with shutting_down), let running ones finish within
  // `grace`, leave queued ones stored for the next start. Idempotent.
  virtual void shutdown(std::chrono::milliseconds grace) = 0;
};

}  // namespace ptxforge::serve
