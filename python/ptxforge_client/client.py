"""A client for `ptxforge serve`, the verification service (docs/serve.md has the HTTP API).

Trainers written in Python ask the service for tens of thousands of verdicts an hour; this
module is what they call instead of a `ptxforge run` subprocess. It speaks HTTP/1.1 + JSON with
the standard library only, so it installs anywhere a trainer runs.

What it adds over plain HTTP, and why:
- Several endpoints (one server per GPU node): each new run goes to the next one, round-robin,
  and moves on to another where a server cannot be reached or refuses with 5xx/429.
- Retries that never run a candidate twice: every POST carries an idempotency key, generated
  once per item and reused on each retry. Once a POST may have reached a server (it was sent and
  the answer was lost), the item stays with that server, because only that server knows its key.
- 429 answers wait the server's Retry-After; 5xx and connection errors back off exponentially
  with full jitter so that many trainers do not retry in lockstep.
- Options are checked against the API's names before anything is sent, so a typo is a
  TypeError naming it rather than a 400 after a network round trip. The server stays the
  authority on values.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
import urllib.parse
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Optional, Sequence, Union

__all__ = [
    "Client",
    "ClientError",
    "ApiError",
    "ConnectionFailed",
    "RunTimeout",
    "RUN_OPTIONS",
]

# The request fields of POST /v1/runs besides task and candidate (docs/serve.md), with the
# values the API names for the enumerated ones (None: any value of the right type).
RUN_OPTIONS = {
    "language": ("ptx", "cuda"),
    "device": ("auto", "gpu", "cpu"),
    "arch": None,
    "no_time": None,
    "seeds": None,
    "seed": None,
    "sanitize": None,
    "prove": ("sass", "ncu"),
    "timeout_s": None,
    "idempotency_key": None,
}
_OPTION_TYPES = {
    "language": str,
    "device": str,
    "arch": str,
    "no_time": bool,
    "seeds": int,
    "seed": (int, str),
    "sanitize": bool,
    "prove": str,
    "timeout_s": (int, float),
    "idempotency_key": str,
}

# The server clamps ?wait to 0..300 s; one poll never asks for more.
_MAX_SERVER_WAIT_S = 300
# Run ids remembered with their server (several endpoints only), newest kept: a trainer submits
# millions over a long run, and an id forgotten is still found by asking each endpoint.
_MAX_OWNERS = 100_000
_USER_AGENT = "ptxforge-client/0.1"


class ClientError(Exception):
    """Every error this client raises derives from this."""


class ApiError(ClientError):
    """The server answered with an error: its HTTP status and the body's error object.

    code is the API's code ("bad_request", "too_large", "queue_full", ...); field names the JSON
    path of a bad value ("runs[3].seeds"), limit the limit that was hit ("max_candidate_bytes")
    and value that limit's value, each None when the server gave none.
    """

    def __init__(self, status: int, code: str, message: str, field: Optional[str] = None,
                 limit: Optional[str] = None, value: Any = None, retry_after: Optional[float] = None):
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.limit = limit
        self.value = value
        self.retry_after = retry_after
        where = "".join(f" [{k}={v}]" for k, v in (("field", field), ("limit", limit), ("value", value)) if v is not None)
        super().__init__(f"{status} {code}: {message}{where}")


class ConnectionFailed(ClientError):
    """No server could be reached (or kept failing) within the retries."""


class RunTimeout(ClientError):
    """A run was accepted but was not done within the wait the caller gave; run_id names it."""

    def __init__(self, run_id: str, waited_s: float):
        self.run_id = run_id
        self.waited_s = waited_s
        super().__init__(f"run {run_id} not done after {waited_s:.1f} s")


class _NotDelivered(Exception):
    """The request certainly did not reach the server (the connection was never made)."""


class _Lost(Exception):
    """The request was sent (or partly) and no answer came back: it may have been acted on."""


def _retry_after(headers) -> Optional[float]:
    v = headers.get("Retry-After") if headers is not None else None
    if v is None:
        return None
    try:
        return max(0.0, float(v))
    except ValueError:
        return None  # an HTTP date: not sent by this server; fall back to backoff


def validate_options(opts: dict) -> None:
    """Raises TypeError for an option the API does not name or a value of the wrong type, and
    ValueError for an enumerated option outside its values."""
    for name, value in opts.items():
        if name not in RUN_OPTIONS:
            raise TypeError(f"unknown run option '{name}' (known: {', '.join(sorted(RUN_OPTIONS))})")
        want = _OPTION_TYPES[name]
        # bool is an int in Python; an int option given True is a mistake worth naming.
        if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
            raise TypeError(f"run option '{name}' has type {type(value).__name__}")
        allowed = RUN_OPTIONS[name]
        if allowed is not None and value not in allowed:
            raise ValueError(f"run option '{name}' is '{value}'; the API takes {', '.join(allowed)}")


class _Endpoint:
    """One server: its address and a keep-alive connection per thread."""

    def __init__(self, url: str):
        u = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
        if u.scheme not in ("http", "https"):
            raise ValueError(f"'{url}': an endpoint is http://HOST:PORT or https://HOST:PORT")
        if not u.hostname:
            raise ValueError(f"'{url}': no host")
        self.url = f"{u.scheme}://{u.netloc}"
        self.scheme, self.host = u.scheme, u.hostname
        self.port = u.port or (443 if u.scheme == "https" else 80)
        self.prefix = u.path.rstrip("/")
        self._local = threading.local()

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            conn = cls(self.host, self.port, timeout=timeout)
            try:
                conn.connect()
            except OSError as e:  # refused, unreachable, connect timeout: nothing was sent
                conn.close()
                raise _NotDelivered(f"{self.url}: {e}") from e
            self._local.conn = conn
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn

    def drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class Client:
    """A client of one or more `ptxforge serve` endpoints.

    url_or_urls: "http://host:port" or a list of them. token: the bearer token, if the servers
    have a token file. timeout: seconds for one HTTP exchange beyond any ?wait the client asks
    for. retries: how many times one request is retried after a 429, a 5xx or a connection
    error (so retries + 1 attempts). backoff/max_backoff: the exponential backoff's first step
    and ceiling, in seconds.
    """

    def __init__(self, url_or_urls: Union[str, Sequence[str]], token: Optional[str] = None,
                 timeout: float = 30.0, retries: int = 6, backoff: float = 0.25, max_backoff: float = 20.0):
        urls = [url_or_urls] if isinstance(url_or_urls, str) else list(url_or_urls)
        if not urls:
            raise ValueError("no endpoint given")
        if retries < 0 or timeout <= 0:
            raise ValueError("retries must be >= 0 and timeout > 0")
        self._endpoints = [_Endpoint(u) for u in urls]
        self._token = token
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self._next = 0
        self._lock = threading.Lock()
        self._owner: OrderedDict[str, _Endpoint] = OrderedDict()  # run id -> its server (several endpoints)
        self._rng = random.Random()

    @property
    def endpoints(self) -> list[str]:
        return [e.url for e in self._endpoints]

    # ---- The API ----

    def health(self) -> dict:
        """GET /healthz of the first endpoint that answers."""
        return self._request("GET", "/healthz", endpoint=None, failover=True)

    def tasks(self) -> list:
        """The server's tasks: a list of {"name", "level", "summary"}."""
        return self._request("GET", "/v1/tasks", endpoint=None, failover=True)["tasks"]

    def task(self, name: str) -> dict:
        """One task as a model is shown it (shown size sets only)."""
        return self._request("GET", "/v1/tasks/" + urllib.parse.quote(name, safe="/"), endpoint=None, failover=True)

    def submit(self, task: str, candidate: str, language: str = "ptx", **opts) -> str:
        """Queues one run and returns its id at once."""
        return self._post_run(self._body(task, candidate, language, opts), wait=0)["id"]

    def get(self, run_id: str, wait: float = 0) -> dict:
        """The run view {"id", "state", "task", ..., "record"?}; with wait > 0 the server holds
        the answer up to that many seconds (at most 300) for the run to finish."""
        endpoint = self._owner_of(run_id)
        path = "/v1/runs/" + urllib.parse.quote(run_id, safe="")
        w = max(0, min(int(wait), _MAX_SERVER_WAIT_S))
        if w:
            path += f"?wait={w}"
        if endpoint is not None:
            return self._request("GET", path, endpoint=endpoint, failover=False, extra_timeout=w)
        # A run this client did not submit: ask each endpoint until one knows it.
        last: Optional[ApiError] = None
        for e in self._endpoints:
            try:
                view = self._request("GET", path, endpoint=e, failover=False, extra_timeout=w)
            except ApiError as err:
                if err.code != "not_found":
                    raise
                last = err
                continue
            self._remember(run_id, e)
            return view
        raise last if last is not None else ClientError("no endpoint")

    def run(self, task: str, candidate: str, language: str = "ptx", wait: Optional[float] = 600, **opts) -> dict:
        """Runs one candidate and returns its view once done, with the record.

        wait: the most seconds to wait for the verdict (None: no bound); past it, RunTimeout
        names the run, which the server keeps running (get() fetches it later).
        """
        return self._run_body(self._body(task, candidate, language, opts), wait)

    def run_many(self, items: Iterable[Union[dict, tuple]], concurrency: int = 8, wait: Optional[float] = 600,
                 return_exceptions: bool = False) -> list:
        """Runs many candidates, at most `concurrency` at a time, and returns their views in the
        order given.

        Each item is a dict {"task", "candidate", "language"?, options...} or a tuple (task,
        candidate). Every item gets its own idempotency key (unless it names one), so a retried
        POST never runs twice. With return_exceptions, an item that failed has its exception in
        its place; otherwise the first failed item's exception (in order) is raised after all
        items finished.
        """
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        bodies = []
        for i, item in enumerate(items):
            if isinstance(item, tuple):
                if len(item) != 2:
                    raise TypeError(f"items[{i}]: a tuple item is (task, candidate)")
                item = {"task": item[0], "candidate": item[1]}
            if not isinstance(item, dict):
                raise TypeError(f"items[{i}]: an item is a dict or a (task, candidate) tuple")
            opts = dict(item)
            try:
                task, candidate = opts.pop("task"), opts.pop("candidate")
            except KeyError as e:
                raise TypeError(f"items[{i}]: missing {e.args[0]}") from None
            language = opts.pop("language", "ptx")
            try:
                bodies.append(self._body(task, candidate, language, opts))
            except (TypeError, ValueError) as e:
                raise type(e)(f"items[{i}]: {e}") from None
        results: list = [None] * len(bodies)

        def one(i: int) -> None:
            try:
                results[i] = self._run_body(bodies[i], wait)
            except Exception as e:  # kept per item; raised below unless asked to return them
                results[i] = e

        with ThreadPoolExecutor(max_workers=min(concurrency, max(1, len(bodies)))) as pool:
            list(pool.map(one, range(len(bodies))))
        if not return_exceptions:
            for r in results:
                if isinstance(r, BaseException):
                    raise r
        return results

    # ---- Internals ----

    def _body(self, task: str, candidate: str, language: str, opts: dict) -> dict:
        if not isinstance(task, str) or not task:
            raise TypeError("task must be a non-empty string")
        if not isinstance(candidate, str) or not candidate:
            raise TypeError("candidate must be a non-empty string")
        all_opts = dict(opts, language=language)
        validate_options(all_opts)
        body = {"task": task, "candidate": candidate}
        body.update(all_opts)
        # One key per item, made here once: every retry of this body sends the same key.
        body.setdefault("idempotency_key", uuid.uuid4().hex)
        return body

    def _run_body(self, body: dict, wait: Optional[float]) -> dict:
        start = time.monotonic()
        first = _MAX_SERVER_WAIT_S if wait is None else max(0, min(int(wait), _MAX_SERVER_WAIT_S))
        view = self._post_run(body, wait=first)
        pause = 0.05
        while view.get("state") != "done":
            left = None if wait is None else wait - (time.monotonic() - start)
            if left is not None and left <= 0:
                raise RunTimeout(view["id"], time.monotonic() - start)
            step = _MAX_SERVER_WAIT_S if left is None else max(1, min(int(left + 0.999), _MAX_SERVER_WAIT_S))
            asked = time.monotonic()
            view = self.get(view["id"], wait=step)
            if view.get("state") != "done" and time.monotonic() - asked < 0.5:
                # The server answered at once instead of holding the request (it caps how many
                # requests may wait): poll at a growing interval rather than in a tight loop.
                time.sleep(pause)
                pause = min(2.0, pause * 2)
        return view

    def _post_run(self, body: dict, wait: int) -> dict:
        path = "/v1/runs" + (f"?wait={wait}" if wait else "")
        view, endpoint = self._request("POST", path, body=body, endpoint=None, failover=True,
                                       extra_timeout=wait, want_endpoint=True)
        self._remember(view["id"], endpoint)
        return view

    def _remember(self, run_id: str, endpoint: _Endpoint) -> None:
        if len(self._endpoints) == 1:
            return  # one server holds every run
        with self._lock:
            self._owner[run_id] = endpoint
            self._owner.move_to_end(run_id)
            while len(self._owner) > _MAX_OWNERS:
                self._owner.popitem(last=False)

    def _owner_of(self, run_id: str) -> Optional[_Endpoint]:
        with self._lock:
            owner = self._owner.get(run_id)
        if owner is None and len(self._endpoints) == 1:
            return self._endpoints[0]
        return owner

    def _pick(self) -> int:
        with self._lock:
            i = self._next
            self._next = (self._next + 1) % len(self._endpoints)
            return i

    def _sleep_backoff(self, attempt: int, retry_after: Optional[float]) -> None:
        if retry_after is not None:
            # The server's word, plus a little jitter so that refused clients do not all come back at once.
            delay = retry_after + self._rng.uniform(0, min(1.0, self.backoff))
        else:
            delay = self._rng.uniform(0, min(self.max_backoff, self.backoff * (2 ** attempt)))
        time.sleep(delay)

    def _request(self, method: str, path: str, body: Optional[dict] = None, endpoint: Optional[_Endpoint] = None,
                 failover: bool = True, extra_timeout: float = 0, want_endpoint: bool = False):
        """One API call with retries. endpoint None: start at the next endpoint (round-robin) and,
        with failover, move on where the request certainly was not acted on."""
        n = len(self._endpoints)
        idx = self._pick() if endpoint is None else self._endpoints.index(endpoint)
        pinned = endpoint is not None and not failover
        payload = None if body is None else json.dumps(body).encode()
        last_error: Optional[Exception] = None
        for attempt in range(self.retries + 1):
            e = self._endpoints[idx]
            retry_after = None
            try:
                status, headers, data = self._exchange(e, method, path, payload, self.timeout + extra_timeout)
            except _NotDelivered as err:
                last_error = err
                if not pinned and n > 1:
                    idx = (idx + 1) % n
                    if attempt == 0:
                        continue  # another server is worth trying at once
            except _Lost as err:
                last_error = err
                # A POST may have been stored: only this server knows its key, so stay with it.
                if method == "POST":
                    pinned = True
            else:
                if status < 400:
                    view = self._decode(status, data, e)
                    return (view, e) if want_endpoint else view
                err = self._error(status, headers, data)
                last_error = err
                if status == 429 or status == 503:
                    retry_after = err.retry_after  # refused: nothing stored, another server may take it
                    if not pinned and n > 1:
                        idx = (idx + 1) % n
                elif status >= 500:
                    if method == "POST":
                        pinned = True  # a 500 after the store is possible: keep the key with this server
                else:
                    raise err  # 4xx: the request itself is wrong; retrying cannot help
            if attempt < self.retries:
                self._sleep_backoff(attempt, retry_after)
        if isinstance(last_error, ApiError):
            raise last_error
        raise ConnectionFailed(f"{method} {path}: gave up after {self.retries + 1} attempts: {last_error}")

    def _exchange(self, e: _Endpoint, method: str, path: str, payload: Optional[bytes], timeout: float):
        headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        # A kept-alive connection the server has since closed fails on first use; the same
        # request on a fresh connection is the answer to that, once.
        for fresh in (False, True):
            reused = getattr(e._local, "conn", None) is not None
            conn = e.connection(timeout)
            try:
                conn.request(method, e.prefix + path, body=payload, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                if resp.will_close:
                    e.drop()
                return resp.status, resp.headers, data
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as err:
                e.drop()
                if reused and not fresh:
                    continue
                raise _Lost(f"{e.url}: {err}") from err
            except (OSError, http.client.HTTPException) as err:  # includes socket.timeout
                e.drop()
                raise _Lost(f"{e.url}: {err}") from err
        raise AssertionError("unreachable")

    @staticmethod
    def _decode(status: int, data: bytes, e: _Endpoint) -> Any:
        try:
            return json.loads(data)
        except ValueError:
            raise ApiError(status, "bad_response", f"{e.url} answered {status} with a body that is not JSON") from None

    @staticmethod
    def _error(status: int, headers, data: bytes) -> ApiError:
        retry_after = _retry_after(headers)
        try:
            err = json.loads(data)["error"]
            if not isinstance(err, dict):
                raise TypeError
            return ApiError(status, str(err.get("code", "unknown")), str(err.get("message", "")), err.get("field"),
                            err.get("limit"), err.get("value"), retry_after)
        except (ValueError, KeyError, TypeError):
            text = data[:200].decode("utf-8", "replace")
            return ApiError(status, "http_" + str(status), text or http.client.responses.get(status, ""), None, None,
                            None, retry_after)

