"""A real `mosaic serve` on a free loopback port, and logs to post to it."""

from __future__ import annotations

import functools
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pytest

from mosaic.config import Config
from mosaic.darshan import formats as F
from mosaic.darshan.writer import darshan_hash, write_log
from mosaic_testing.faults import node_path
from mosaic_testing.ports import free_port

MOSAIC = Path(sys.executable).with_name("mosaic")
TOKEN = "s3cret-token-for-tests"
# Small limits so the tests can cross them cheaply.
MAX_BODY = 200_000
TIMEOUT_SECONDS = 2.0
REQUEST_TIMEOUT = 1.5  # slow heads and bodies are dropped after this
MAX_CONNECTIONS = 300
WRITE_TIMEOUT = 1.0  # a client that reads none of its answers this long is cut off
MAX_PIPELINED = 40  # requests received behind the one answered; one more: 429
SPOOL_BYTES = 50_000  # bodies above this go through a temp file
MAX_INFLATED = 20 << 20
STARTUP_SECONDS = 60.0

UID, JOB_ID, APP = 4242, 777, "/apps/lmp"
CLI_FILTER = Path(__file__).resolve().parents[2] / "cluster" / "cli_filter.lua"
LUA_HARNESS = Path(__file__).resolve().parent / "run_cli_filter.lua"  # plays Slurm's lua plugin
LUA_INTERPRETERS = ["lua5.1", "lua5.2", "lua5.3", "lua5.4", "luajit"]
RUN_TIME = 100.0


def write_secret(path: Path, text: str) -> Path:
    """A token file only its owner may read (mosaic serve refuses others)."""
    path.write_text(text)
    path.chmod(0o600)
    return path


@dataclass
class Server:
    url: str
    store: Path
    process: subprocess.Popen
    token: str | None
    max_body: int = MAX_BODY
    request_timeout: float = REQUEST_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    max_inflated: int = MAX_INFLATED
    log: Path = Path("server.log")

    def client(self, token: str | None = "default") -> httpx.Client:
        token = self.token if token == "default" else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def alive(self) -> bool:
        return self.process.poll() is None and httpx.get(self.url + "/healthz").status_code == 200


def launch(
    tmp: Path,
    token: str | None,
    faults: bool = False,
    max_body: int = MAX_BODY,
    request_timeout: float = REQUEST_TIMEOUT,
    store: Path | None = None,
    max_connections: int = MAX_CONNECTIONS,
    write_timeout: float = WRITE_TIMEOUT,
    max_pipelined: int = MAX_PIPELINED,
    write_token: str | None = None,
    **settings: float,
) -> Server:
    """Start `mosaic serve` (not yet waiting for it: servers start side by side) on
    ``store`` (default: a new one in ``tmp``); ``settings``: more Config fields."""
    port = free_port()
    store = store or tmp / "store.sqlite"
    config = tmp / "service.toml"
    fields = {
        "trace_timeout_seconds": TIMEOUT_SECONDS,
        "service_max_request_bytes": max_body,
        "service_request_timeout_seconds": request_timeout,
        "service_max_connections": max_connections,
        "service_write_timeout_seconds": write_timeout,
        "service_max_pipelined_requests": max_pipelined,
        "service_spool_bytes": SPOOL_BYTES,
        "max_inflated_bytes": MAX_INFLATED,
        **settings,
    }
    config.write_text("".join(f"{key} = {value}\n" for key, value in fields.items()))
    # With faults, the same command through mosaic_testing.faulty_service (markers in a body
    # crash, hang, exhaust or break its worker); the server's own code has no test hook.
    runner = [sys.executable, "-m", "mosaic_testing.faulty_service"] if faults else [str(MOSAIC)]
    args = [
        *runner,
        "serve",
        "--create",
        "--store",
        str(store),
        "--port",
        str(port),
        "--workers",
        "2",
        "--config",
        str(config),
    ]
    if token:
        write_secret(tmp / "token", token + "\n")
        args += ["--token-file", str(tmp / "token")]
    if write_token:  # a write token apart from the read token
        write_secret(tmp / "write-token", write_token + "\n")
        args += ["--write-token-file", str(tmp / "write-token")]
    env = dict(os.environ, PYTHONPATH=node_path()) if faults else dict(os.environ)
    with open(tmp / "server.log", "wb") as log:
        process = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
    return Server(
        f"http://127.0.0.1:{port}",
        store,
        process,
        token,
        max_body,
        request_timeout,
        max_connections,
        log=tmp / "server.log",
    )


