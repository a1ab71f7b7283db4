#!/usr/bin/env python3
"""Load and fault figures for `ptxforge serve` on loopback, verifying on the CPU engine.

Why: a trainer sizes its rollouts by the service's throughput and latency, and trusts its
rewards only if a fault never loses or repeats a run. This script measures both, bounded in
time, against a server it starts itself:

  load    verdicts/s and p50/p99 latency (submit to verdict) for vector_add candidates with 1, 8
          and 64 concurrent clients, --seconds per level; and, for comparison, one
          `ptxforge run --device cpu` process per candidate, one after another.
  faults  - a worker killed mid-job: the emu-worker child of the server is SIGKILLed while a
            batch runs; every run must still end done (the killed job with a verdict).
          - the server SIGKILLed mid-batch and restarted on the same database: every accepted
            id must end done after the restart (runs lost must be 0).
          - a hanging candidate (an infinite loop) with timeout_s: its verdict and how long it
            took, and whether the server answered /healthz meanwhile.
          - 1,000 malformed requests: the answers by status; any 5xx, dropped connection or a
            server that no longer serves is a finding.

Prints a table and writes JSON (--out). Standard library only.

    python3 perf/serve_load.py --bin build/dev/tools/ptxforge/ptxforge --seconds 10
"""

from __future__ import annotations

import argparse
import glob
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from ptxforge_client import Client, ClientError, reward  # noqa: E402

TASK = "level1/vector_add"
LISTENING = re.compile(r"ptxforge serve: listening on (http://[^\s]+)")


# ---- The server ----

# Where runs verify: "cpu" (the CPU engine, the default) or "gpu" with --gpus (then the server has
# GPU workers only and the one-process comparison runs `ptxforge run --device gpu`).
DEVICE = "cpu"
GPUS = "none"

class Server:
    def __init__(self, binary: str, db: Path, cpu_workers: int, extra=()):
        self.args = [binary, "serve", "--listen", "127.0.0.1:0", "--cpu-workers", str(cpu_workers), "--gpus", GPUS,
                     "--db", str(db), *extra]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=str(ROOT))
        self.url = None
        self.log: list[str] = []
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.log.append(line)
                m = LISTENING.search(line)
                if m and self.url is None:
                    self.url = m.group(1).rstrip(".,")
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(120) or self.url is None:
            self.proc.kill()
            raise SystemExit("ptxforge serve did not start:\n" + "".join(self.log[-40:]))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> int:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -999

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(60)


