"""A stand-in for `ptxforge serve`, for the client's own failure handling only.

The real server cannot be made to answer 429 or 500, drop a connection after storing a run, or
hang on demand; this one can. It follows the API's shapes (docs/serve.md) closely enough for the
client's code paths, and keeps its runs by idempotency key, so a test can count how many runs a
sequence of retries really created. Everything else is tested against the real server
(test_server.py).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional


class FakeServer:
    """Serves on 127.0.0.1 (a free port) until close().

    script: (method, route) -> list of actions, consumed one per matching request before the
    normal behaviour applies. An action is a dict:
      {"status": 429, "error": "queue_full", "retry_after": "0"}  answer this error instead
      {"drop": True}    store the run (for a POST) as usual, then close without answering
      {"hang": True}    hold the request until close() (the client's timeout must fire)
    route is "POST /v1/runs", "GET /v1/runs", "GET /v1/tasks", "GET /healthz".
    polls_until_done: how many GETs of a run answer "running" before it is done.
    hold_until_inflight: the first POSTs wait until this many requests are in flight at once
    (or 10 s pass), so a test can see that a client sends that many concurrently and no more.
    """

    def __init__(self, polls_until_done: int = 0, hold_until_inflight: int = 0, name: str = "fake"):
        self.name = name
        self.polls_until_done = polls_until_done
        self.hold_until_inflight = hold_until_inflight
        self.script: dict[str, list] = {}
        self.requests: list[dict] = []  # every request: method, path, headers, body
        self.runs: dict[str, dict] = {}  # id -> run
        self.by_key: dict[str, str] = {}
        self.inflight = 0
        self.max_inflight = 0
        self.cond = threading.Condition()
        self.closing = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                fake._handle(self, "GET")

            def do_POST(self):
                fake._handle(self, "POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.closing.set()
        with self.cond:
            self.cond.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    def posts(self) -> list[dict]:
        return [r for r in self.requests if r["method"] == "POST"]

    # ---- Handling ----

    def _route(self, method: str, path: str) -> str:
        base = path.split("?")[0]
        if base.startswith("/v1/runs/"):
            return f"{method} /v1/runs"
        return f"{method} {base}"

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        with self.cond:
            self.requests.append({"method": method, "path": h.path, "headers": dict(h.headers), "body": raw})
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
            self.cond.notify_all()
            actions = self.script.get(self._route(method, h.path))
            action = actions.pop(0) if actions else {}
        try:
            if action.get("hang"):
                self.closing.wait(30)
                h.close_connection = True
                return
            if method == "POST" and self.hold_until_inflight:
                with self.cond:
                    self.cond.wait_for(lambda: self.max_inflight >= self.hold_until_inflight or self.closing.is_set(), 10)
            if "status" in action:
                self._error(h, action["status"], action.get("error", "internal"), action.get("retry_after"))
                return
            status, body = self._normal(method, h.path, raw)
            if action.get("drop"):
                h.close_connection = True
                return  # stored, never answered
            self._send(h, status, body)
        finally:
            with self.cond:
                self.inflight -= 1

    def _normal(self, method: str, path: str, raw: bytes):
        base, _, query = path.partition("?")
        if method == "GET" and base == "/healthz":
            return 200, {"status": "ok", "queue_depth": 0, "workers": {"gpu": 0, "cpu": 1}, "version": self.name}
        if method == "GET" and base == "/v1/tasks":
            return 200, {"tasks": [{"name": "level1/vector_add", "level": 1, "summary": "c = a + b"}]}
        if method == "GET" and base.startswith("/v1/tasks/"):
            return 200, {"name": base[len("/v1/tasks/"):], "prompt": "p", "shown_size_sets": ["small"],
                         "required": [], "baseline": None}
        if method == "POST" and base == "/v1/runs":
            req = json.loads(raw)
            key = req.get("idempotency_key", "")
            with self.cond:
                if key and key in self.by_key:
                    run = dict(self.runs[self.by_key[key]], replayed=True)
                else:
                    rid = f"{self.name}-{len(self.runs) + 1}"
                    run = {"id": rid, "state": "queued", "task": req["task"], "created": "2025-01-01T00:00:00Z",
                           "polls": 0, "candidate": req["candidate"]}
                    self.runs[rid] = run
                    if key:
                        self.by_key[key] = rid
                    if self.polls_until_done == 0:
                        self._finish(run)
            return (200 if run["state"] == "done" else 202), self._view(run)
        if method == "GET" and base.startswith("/v1/runs/"):
            rid = base[len("/v1/runs/"):]
            with self.cond:
                run = self.runs.get(rid)
                if run is None:
                    return 404, {"error": {"code": "not_found", "message": f"no run '{rid}'"}}
                run["polls"] += 1
                if run["polls"] >= self.polls_until_done:
                    self._finish(run)
                else:
                    run["state"] = "running"
            return 200, self._view(run)
        return 404, {"error": {"code": "not_found", "message": "no such route"}}

    def _finish(self, run: dict) -> None:
        run["state"] = "done"
        run["record"] = {"passed": True, "verdict": "passed (verified on the CPU engine)", "verified_by": "cpu_engine",
                         "gpu_verified": False, "flags": [], "seed": "1", "candidate_text": run["candidate"],
                         "stages": [{"name": "verify", "status": "passed", "summary": "", "seconds": 0}]}

    @staticmethod
    def _view(run: dict) -> dict:
        return {k: v for k, v in run.items() if k not in ("polls", "candidate")}

    def _error(self, h, status: int, code: str, retry_after: Optional[str]) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self._send(h, status, {"error": {"code": code, "message": f"scripted {code}", "limit": "max_queue"}}, headers)

    @staticmethod
    def _send(h, status: int, body: dict, headers: Optional[dict] = None) -> None:
        data = json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)