def wait_ready(server: Server) -> Server:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(server.log.read_text())
        try:
            if httpx.get(server.url + "/healthz").status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.process.kill()
    raise RuntimeError("server did not start")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="session")
def servers(tmp_path_factory):
    """Two servers started side by side: (token required + injected faults, open loopback)."""
    started = (
        launch(tmp_path_factory.mktemp("served"), TOKEN, faults=True),
        launch(tmp_path_factory.mktemp("open"), None),
    )
    try:
        yield tuple(wait_ready(server) for server in started)
    finally:
        for server in started:
            stop_server(server)


@pytest.fixture(scope="session")
def big_server(tmp_path_factory):
    """A loopback server with the default body limit (64 MB) and request timeout (10 s)."""
    started = launch(
        tmp_path_factory.mktemp("big"),
        None,
        max_body=Config().service_max_request_bytes,
        request_timeout=Config().service_request_timeout_seconds,
        service_max_queued_per_client=16,  # a burst of 12 posts from one client, all read
    )
    try:
        yield wait_ready(started)
    finally:
        stop_server(started)


@pytest.fixture(scope="session")
def twin_servers(tmp_path_factory):
    """Two `mosaic serve` processes on one store file (token required)."""
    store = tmp_path_factory.mktemp("shared") / "store.sqlite"
    started = [launch(tmp_path_factory.mktemp(f"twin{i}"), TOKEN, store=store) for i in range(2)]
    try:
        yield [wait_ready(server) for server in started]
    finally:
        for server in started:
            stop_server(server)


@pytest.fixture
def fresh_server(tmp_path):
    """A server of its own (token required) on a new store, for a test that damages it."""
    started = launch(tmp_path, TOKEN)
    try:
        yield wait_ready(started)
    finally:
        stop_server(started)


@pytest.fixture(scope="session")
def server(servers):
    """The server most tests use: token required, faults injected by markers
    (mosaic_testing.faulty_service)."""
    return servers[0]


@pytest.fixture(scope="session")
def open_server(servers):
    """A loopback server without a token."""
    return servers[1]