def descendants(pid: int) -> list[int]:
    """Every process below pid, from /proc/<pid>/task/<tid>/children."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for child_file in glob.glob(f"/proc/{p}/task/*/children"):
            try:
                kids = [int(x) for x in Path(child_file).read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def find_binary() -> str:
    for b in sorted(glob.glob(str(ROOT / "build/*/tools/ptxforge/ptxforge")), key=os.path.getmtime, reverse=True):
        if subprocess.run([b, "serve", "--help"], capture_output=True).returncode == 0:
            return b
    raise SystemExit("no build/*/tools/ptxforge/ptxforge with a 'serve' command: pass --bin")


# ---- Load ----

def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def load_level(url: str, ptx: str, clients: int, seconds: float) -> dict:
    client = Client(url, timeout=120, retries=8)
    lat: list[float] = []
    errors: list[str] = []
    rewards: dict = {}
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    counter = iter(range(10**9))

    def worker():
        while time.monotonic() < deadline:
            with lock:
                n = next(counter)
            text = f"{ptx}\n// load candidate {clients}-{n}\n"  # unique text: no cache can answer it
            t0 = time.monotonic()
            try:
                view = client.run(TASK, text, device=DEVICE, wait=600)
            except ClientError as e:
                with lock:
                    errors.append(str(e)[:200])
                continue
            dt = time.monotonic() - t0
            r = reward(view["record"])
            with lock:
                lat.append(dt)
                rewards[r] = rewards.get(r, 0) + 1

    start = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    return {"clients": clients, "verdicts": len(lat), "seconds": round(elapsed, 2),
            "verdicts_per_s": round(len(lat) / elapsed, 2), "p50_s": round(pct(lat, 50), 3),
            "p99_s": round(pct(lat, 99), 3), "errors": len(errors), "first_errors": errors[:3],
            "rewards": {str(k): v for k, v in rewards.items()}}


def cold_processes(binary: str, ptx: str, seconds: float) -> dict:
    """One `ptxforge run --device DEVICE --json` process per candidate, one after another."""
    lat, passed = [], 0
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "cand.ptx"
        f.write_text(ptx)
        deadline = time.monotonic() + seconds
        start = time.monotonic()
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            r = subprocess.run([binary, "run", TASK, str(f), "--device", DEVICE, "--json"], capture_output=True,
                               text=True, cwd=str(ROOT))
            lat.append(time.monotonic() - t0)
            try:
                passed += json.loads(r.stdout)[0].get("passed") is True
            except (ValueError, IndexError, KeyError):
                pass
        elapsed = time.monotonic() - start
    return {"clients": "1 process/candidate", "verdicts": len(lat), "seconds": round(elapsed, 2),
            "verdicts_per_s": round(len(lat) / elapsed, 2), "p50_s": round(pct(lat, 50), 3),
            "p99_s": round(pct(lat, 99), 3), "errors": len(lat) - passed}


# ---- Faults ----

def wait_all(client: Client, ids: list[str], budget_s: float) -> dict:
    """Each id's final view (or the error that ended waiting on it)."""
    out, deadline = {}, time.monotonic() + budget_s
    for rid in ids:
        while True:
            left = deadline - time.monotonic()
            try:
                view = client.get(rid, wait=max(1, min(60, int(left))))
            except ClientError as e:
                out[rid] = {"error": str(e)[:200]}
                break
            if view["state"] == "done" or left <= 0:
                out[rid] = view
                break
    return out


