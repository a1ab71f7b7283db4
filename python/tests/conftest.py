"""Fixtures: a real `ptxforge serve` on loopback (CPU engine), and the stand-in server.

The real server's binary comes from PTXFORGE_BIN (ctest sets it); without it, the newest
build/*/tools/ptxforge/ptxforge is used. Tests that need it skip, saying why, while that binary
has no `serve` command.
"""

from __future__ import annotations

import glob
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Optional

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # the package, without installing it
sys.path.insert(0, str(HERE))

from fake_server import FakeServer  # noqa: E402

LISTENING = re.compile(r"ptxforge serve: listening on (http://[^\s]+)")


def find_binary() -> Optional[str]:
    env = os.environ.get("PTXFORGE_BIN")
    if env:
        return env
    found = sorted(glob.glob(str(REPO / "build/*/tools/ptxforge/ptxforge")), key=os.path.getmtime, reverse=True)
    for b in found:
        if _has_serve(b):
            return b
    return found[0] if found else None


def _has_serve(binary: str) -> bool:
    try:
        r = subprocess.run([binary, "serve", "--help"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


class ServerProcess:
    """One `ptxforge serve` child: its URL once it listens, its stderr kept for failure messages."""

    def __init__(self, binary: str, db: Path, extra: list[str] = (), start_timeout: float = 60):
        self.binary, self.db = binary, db
        self.args = [binary, "serve", "--listen", "127.0.0.1:0", "--cpu-workers", "2", "--gpus", "none",
                     "--db", str(db), *extra]
        self.log: list[str] = []
        self.url: Optional[str] = None
        self._ready = threading.Event()
        env = dict(os.environ)
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     cwd=str(REPO), env=env)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(start_timeout) or self.url is None:
            self.kill()
            raise RuntimeError("ptxforge serve did not report its address:\n" + self.stderr())

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.log.append(line)
            m = LISTENING.search(line)
            if m and self.url is None:
                self.url = m.group(1).rstrip(".,")
                self._ready.set()
        self._ready.set()  # exited before listening: the waiter sees url None

    def stderr(self) -> str:
        return "".join(self.log[-80:])

    def pid(self) -> int:
        return self.proc.pid

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM, then the exit code (None-safe: a server that does not exit is killed and fails)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("ptxforge serve did not exit within %s s of SIGTERM:\n%s" % (timeout, self.stderr()))
        self._reader.join(10)
        return rc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self._reader.join(10)


@pytest.fixture(scope="session")
def ptxforge_bin() -> str:
    b = find_binary()
    if b is None:
        pytest.skip("no ptxforge binary: set PTXFORGE_BIN or build tools/ptxforge")
    if not _has_serve(b):
        pytest.skip(f"{b} has no 'serve' command yet")
    return b


@pytest.fixture(scope="session")
def server(ptxforge_bin, tmp_path_factory):
    """One server for the session's read-mostly tests; stopped with SIGTERM, which must exit 0."""
    s = ServerProcess(ptxforge_bin, tmp_path_factory.mktemp("serve") / "serve.db")
    yield s
    rc = s.stop()
    assert rc == 0, f"ptxforge serve exited {rc} after SIGTERM:\n{s.stderr()}"


@pytest.fixture
def start_server(ptxforge_bin, tmp_path):
    """A factory for servers a test configures itself (tokens, limits, restarts); each is
    stopped at the end (a test that killed one on purpose is left alone)."""
    started: list[ServerProcess] = []

    def start(extra: list[str] = (), db: Optional[Path] = None) -> ServerProcess:
        s = ServerProcess(ptxforge_bin, db or tmp_path / f"serve{len(started)}.db", list(extra))
        started.append(s)
        return s

    yield start
    for s in started:
        if s.proc.poll() is None:
            rc = s.stop()
            assert rc == 0, f"ptxforge serve exited {rc} after SIGTERM:\n{s.stderr()}"


@pytest.fixture
def fake():
    servers: list[FakeServer] = []

    def make(**kw) -> FakeServer:
        s = FakeServer(name=f"f{len(servers)}", **kw)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def vector_add_ptx() -> str:
    return (REPO / "tasks/level1/vector_add/solution.ptx").read_text()