def stored_jobs(store: Path) -> set[str]:
    """The job ids a fresh read-only connection of another process's making sees."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return {row[0] for row in db.execute("SELECT job_id FROM jobs")}
    finally:
        db.close()


def make_log(
    write_bytes: float = 2e8,
    write_window=(1.0, 5.0),
    job_id: int = JOB_ID,
    uid: int = UID,
    extra_path: str | None = None,
    compression: str = "zlib",
    cmdline: str = f"{APP} -in in.lj",
) -> bytes:
    """A Darshan 3.41 log of one shared file written once inside ``write_window``.

    With the defaults: 200 MB written in the first quarter of a 100 s run, no
    reads, 4 opens: categories read_insignificant, write_on_start,
    metadata_insignificant_load. ``extra_path`` adds a small file record whose
    name carries arbitrary bytes (with ``compression="none"`` they show in the
    log's bytes: mosaic_testing.faulty_service's markers).
    """
    paths = ["/scratch/out.dat"] + ([extra_path] if extra_path else [])
    ids = darshan_hash(paths)
    n_c, n_f = F.RECORD_SHAPES[(F.POSIX, 4)]
    cidx, fidx = F.CANONICAL_INDEX[(F.POSIX, 4)]
    counters = np.zeros((len(paths), n_c), np.int64)
    fcounters = np.zeros((len(paths), n_f), np.float64)
    counters[:, cidx["opens"]] = 4
    counters[:, cidx["writes"]] = 10
    counters[:, cidx["bytes_written"]] = [write_bytes] + [1] * (len(paths) - 1)
    start, end = write_window
    fcounters[:, fidx["open_start"]], fcounters[:, fidx["open_end"]] = start - 0.5, start
    fcounters[:, fidx["write_start"]], fcounters[:, fidx["write_end"]] = start, end
    fcounters[:, fidx["close_start"]], fcounters[:, fidx["close_end"]] = end, end + 0.5
    posix = F.ModuleRecords(F.POSIX, 4, ids, np.full(len(paths), -1), counters, fcounters)
    job = F.Job(
        uid=uid,
        job_id=job_id,
        start=1.7e9,
        end=1.7e9 + RUN_TIME,
        run_time=RUN_TIME,
        nprocs=4,
        cmdline=cmdline,
        version="3.41",
    )
    log = F.DarshanLog(job, dict(zip(ids.tolist(), paths)), {F.POSIX: posix}, present_modules=(F.POSIX,))
    return write_log(log, "3.41", compression=compression)


@pytest.fixture(name="write_secret")
def write_secret_fixture():
    return write_secret


@pytest.fixture(scope="session")
def log_factory():
    return make_log


@pytest.fixture(scope="session")
def log_bytes() -> bytes:
    return make_log()


def epilog_post(config: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`mosaic epilog post --config CONFIG` as the epilog script runs it, in ``env``."""
    return subprocess.run(
        [str(MOSAIC), "epilog", "post", "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def site_env(server, folder: Path, write_secret) -> dict[str, str]:
    """The site's settings for one job's epilog against ``server``: a Darshan tree, the write
    token, a spool, a message file; logs owned by the test's own uid count as the site's
    Darshan's when not root."""
    (folder / "darshan").mkdir()
    write_secret(folder / "epilog-token", server.token + "\n")
    env = {
        "DARSHAN_LOGDIR": str(folder / "darshan"),
        "MOSAIC_URL": server.url,
        "MOSAIC_TOKEN_FILE": str(folder / "epilog-token"),
        "MOSAIC_SPOOL_DIR": str(folder / "spool"),
        "MOSAIC_EPILOG_LOG": str(folder / "epilog.log"),
    }
    if os.geteuid() != 0:
        env["MOSAIC_DARSHAN_UID"] = str(os.geteuid())
    return env


@pytest.fixture
def site(server, tmp_path, write_secret):
    return site_env(server, tmp_path, write_secret)


@pytest.fixture(scope="module")
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def run_cli_filter(
    interpreter: str, kind: str, uid: int, comment: str, argv: list[str], env: dict[str, str], cwd: Path
) -> tuple[int, str | None, list[str]]:
    """cluster/cli_filter.lua's slurm_cli_pre_submit under ``interpreter`` for a ``kind``
    ("srun", "sbatch", ...) submission of ``argv`` by ``uid`` with ``comment``: (return code,
    comment after or None, log lines)."""
    done = subprocess.run(
        [interpreter, str(LUA_HARNESS), str(CLI_FILTER), kind, str(uid), comment, *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    code, after = done.stdout.splitlines()
    return int(code), None if after == "nil" else after, done.stderr.splitlines()


@pytest.fixture(params=LUA_INTERPRETERS)
def cli_filter(request):
    """run_cli_filter under each Lua interpreter Slurm's lua plugins may link (skipped where
    one is not installed)."""
    interpreter = shutil.which(request.param)
    if interpreter is None:
        pytest.skip(f"{request.param} is not installed (`make lua` installs it: needs root and apt)")
    return functools.partial(run_cli_filter, interpreter)