def fault_worker_kill(url: str, server: Server, ptx: str, n: int) -> dict:
    client = Client(url, timeout=120, retries=8)
    ids = [client.submit(TASK, f"{ptx}\n// wk {i}\n", device=DEVICE, seeds=3) for i in range(n)]
    killed = None
    deadline = time.monotonic() + 60
    while killed is None and time.monotonic() < deadline:
        for pid in descendants(server.proc.pid):
            if ("emu-worker" if DEVICE == "cpu" else "worker") in cmdline(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                except ProcessLookupError:
                    continue
                break
        else:
            time.sleep(0.01)  # polling /proc for a child to appear: there is no event to wait on
    views = wait_all(client, ids, 300)
    done = [v for v in views.values() if v.get("state") == "done"]
    verdicts: dict = {}
    for v in done:
        verdicts[v["record"]["verdict"][:80]] = verdicts.get(v["record"]["verdict"][:80], 0) + 1
    return {"runs": n, "killed_pid": killed, "done": len(done), "lost": n - len(done), "verdicts": verdicts,
            "server_alive": server.alive(), "health_after": _health(client)}


def fault_server_kill(binary: str, workers: int, ptx: str, n: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "kill.db"
        s = Server(binary, db, workers)
        client = Client(s.url, timeout=120, retries=8)
        ids = [client.submit(TASK, f"{ptx}\n// sk {i}\n", device=DEVICE, seeds=3) for i in range(n)]
        # Kill once the first few runs are done, so the batch is part done, part running, part queued.
        done_before = 0
        for rid in ids[: max(1, n // 8)]:
            done_before += client.get(rid, wait=120)["state"] == "done"
        t_kill = time.monotonic()
        s.kill()
        s2 = Server(binary, db, workers)
        restart_s = time.monotonic() - t_kill
        c2 = Client(s2.url, timeout=120, retries=8)
        views = wait_all(c2, ids, 600)
        done = [v for v in views.values() if v.get("state") == "done"]
        passed = sum(v["record"].get("passed") is True for v in done)
        rc = s2.stop()
    return {"runs": n, "done_before_kill": done_before, "restart_s": round(restart_s, 2),
            "done_after_restart": len(done), "lost": n - len(done), "passed": passed, "exit_after_sigterm": rc}


def fault_hang(url: str, ptx: str) -> dict:
    spin = ptx.replace("    ld.param.u64 %pa, [a];", "SPIN:\n    bra.uni SPIN;\n    ld.param.u64 %pa, [a];", 1)
    client = Client(url, timeout=120, retries=4)
    result: dict = {}

    def run():
        t0 = time.monotonic()
        try:
            v = client.run(TASK, spin, device=DEVICE, timeout_s=5, wait=300)
            result.update(verdict=v["record"]["verdict"][:160], reward=reward(v["record"]))
        except ClientError as e:
            result.update(error=str(e)[:200])
        result["seconds_to_verdict"] = round(time.monotonic() - t0, 2)

    t = threading.Thread(target=run)
    t.start()
    health = []
    while t.is_alive():
        t0 = time.monotonic()
        ok = _health(client)
        health.append((ok, time.monotonic() - t0))
        t.join(0.5)
    result["health_checks_during"] = len(health)
    result["health_ok_during"] = sum(ok for ok, _ in health)
    result["health_max_s"] = round(max((dt for _, dt in health), default=0), 3)
    return result


def malformed_bodies(rng: random.Random, ptx: str) -> list[tuple[str, str, bytes, dict]]:
    kinds = []
    good = {"task": TASK, "candidate": ptx}
    for i in range(1000):
        k = i % 10
        path, method, headers = "/v1/runs", "POST", {"Content-Type": "application/json"}
        if k == 0:
            body = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300)))
        elif k == 1:
            s = json.dumps(good)
            body = s[: rng.randint(0, len(s) - 1)].encode()
        elif k == 2:
            body = json.dumps(dict(good, **{f"x{rng.randint(0, 99)}": 1})).encode()
        elif k == 3:
            body = json.dumps(dict(good, seeds=rng.choice([0, 11, -1, 1e300, "3", None, [], True]))).encode()
        elif k == 4:
            body = json.dumps(dict(good, task=rng.choice(["../../etc/passwd", "/etc/passwd", "", "a" * 500,
                                                          "level1/../../x", "tasks\\x", "é"]))).encode()
        elif k == 5:
            body = json.dumps(dict(good, seed=rng.choice(["0x", "-1", "1" * 40, "0xzz", 1.5, -3]))).encode()
        elif k == 6:
            body = json.dumps({"runs": [good] * rng.randint(0, 3) + [{"task": 1}]}).encode()
            path = "/v1/batch"
        elif k == 7:
            body = json.dumps(rng.choice([[], None, 3, "x", {"runs": "x"}])).encode()
        elif k == 8:
            body = b'{"task": "' + b"[" * 5000 + b'"}' if rng.random() < 0.5 else b"[" * 10000
        else:
            body = json.dumps(dict(good, timeout_s=rng.choice([0, -1, 1e9, "5", None]))).encode()
            method = rng.choice(["POST", "PUT", "PATCH"])
        kinds.append((method, path, body, headers))
    return kinds


def fault_malformed(url: str, ptx: str) -> dict:
    from urllib.parse import urlsplit
    u = urlsplit(url)
    rng = random.Random(28)
    statuses: dict = {}
    failures: list[str] = []
    t0 = time.monotonic()
    for method, path, body, headers in malformed_bodies(rng, ptx):
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            statuses[resp.status] = statuses.get(resp.status, 0) + 1
            if resp.status >= 500 or resp.status < 400:
                failures.append(f"{method} {path} {body[:60]!r} -> {resp.status} {data[:120]!r}")
            else:
                try:
                    json.loads(data)["error"]["code"]
                except (ValueError, KeyError, TypeError):
                    failures.append(f"{method} {path} {body[:60]!r} -> {resp.status}, not a JSON error: {data[:120]!r}")
        except (OSError, http.client.HTTPException) as e:
            statuses["connection error"] = statuses.get("connection error", 0) + 1
            failures.append(f"{method} {path} {body[:60]!r} -> {type(e).__name__}: {e}")
        finally:
            conn.close()
    elapsed = time.monotonic() - t0
    client = Client(url, timeout=120, retries=4)
    after = client.run(TASK, ptx, device=DEVICE, wait=300)
    return {"requests": 1000, "seconds": round(elapsed, 2), "by_status": {str(k): v for k, v in statuses.items()},
            "findings": len(failures), "first_findings": failures[:5], "health_after": _health(client),
            "valid_run_after_passes": after["record"].get("passed") is True}


def _health(client: Client) -> bool:
    try:
        return client.health().get("status") == "ok"
    except ClientError:
        return False


# ---- Main ----

def main() -> int:
    ap = argparse.ArgumentParser(description="load and fault figures for ptxforge serve (CPU engine)")
    ap.add_argument("--bin", help="the ptxforge binary (default: the newest build/*/ with serve)")
    ap.add_argument("--seconds", type=float, default=10, help="seconds per load level")
    ap.add_argument("--levels", default="1,8,64")
    ap.add_argument("--cpu-workers", type=int, default=2)
    ap.add_argument("--fault-runs", type=int, default=16, help="runs per fault batch")
    ap.add_argument("--no-load", action="store_true")
    ap.add_argument("--no-faults", action="store_true")
    ap.add_argument("--gpus", help="verify on these GPUs (serve's --gpus, e.g. 0) instead of the CPU engine; "
                    "the server then has GPU workers only (--cpu-workers is ignored)")
    ap.add_argument("--out", default="serve_load.json")
    args = ap.parse_args()
    global DEVICE, GPUS
    if args.gpus:
        DEVICE, GPUS, args.cpu_workers = "gpu", args.gpus, 0
    binary = args.bin or find_binary()
    ptx = (ROOT / "tasks/level1/vector_add/solution.ptx").read_text()
    report: dict = {"binary": binary, "device": DEVICE, "gpus": GPUS, "cpu_workers": args.cpu_workers, "cpus": os.cpu_count(),
                    "seconds_per_level": args.seconds, "load": [], "faults": {}}
    with tempfile.TemporaryDirectory() as d:
        server = Server(binary, Path(d) / "serve.db", args.cpu_workers)
        print(f"server {server.url} (pid {server.proc.pid}), GPUs {GPUS}, {args.cpu_workers} CPU workers", flush=True)
        try:
            if not args.no_load:
                Client(server.url).run(TASK, ptx, device=DEVICE, wait=300)  # warm: the reference, the workers
                for n in (int(x) for x in args.levels.split(",")):
                    row = load_level(server.url, ptx, n, args.seconds)
                    report["load"].append(row)
                    print(f"  load {n:>3} clients: {row['verdicts_per_s']} verdicts/s, p50 {row['p50_s']} s, "
                          f"p99 {row['p99_s']} s, {row['errors']} errors", flush=True)
                row = cold_processes(binary, ptx, args.seconds)
                report["load"].append(row)
                print(f"  one process per candidate: {row['verdicts_per_s']} verdicts/s, p50 {row['p50_s']} s", flush=True)
            if not args.no_faults:
                f = report["faults"]
                f["worker_killed"] = fault_worker_kill(server.url, server, ptx, args.fault_runs)
                print(f"  worker killed: {f['worker_killed']}", flush=True)
                f["hanging_candidate"] = fault_hang(server.url, ptx)
                print(f"  hanging candidate: {f['hanging_candidate']}", flush=True)
                f["malformed"] = fault_malformed(server.url, ptx)
                print(f"  malformed: {f['malformed']}", flush=True)
                f["server_killed"] = fault_server_kill(binary, args.cpu_workers, ptx, args.fault_runs)
                print(f"  server killed: {f['server_killed']}", flush=True)
        finally:
            report["exit_after_sigterm"] = server.stop()
            report["server_crashed"] = report["exit_after_sigterm"] not in (0,)
    print()
    print(f"{'clients':<22}{'verdicts':>9}{'verdicts/s':>12}{'p50 s':>9}{'p99 s':>9}{'errors':>8}")
    for r in report["load"]:
        print(f"{str(r['clients']):<22}{r['verdicts']:>9}{r['verdicts_per_s']:>12}{r['p50_s']:>9}{r['p99_s']:>9}"
              f"{r['errors']:>8}")
    for name, r in report["faults"].items():
        print(f"{name:<22}{json.dumps(r)[:300]}")
    print(f"server exit after SIGTERM: {report['exit_after_sigterm']}")
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
