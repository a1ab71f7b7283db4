// ptxforge serve: the verification service (docs/serve.md). Clients POST candidates over HTTP;
// runs are stored in SQLite before they are answered, verified on the GPUs' workers or the CPU
// engine, and read back by id. SIGTERM or SIGINT: stop taking runs, let running ones finish
// (--grace, 30 s), leave queued ones stored for the next start, exit 0.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "agent/gpu_pool.h"
#include "cli_parse.h"
#include "gpu/worker_client.h"
#include "serve/auth.h"
#include "serve/run_store.h"
#include "serve/scheduler.h"
#include "serve/task_catalog.h"
#ifdef PTXFORGE_HAVE_HTTP_SERVER
#include "serve/http_server.h"
#endif
#include "util/paths.h"

namespace ptxforge::cli {

// Where the HTTP server is built, it is linked into ptxforge-serve only (tools/ptxforge/
// CMakeLists.txt): this file is compiled into both programs, and `ptxforge serve` becomes
// ptxforge-serve (exec: the same process, signals and exit status).
#if defined(PTXFORGE_HAVE_HTTP_SERVER) && !defined(PTXFORGE_SERVE_IN_PROCESS)
int cmd_serve(const std::vector<std::string>& args) {
  auto program = find_companion_program("ptxforge-serve");
  if (!program) {
    std::cerr << "ptxforge serve: ptxforge-serve, which runs the HTTP server, is not beside ptxforge; "
                 "build or install it with ptxforge\n";
    return kExitUsage;
  }
  std::vector<std::string> words = {*program, "serve"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout << std::flush;
  ::execv(program->c_str(), argv.data());
  std::cerr << fmt::format("ptxforge serve: cannot run {}: {}\n", *program, std::strerror(errno));
  return kExitUsage;
}
#else
namespace {

// The signal handler only writes a byte; a thread reads it and shuts down outside the handler.
// (Blocking the signals instead would be inherited by the worker processes.)
int g_signal_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int) {
  char c = 1;
  [[maybe_unused]] ssize_t n = ::write(g_signal_pipe[1], &c, 1);
}

Result<std::pair<std::string, int>> parse_listen(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return Error{fmt::format("--listen '{}': give HOST:PORT, e.g. 127.0.0.1:8765", text)};
  std::string host = text.substr(0, colon), port_text = text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  long port = port_text.empty() ? -1 : std::strtol(port_text.c_str(), &end, 10);
  if (port < 0 || port > 65535 || *end != '\0') return Error{fmt::format("--listen '{}': the port must be 0 to 65535", text)};
  return std::pair{host, int(port)};
}

// --gpus: "none", "all" (every GPU the worker reports; none without a driver) or ordinals.
Result<std::vector<int>> choose_gpus(const std::string& text) {
  if (text == "none") return std::vector<int>{};
  auto listed = agent::parse_gpu_list(text);
  if (!listed) return listed.error();
  if (!listed->empty()) return *listed;
  auto info = gpu::ask_device_info();
  if (!info || info->device_count <= 0) return std::vector<int>{};
  std::vector<int> all;
  for (int k = 0; k < info->device_count; ++k) all.push_back(k);
  return all;
}

}  // namespace

int cmd_serve(const std::vector<std::string>& args) {
  CLI::App app("Serve verification over HTTP: clients submit candidates, the server verifies them on its GPUs or "
               "the CPU engine and keeps every run in a database (docs/serve.md)", "serve");
  std::string listen = "127.0.0.1:8765", gpus = "all", db = "serve.db", token_file;
  std::vector<std::string> task_dirs;
  int cpu_workers = 2;
  size_t max_queue = 1024, max_inflight = 256, max_body = 4u << 20, max_candidate = 1u << 20, max_batch = 256;
  double max_timeout = 120, grace = 30;
  app.add_option("--listen", listen, "HOST:PORT to listen on (port 0: any free port); a host other than loopback needs --token-file")
      ->capture_default_str();
  app.add_option("--gpus", gpus, "GPU workers: none, all (every GPU the driver reports; none without a driver) or ordinals such as 0,1")
      ->capture_default_str();
  app.add_option("--cpu-workers", cpu_workers, "CPU engine workers")->check(CLI::Range(0, 256))->capture_default_str();
  app.add_option("--db", db, "the SQLite database of runs (created if missing; a restart picks up its queued runs)")->capture_default_str();
  app.add_option("--token-file", token_file,
                 "bearer tokens, one per line ('#' comments); the file must not be readable by group or others");
  app.add_option("--tasks", task_dirs, "a folder of more tasks (the folder or its sub-folders hold task.toml); repeatable");
  app.add_option("--max-queue", max_queue, "runs waiting for a worker; a submission past it is refused (429)")
      ->check(CLI::Range(size_t(1), size_t(1) << 24))->capture_default_str();
  app.add_option("--max-inflight-per-token", max_inflight, "queued and running runs of one token (429 past it)")
      ->check(CLI::Range(size_t(1), size_t(1) << 24))->capture_default_str();
  app.add_option("--max-body-bytes", max_body, "largest request body (413 past it)")
      ->check(CLI::Range(size_t(1024), size_t(1) << 30))->capture_default_str();
  app.add_option("--max-candidate-bytes", max_candidate, "largest candidate text (413 past it)")
      ->check(CLI::Range(size_t(1), size_t(1) << 30))->capture_default_str();
  app.add_option("--max-batch-runs", max_batch, "most runs in one POST /v1/batch (413 past it)")
      ->check(CLI::Range(size_t(1), size_t(1) << 20))->capture_default_str();
  app.add_option("--max-timeout", max_timeout, "largest timeout_s a client may ask for, in seconds")
      ->check(CLI::Range(1.0, 3600.0))->capture_default_str();
  app.add_option("--grace", grace,
                 "seconds running runs get to finish after SIGTERM; those still going then run again after the next start")
      ->check(CLI::Range(0.0, 3600.0))->capture_default_str();
  if (int rc = parse_args(app, args); rc >= 0) return rc;

#ifndef PTXFORGE_HAVE_HTTP_SERVER
  std::cerr << "ptxforge serve: this build has no HTTP server (cpp-httplib was not found when it was configured)\n";
  return kExitUsage;
#else
  using namespace ptxforge::serve;
  auto fail = [](const std::string& message) {
    std::cerr << "ptxforge serve: " << message << "\n";
    return kExitUsage;
  };
  auto address = parse_listen(listen);
  if (!address) return fail(address.error().message);
  HttpOptions http;
  http.host = address->first;
  http.port = address->second;
  http.limits = RequestLimits{max_body, max_candidate, max_batch, max_timeout};
  if (!token_file.empty()) {
    auto tokens = TokenSet::load(token_file);
    if (!tokens) return fail(tokens.error().message);
    http.tokens = std::move(*tokens);
  }
  // Refuse an open address before anything else starts (the database, the workers).
  if (!is_loopback_host(http.host) && http.tokens.empty())
    return fail(fmt::format("refusing to listen on {} without --token-file (anyone who can reach it could run code on this "
                            "server); listen on 127.0.0.1, or give a token file",
                            http.host));

  auto catalog = TaskCatalog::load(task_dirs);
  if (!catalog) return fail(catalog.error().message);
  auto ordinals = choose_gpus(gpus);
  if (!ordinals) return fail(ordinals.error().message);
  if (ordinals->empty() && cpu_workers == 0) return fail("no workers: no GPU was found or given, and --cpu-workers is 0");

  auto store = RunStore::open(db);
  if (!store) return fail(store.error().message);
  std::vector<Slot> slots;
  for (int k : *ordinals) slots.push_back(Slot{fmt::format("gpu{}", k), SlotKind::gpu, PipelineVerifier::for_gpu(k)});
  for (int i = 0; i < cpu_workers; ++i) slots.push_back(Slot{fmt::format("cpu{}", i), SlotKind::cpu, PipelineVerifier::for_cpu()});
  SchedulerLimits limits;
  limits.max_queue = max_queue;
  limits.max_inflight_per_client = int(std::min<size_t>(max_inflight, 1u << 24));
  auto scheduler = Scheduler::start(**store, *catalog, std::move(slots), limits);
  if (!scheduler) return fail(scheduler.error().message);

  HttpServer server(**scheduler, *catalog, http);
  if (auto st = server.bind(); !st) return fail(st.error().message);

  if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return fail("cannot set up signal handling");
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  std::thread stopper([&] {
    char c;
    while (::read(g_signal_pipe[0], &c, 1) < 0 && errno == EINTR) {
    }
    // Shutdown first (new runs get 503, waiting requests return), then stop listening.
    std::thread drain([&] {
      (*scheduler)->shutdown(std::chrono::milliseconds(static_cast<int64_t>(grace * 1000)));
    });
    server.stop();
    drain.join();
  });

  std::cerr << fmt::format("ptxforge serve: listening on http://{}:{} ({} GPU workers, {} CPU engine workers, db {})\n",
                           http.host.find(':') != std::string::npos ? "[" + http.host + "]" : http.host, server.port(),
                           ordinals->size(), cpu_workers, db)
            << std::flush;
  server.serve();
  on_stop_signal(0);  // serve() ended on its own: let the stopper finish too
  stopper.join();
  if (size_t left = (*scheduler)->health().running; left > 0) {
    // The grace is over: the runs still going stay "running" in the store and run again after
    // the next start (an attempt each). Their workers end with this process (they watch their
    // parent), and the destructors, which would wait for those runs, are not run.
    std::cerr << fmt::format("ptxforge serve: stopped; {} run{} still going after the grace period will run again "
                             "after the next start\n",
                             left, left == 1 ? "" : "s")
              << std::flush;
    std::_Exit(kExitOk);
  }
  std::cerr << "ptxforge serve: stopped\n";
  return kExitOk;
#endif
}
#endif  // the server in this process

}  // namespace ptxforge::cli
