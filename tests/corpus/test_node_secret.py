"""Every dispynode mosaic starts or documents takes a secret (issue 25, item 1).

Real dispynode processes: the local node of `mosaic run --workers N` and a
cluster node started by cluster/start-node.sh. A plain dispy client unrelated to
mosaic (tests/corpus/foreign_client.py), with no secret or a wrong one, runs
nothing on them; mosaic, with the right secret, works.
"""

import operator
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from corpus.faults import node_path

from mosaic.config import Config
from mosaic.corpus.engine import DispyEngine, Task, local_node
from mosaic.corpus.node import read_secret, write_secret
from mosaic.corpus.pipeline import engine_settings, given_up
from mosaic.errors import EngineError

REPO = Path(__file__).resolve().parents[2]
START_NODE = REPO / "cluster" / "start-node.sh"
MOSAIC = str(Path(sys.executable).parent / "mosaic")
VENV = str(Path(sys.executable).parent.parent)
WRONG = "not-the-secret-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def foreign(host: str, node_port: int, marker: Path, secret: str = "") -> tuple[str, str]:
    """Run the foreign client against a node: (its answer, dispy's log lines)."""
    command = [
        sys.executable,
        "-m",
        "corpus.foreign_client",
        host,
        str(node_port),
        str(free_port()),
        str(marker),
    ]
    done = subprocess.run(
        command + ([secret] if secret else []),
        env={**os.environ, "PYTHONPATH": node_path()},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    *log, answer = done.stdout.splitlines()
    return answer, "\n".join(log)


def assert_refused(host: str, node_port: int, tmp_path: Path) -> None:
    for name, secret in (("none", ""), ("wrong", WRONG)):
        marker = tmp_path / f"foreign-{name}"
        answer, log = foreign(host, node_port, marker, secret)
        assert answer == "did not run", log
        assert '"secret" mismatch' in log  # it did reach the node
        assert not marker.exists()


def node_of(reaper_owner: psutil.Process) -> psutil.Process:
    """The dispynode a local_node started: the child of the reaper, `reaper_owner`'s child."""
    [reaper] = [p for p in reaper_owner.children() if "mosaic.corpus.reaper" in p.cmdline()]
    [node] = reaper.children()
    return node


def test_the_local_node_runs_only_what_holders_of_its_secret_send(tmp_path):
    workdir = tmp_path / "run"
    workdir.mkdir(mode=0o700)
    with local_node(1, str(workdir), timeout=120) as (port, secret):
        node = node_of(psutil.Process())
        assert not any(secret in word for word in node.cmdline() + list(node.environ().values()))
        assert_refused("127.0.0.1", port + 1, tmp_path)
        marker = tmp_path / "foreign-right"  # the same client with the secret: it does run
        assert foreign("127.0.0.1", port + 1, marker, secret)[0] == "ran"
        assert marker.read_text() == "ran"


def test_mosaic_works_with_its_local_node_s_secret_and_each_run_has_a_fresh_one():
    secrets = []
    for _ in range(2):
        with DispyEngine(engine_settings(Config(), None), "!", workers=1) as engine:
            cmdline = node_of(psutil.Process()).cmdline()
            secrets.append(read_secret(cmdline[cmdline.index("--secret-file") + 1]))
            # work(item, context) = item + context: any function the node can import
            assert list(engine.map(Task(operator.add, given_up), [["a", "b"]])) == [["a!", "b!"]]
    assert secrets[0] != secrets[1] and all(len(s) == 64 for s in secrets)


def start_node(tmp_path: Path, port: int, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        ["bash", str(START_NODE), "127.0.0.6", "1", str(port)],
        env={**os.environ, "MOSAIC_VENV": VENV, "MOSAIC_NODE_DIR": str(tmp_path / "node"), **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "node.log").open("w"),
        start_new_session=True,
    )


def wait_for_listen(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, log.read_text()
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.6", port)) == 0:
                return
        assert time.monotonic() < deadline, "the node never listened"
        time.sleep(0.1)


def test_a_cluster_node_runs_only_what_holders_of_the_secret_send(tmp_path, shared_logs):
    secret_file = tmp_path / "node-secret"
    write_secret(str(secret_file))
    port = 20000 + os.getpid() % 20000
    node = start_node(tmp_path, port, {"MOSAIC_NODE_SECRET_FILE": str(secret_file)})
    try:
        wait_for_listen(port + 1, node, tmp_path / "node.log")
        assert_refused("127.0.0.6", port + 1, tmp_path)
        marker = tmp_path / "foreign-right"  # the same client with the secret: it does run
        answer, log = foreign("127.0.0.6", port + 1, marker, secret_file.read_text())
        assert answer == "ran", log
        assert marker.read_text() == "ran"
        logs = tmp_path / "logs"
        logs.mkdir()
        for log in shared_logs[:2]:
            (logs / log.name).symlink_to(log)
        out = tmp_path / "out"
        command = [MOSAIC, "run", str(logs), "--out", str(out), "--quiet", "--nodes", f"127.0.0.6:{port}"]
        subprocess.run(command + ["--node-secret-file", str(secret_file)], check=True, timeout=300)
        assert (out / "summary.json").exists()
    finally:
        os.killpg(node.pid, 15)
        node.wait(30)


@pytest.mark.parametrize(
    "text, mode, message",
    [
        (None, None, "no node secret file {path}: dispy nodes must not run without a secret"),
        ("x" * 32, 0o640, "(mode 640); run: chmod 600 {path}"),
        ("x" * 32, 0o604, "(mode 604); run: chmod 600 {path}"),
        ("", 0o600, "{path} holds no token"),
        ("x" * 15, 0o600, "at least 16 characters"),
    ],
    ids=["missing", "group-readable", "other-readable", "empty", "15 characters"],
)
def test_start_node_refuses_to_start_without_a_private_secret(tmp_path, text, mode, message):
    path = tmp_path / "home" / ".config" / "mosaic" / "node-secret"  # the default file, under HOME
    path.parent.mkdir(parents=True)
    if text is not None:
        path.write_text(text)
        path.chmod(mode)
    env = {k: v for k, v in os.environ.items() if k != "MOSAIC_NODE_SECRET_FILE"}
    started = subprocess.run(
        ["bash", str(START_NODE), "127.0.0.6", "1", str(free_port())],
        env={**env, "HOME": str(tmp_path / "home"), "MOSAIC_VENV": VENV, "MOSAIC_NODE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 2
    assert "refusing to start dispynode" in started.stderr
    assert message.format(path=path) in started.stderr
    assert "Traceback" not in started.stderr


def test_mosaic_run_with_nodes_refuses_a_missing_secret_file_before_any_work(tmp_path, shared_logs):
    missing = tmp_path / "nowhere" / "node-secret"
    command = [MOSAIC, "run", str(shared_logs[0]), "--out", str(tmp_path / "out"), "--nodes", "127.0.0.6"]
    done = subprocess.run(
        command + ["--node-secret-file", str(missing)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert f"no node secret file {missing}" in done.stderr and "openssl rand -hex 32" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_cluster_engine_without_a_secret_is_refused():
    with pytest.raises(EngineError, match="need a secret"):
        DispyEngine(engine_settings(Config(), None), Config(), nodes=["127.0.0.6"]).__enter__()


def test_a_private_secret_of_16_characters_is_accepted(tmp_path):
    path = tmp_path / "node-secret"
    path.write_text("x" * 16 + "\n")  # surrounding whitespace is not part of it
    path.chmod(0o600)
    check = [sys.executable, "-m", "mosaic.corpus.node", "--secret-file", str(path), "--check"]
    assert subprocess.run(check, capture_output=True, text=True, timeout=60).returncode == 0
    assert read_secret(str(path)) == "x" * 16
