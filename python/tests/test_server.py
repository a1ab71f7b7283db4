"""The client against a real `ptxforge serve` on loopback, verifying on the CPU engine: verdicts
and rewards for right, wrong, broken and hanging candidates, idempotency, typed errors, what a
client must never read (held-back sizes, server paths, tokens), auth, and runs surviving a
killed server. Skips, saying why, while the binary has no `serve` command."""

from __future__ import annotations

import http.client
import json
import re
import socket
import urllib.parse

import pytest

from ptxforge_client import PENALTIES, ApiError, Client, reward

TASK = "level1/vector_add"
# vector_add's held-back size sets (tasks/level1/vector_add/task.toml): names and sizes that no
# answer may carry.
HELD_BACK = re.compile(r"\b(odd|tiny|tail|1000003|1_000_003|4099)\b")


def raw(url: str, method: str, path: str, body=None, headers=None, timeout=60):
    """One request without the client (malformed bodies, missing tokens): (status, headers, json|text)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    h = {"Content-Type": "application/json", **(headers or {})}
    try:
        conn.request(method, path, body=data, headers=h)
    except (BrokenPipeError, ConnectionResetError):
        pass  # a server may answer (413) and close before a huge body is all sent: read that answer
    resp = conn.getresponse()
    text = resp.read().decode("utf-8", "replace")
    conn.close()
    try:
        return resp.status, resp.headers, json.loads(text)
    except ValueError:
        return resp.status, resp.headers, text


def wrong(ptx: str) -> str:
    out = ptx.replace("add.f32 %z, %x, %y;", "sub.f32 %z, %x, %y;")
    assert out != ptx
    return out


def hanging(ptx: str) -> str:
    out = ptx.replace("    ld.param.u64 %pa, [a];", "SPIN:\n    bra.uni SPIN;\n    ld.param.u64 %pa, [a];", 1)
    assert out != ptx
    return out


@pytest.fixture(scope="module")
def client(server):
    return Client(server.url, timeout=60, retries=3)


def test_health(client):
    h = client.health()
    assert h["status"] == "ok" and h["workers"]["cpu"] == 2 and h["workers"]["gpu"] == 0
    assert isinstance(h["queue_depth"], int)


def test_tasks_show_no_held_back_sizes(client):
    names = [t["name"] for t in client.tasks()]
    assert TASK in names
    t = client.task(TASK)
    assert t["name"] == TASK and "vector_add" in t["prompt"]
    assert set(t["shown_size_sets"]) <= {"small", "large"}
    assert not HELD_BACK.search(json.dumps(t)), "held-back size set in the task view"
    assert client.task("vector_add")["name"] in ("vector_add", TASK)  # the short name where unique


def test_solution_passes_on_the_cpu_engine(client, vector_add_ptx):
    view = client.run(TASK, vector_add_ptx, device="cpu", wait=300)
    rec = view["record"]
    assert view["state"] == "done" and view["id"]
    assert rec["passed"] is True and rec["verified_by"] == "cpu_engine" and rec["gpu_verified"] is False
    assert reward(rec) == 1.0
    assert "counts" not in rec.get("verify", {}) and "phases" not in rec.get("verify", {})
    for case in rec["verify"]["cases"]:
        if not case["shown"]:
            assert set(case) == {"size_set", "shown", "pass", "problems"} and case["size_set"] == "held-back"
    assert not HELD_BACK.search(json.dumps(view)), "held-back size set in the record"


def test_wrong_output_is_a_verify_penalty_without_leaks(client, vector_add_ptx):
    view = client.run(TASK, wrong(vector_add_ptx), device="cpu", wait=300)
    rec = view["record"]
    assert rec["passed"] is False
    assert reward(rec) == PENALTIES["verify"], rec["verdict"]
    assert not HELD_BACK.search(json.dumps(view)), "held-back size set in a failed record"


def test_broken_ptx_fails_check(client, repo):
    view = client.run(TASK, (repo / "examples/broken_vector_add.ptx").read_text(), device="cpu", wait=300)
    assert view["record"]["passed"] is False and reward(view["record"]) == PENALTIES["check"]


def test_hanging_candidate_is_a_verdict(client, vector_add_ptx):
    view = client.run(TASK, hanging(vector_add_ptx), device="cpu", timeout_s=5, wait=300)
    rec = view["record"]
    assert rec["passed"] is False
    assert reward(rec) == PENALTIES["verify"], rec["verdict"]
    assert client.health()["status"] == "ok"  # and the server still serves


def test_run_many_in_order_with_rewards(client, vector_add_ptx):
    items = [{"task": TASK, "candidate": c, "device": "cpu", "seeds": 1}
             for c in (vector_add_ptx, wrong(vector_add_ptx), vector_add_ptx, wrong(vector_add_ptx))]
    views = client.run_many(items, concurrency=4, wait=300)
    assert [reward(v["record"]) for v in views] == [1.0, PENALTIES["verify"], 1.0, PENALTIES["verify"]]
    assert len({v["id"] for v in views}) == 4


def test_submit_get_and_idempotency(client, vector_add_ptx):
    rid = client.submit(TASK, vector_add_ptx, device="cpu", idempotency_key="same-key-1")
    again = client.submit(TASK, "different text", device="cpu", idempotency_key="same-key-1")
    assert again == rid
    view = client.get(rid, wait=120)
    assert view["state"] == "done" and view["task"] in (TASK, "vector_add") and view["record"]["passed"] is True
    status, _, body = raw(client.endpoints[0], "POST", "/v1/runs?wait=5",
                          {"task": TASK, "candidate": "x", "idempotency_key": "same-key-1"})
    assert status == 200 and body["id"] == rid and body.get("replayed") is True


def test_seed_is_returned_and_reproducible(client, vector_add_ptx):
    v = client.run(TASK, vector_add_ptx, device="cpu", seed="0x2a", seeds=1, wait=300)
    assert v["record"]["seed"] == "42"


def test_unknown_run_is_not_found(client):
    with pytest.raises(ApiError) as e:
        client.get("no-such-run")
    assert e.value.status == 404 and e.value.code == "not_found"


def test_unknown_task_names_no_path(client, repo):
    with pytest.raises(ApiError) as e:
        client.run(TASK + "_nope", "x", device="cpu")
    assert e.value.status == 404 and e.value.code == "unknown_task"
    assert str(repo) not in e.value.message and "task.toml" not in e.value.message


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "level1/../level1/vector_add", "a" * 129,
                                  "level1/vector_add\u0000", "tasks/level1/vector_add/task.toml"])
def test_path_like_task_names_are_refused(server, name):
    status, _, body = raw(server.url, "POST", "/v1/runs", {"task": name, "candidate": "x"})
    assert status in (400, 404), body
    assert body["error"]["code"] in ("bad_request", "unknown_task")
    assert "root:" not in json.dumps(body)


@pytest.mark.parametrize("body,field", [
    ({"task": TASK, "candidate": "x", "seedz": 1}, "seedz"),
    ({"task": TASK, "candidate": "x", "seeds": 0}, "seeds"),
    ({"task": TASK, "candidate": "x", "seeds": "3"}, "seeds"),
    ({"task": TASK, "candidate": "x", "device": "tpu"}, "device"),
    ({"task": TASK, "candidate": ""}, "candidate"),
    ({"task": TASK}, "candidate"),
    ({"candidate": "x"}, "task"),
])
def test_bad_fields_are_named(server, body, field):
    status, _, answer = raw(server.url, "POST", "/v1/runs", body)
    assert status == 400 and answer["error"]["code"] == "bad_request"
    assert answer["error"].get("field") == field, answer


def test_batch_names_the_bad_item(server, vector_add_ptx):
    runs = [{"task": TASK, "candidate": vector_add_ptx}] * 3 + [{"task": TASK, "candidate": "x", "seeds": 11}]
    status, _, answer = raw(server.url, "POST", "/v1/batch", {"runs": runs})
    assert status == 400 and answer["error"].get("field") == "runs[3].seeds", answer


@pytest.mark.parametrize("body", [b"{", b"[]", b"null", b"\xff\xfe", b'{"task": 1, "candidate": "x"}', b""])
def test_malformed_bodies_are_400(server, body):
    status, _, answer = raw(server.url, "POST", "/v1/runs", body)
    assert status == 400 and answer["error"]["code"] == "bad_request", answer


def test_huge_candidate_is_too_large(server):
    status, _, answer = raw(server.url, "POST", "/v1/runs", {"task": TASK, "candidate": "/" * (64 << 20)})
    assert status == 413 and answer["error"]["code"] == "too_large"
    assert answer["error"]["limit"] in ("max_body_bytes", "max_candidate_bytes") and answer["error"]["value"] > 0


def test_unknown_route_and_method(server):
    assert raw(server.url, "GET", "/v1/nothing")[0] == 404
    assert raw(server.url, "DELETE", "/v1/runs")[0] in (404, 405)


def test_client_that_disconnects_mid_request_leaves_the_server_serving(server, client):
    u = urllib.parse.urlsplit(server.url)
    for _ in range(20):
        s = socket.create_connection((u.hostname, u.port), timeout=10)
        s.sendall(b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"ta")
        s.close()
    assert client.health()["status"] == "ok"


def test_metrics_hold_no_candidate_text(server, client, vector_add_ptx):
    marker = "// marker-7f3a9c in the candidate"
    client.run(TASK, vector_add_ptx + "\n" + marker + "\n", device="cpu", wait=300)
    status, _, text = raw(server.url, "GET", "/metrics")
    assert status == 200 and "ptxforge_queue_depth" in text and "ptxforge_runs_accepted_total" in text
    assert "marker-7f3a9c" not in text and not HELD_BACK.search(text)


def test_tokens(start_server, tmp_path, vector_add_ptx):
    tokens = tmp_path / "tokens"
    tokens.write_text("# trainers\ns3cret-token-A\ns3cret-token-B\n")
    tokens.chmod(0o600)  # the server refuses a token file others can read
    s = start_server(["--token-file", str(tokens)])
    status, headers, body = raw(s.url, "GET", "/v1/tasks")
    assert status == 401 and body["error"]["code"] == "unauthorized" and "Bearer" in headers.get("WWW-Authenticate", "")
    status, _, body = raw(s.url, "GET", "/v1/tasks", headers={"Authorization": "Bearer s3cret-token-"})
    assert status == 401 and "s3cret" not in json.dumps(body)
    assert raw(s.url, "GET", "/healthz")[0] == 200  # never needs a token
    assert raw(s.url, "GET", "/metrics")[0] == 401
    a = Client(s.url, token="s3cret-token-A")
    rid = a.submit(TASK, vector_add_ptx, device="cpu", idempotency_key="k")
    # Another token's same key is another run: keys are per token.
    b = Client(s.url, token="s3cret-token-B")
    assert b.submit(TASK, vector_add_ptx, device="cpu", idempotency_key="k") != rid
    assert a.get(rid, wait=120)["record"]["passed"] is True
    with pytest.raises(ApiError) as e:
        Client(s.url, token="wrong", retries=0).tasks()
    assert e.value.status == 401
    assert "s3cret" not in s.stderr()


def test_runs_survive_a_killed_server(start_server, tmp_path, vector_add_ptx):
    db = tmp_path / "kill.db"
    s = start_server(db=db)
    c = Client(s.url, retries=2)
    ids = [c.submit(TASK, vector_add_ptx if i % 2 == 0 else wrong(vector_add_ptx), device="cpu", seeds=1)
           for i in range(8)]
    s.kill()  # SIGKILL: no chance to persist anything beyond what was stored on accept
    s2 = start_server(db=db)
    c2 = Client(s2.url, retries=2)
    for i, rid in enumerate(ids):
        view = c2.get(rid, wait=240)
        assert view["state"] == "done", view
        assert reward(view["record"]) == (1.0 if i % 2 == 0 else PENALTIES["verify"]), view["record"]["verdict"]


def test_rl_loop_example_runs(server, repo):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, str(repo / "examples/rl_loop.py"), server.url, "--steps", "1", "--batch", "3",
                        "--device", "cpu"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "step 1" in r.stdout and "mean reward" in r.stdout, r.stdout


def test_full_queue_is_retried_after_retry_after(start_server, vector_add_ptx):
    s = start_server(["--max-queue", "1"])
    c = Client(s.url, retries=30, backoff=0.05)
    items = [{"task": TASK, "candidate": f"{vector_add_ptx}\n// q{i}\n", "device": "cpu", "seeds": 1} for i in range(8)]
    views = c.run_many(items, concurrency=8, wait=300)
    assert [reward(v["record"]) for v in views] == [1.0] * 8
    assert len({v["id"] for v in views}) == 8
    status, _, text = raw(s.url, "GET", "/metrics")
    refused = re.search(r'ptxforge_http_requests_total\{code="429"\} (\d+)', text)
    assert refused and int(refused.group(1)) > 0, "no submission was refused: the test did not fill the queue"
    accepted = re.search(r"ptxforge_runs_accepted_total (\d+)", text)
    assert accepted and int(accepted.group(1)) == 8  # every retry of a refused POST ran once
