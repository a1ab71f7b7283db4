"""The client's own behaviour against the stand-in server: retries on 429/5xx/connection
errors, idempotency keys that make a retried POST run once, failover between endpoints,
polling, bounded concurrency, typed errors and option checking. (The real server's behaviour
is test_server.py's.)"""

from __future__ import annotations

import json
import socket

import pytest

from ptxforge_client import ApiError, Client, ConnectionFailed, RunTimeout


def closed_port_url() -> str:
    """A loopback URL where nothing listens: connecting is refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def fast(urls, **kw) -> Client:
    kw.setdefault("retries", 4)
    return Client(urls, backoff=0.01, max_backoff=0.05, **kw)


def keys(server) -> list:
    return [json.loads(r["body"])["idempotency_key"] for r in server.posts()]


def test_run_returns_done_view_with_record(fake):
    f = fake()
    view = fast(f.url).run("level1/vector_add", "PTX", device="cpu", seeds=2)
    assert view["state"] == "done" and view["record"]["passed"] is True
    body = json.loads(f.posts()[0]["body"])
    assert body["task"] == "level1/vector_add" and body["candidate"] == "PTX"
    assert body["device"] == "cpu" and body["seeds"] == 2 and body["language"] == "ptx"
    assert "wait=" in f.posts()[0]["path"]


def test_run_polls_until_done(fake):
    f = fake(polls_until_done=3)
    view = fast(f.url).run("t", "x")
    assert view["state"] == "done"
    gets = [r for r in f.requests if r["method"] == "GET"]
    assert len(gets) == 3 and all(g["path"].startswith(f"/v1/runs/{view['id']}") for g in gets)


def test_polling_does_not_spin_when_the_server_does_not_hold(fake):
    # The stand-in answers every ?wait at once, as the real server does past its cap on waiting
    # requests: the client must back off, not poll in a tight loop.
    f = fake(polls_until_done=10**6)
    with pytest.raises(RunTimeout):
        fast(f.url).run("t", "x", wait=2)
    gets = [r for r in f.requests if r["method"] == "GET"]
    assert 2 <= len(gets) <= 30


def test_submit_then_get(fake):
    f = fake(polls_until_done=2)
    c = fast(f.url)
    rid = c.submit("t", "x")
    assert c.get(rid)["state"] == "running"
    assert c.get(rid, wait=5)["state"] == "done"
    assert f.requests[-1]["path"] == f"/v1/runs/{rid}?wait=5"


def test_run_timeout_names_the_run(fake):
    f = fake(polls_until_done=10**6)
    with pytest.raises(RunTimeout) as e:
        fast(f.url).run("t", "x", wait=1)
    assert e.value.run_id == "f0-1"


def test_429_honours_retry_after_and_keeps_the_key(fake):
    f = fake()
    f.script["POST /v1/runs"] = [{"status": 429, "error": "queue_full", "retry_after": "0"},
                                 {"status": 429, "error": "rate_limited", "retry_after": "0"}]
    view = fast(f.url).run("t", "x")
    assert view["state"] == "done"
    k = keys(f)
    assert len(k) == 3 and len(set(k)) == 1
    assert len(f.runs) == 1


def test_5xx_retried_with_the_same_key(fake):
    f = fake()
    f.script["POST /v1/runs"] = [{"status": 500}, {"status": 503, "error": "shutting_down", "retry_after": "0"}]
    fast(f.url).run("t", "x")
    assert len(set(keys(f))) == 1 and len(keys(f)) == 3 and len(f.runs) == 1


def test_lost_answer_after_store_runs_once(fake):
    # The server stored the run and the connection dropped before the answer: the retry carries
    # the same key, so the server answers with the first run instead of a second one.
    f = fake()
    f.script["POST /v1/runs"] = [{"drop": True}, {"drop": True}]
    view = fast(f.url).run("t", "x")
    assert len(f.runs) == 1 and view["id"] == "f0-1" and view.get("replayed") is True
    assert len(keys(f)) == 3 and len(set(keys(f))) == 1


def test_lost_post_stays_with_its_server(fake):
    # Two endpoints: a POST that may have been stored on the first is never sent to the second,
    # even when the first then refuses (a refusal would otherwise move a run to another server).
    a, b = fake(), fake()
    a.script["POST /v1/runs"] = [{"drop": True}, {"status": 503, "error": "shutting_down", "retry_after": "0"}]
    c = fast([a.url, b.url])
    c.run("t", "x")
    assert len(a.runs) == 1 and len(b.runs) == 0 and not b.posts()


def test_timeout_is_retried(fake):
    f = fake()
    f.script["GET /healthz"] = [{"hang": True}]
    c = fast(f.url, timeout=0.5)
    assert c.health()["status"] == "ok"
    assert len([r for r in f.requests if r["path"] == "/healthz"]) == 2


def test_gives_up_after_retries(fake):
    f = fake()
    f.script["POST /v1/runs"] = [{"status": 500}] * 10
    with pytest.raises(ApiError) as e:
        fast(f.url, retries=2).run("t", "x")
    assert e.value.status == 500 and len(f.posts()) == 3


def test_unreachable_server_is_connection_failed():
    with pytest.raises(ConnectionFailed):
        fast(closed_port_url(), retries=1).health()


def test_failover_from_a_dead_endpoint(fake):
    f = fake()
    c = fast([closed_port_url(), f.url])
    for _ in range(4):
        assert c.run("t", "x")["state"] == "done"
    assert len(f.runs) == 4


def test_failover_on_refusal(fake):
    a, b = fake(), fake()
    a.script["POST /v1/runs"] = [{"status": 503, "error": "shutting_down", "retry_after": "0"}]
    view = fast([a.url, b.url]).run("t", "x")
    assert view["id"] == "f1-1" and not a.runs


def test_round_robin_and_get_goes_to_the_owner(fake):
    a, b = fake(polls_until_done=1), fake(polls_until_done=1)
    c = fast([a.url, b.url])
    ids = [c.submit("t", str(i)) for i in range(4)]
    assert len(a.runs) == 2 and len(b.runs) == 2
    for rid in ids:
        assert c.get(rid)["state"] == "done"  # a 404 would raise: each GET reached its run's server


def test_get_of_a_foreign_run_asks_every_endpoint(fake):
    a, b = fake(polls_until_done=1), fake(polls_until_done=1)
    rid = fast(b.url).submit("t", "x")
    assert fast([a.url, b.url]).get(rid)["id"] == rid


def test_run_many_keeps_order_and_bounds_concurrency(fake):
    f = fake(hold_until_inflight=3)
    items = [{"task": "t", "candidate": f"c{i}", "device": "cpu"} for i in range(9)]
    views = fast(f.url).run_many(items, concurrency=3)
    assert [v["record"]["candidate_text"] for v in views] == [f"c{i}" for i in range(9)]
    assert f.max_inflight == 3
    assert len(set(keys(f))) == 9 and len(f.runs) == 9


def test_run_many_retries_per_item_without_duplicates(fake):
    f = fake()
    f.script["POST /v1/runs"] = [{"status": 429, "error": "queue_full", "retry_after": "0"}, {"drop": True},
                                 {"status": 500}]
    views = fast(f.url).run_many([("t", f"c{i}") for i in range(6)], concurrency=4)
    assert [v["record"]["candidate_text"] for v in views] == [f"c{i}" for i in range(6)]
    assert len(f.runs) == 6 and len(set(keys(f))) == 6


def test_run_many_errors_in_place_or_raised(fake):
    f = fake()
    f.script["POST /v1/runs"] = [{"status": 400, "error": "bad_request"}]
    c = fast(f.url)
    out = c.run_many([("t", "x")], return_exceptions=True)
    assert isinstance(out[0], ApiError) and out[0].code == "bad_request"
    f.script["POST /v1/runs"] = [{"status": 400, "error": "bad_request"}]
    with pytest.raises(ApiError):
        c.run_many([("t", "x"), ("t", "y")], concurrency=1)


def test_4xx_is_not_retried_and_is_typed(fake):
    f = fake()
    f.script["POST /v1/runs"] = [{"status": 413, "error": "too_large"}]
    with pytest.raises(ApiError) as e:
        fast(f.url).run("t", "x")
    assert e.value.status == 413 and e.value.code == "too_large" and e.value.limit == "max_queue"
    assert len(f.posts()) == 1


def test_unknown_option_is_a_type_error_before_sending(fake):
    f = fake()
    c = fast(f.url)
    with pytest.raises(TypeError, match="'seedz'"):
        c.run("t", "x", seedz=3)
    with pytest.raises(ValueError, match="device"):
        c.run("t", "x", device="tpu")
    with pytest.raises(TypeError, match="seeds"):
        c.run("t", "x", seeds="3")
    with pytest.raises(TypeError, match=r"items\[1\]"):
        c.run_many([("t", "x"), {"task": "t", "candidate": "y", "bogus": 1}])
    assert f.requests == []


def test_token_is_sent_as_bearer(fake):
    f = fake()
    fast(f.url, token="s3cret").tasks()
    assert f.requests[0]["headers"]["Authorization"] == "Bearer s3cret"


def test_tasks_and_task(fake):
    f = fake()
    c = fast(f.url)
    assert c.tasks()[0]["name"] == "level1/vector_add"
    assert c.task("level1/vector_add")["name"] == "level1/vector_add"
    assert f.requests[-1]["path"] == "/v1/tasks/level1/vector_add"


def test_bad_endpoint_urls():
    with pytest.raises(ValueError):
        Client([])
    with pytest.raises(ValueError):
        Client("ftp://x")
