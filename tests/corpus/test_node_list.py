"""What `mosaic run --nodes` says before and instead of waiting: real dispynodes started by
cluster/start-node.sh on one loopback address. Two entries at one address are refused
before any work (exit 2, both entries named: dispy keys nodes by address and used one of
them at most); so is a port that is not one. A named node that does not join is explained:
nothing listening there (a wrong PORT), or a node answering with another secret."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mosaic.corpus.node import write_secret
from mosaic_testing.ports import free_port

REPO = Path(__file__).resolve().parents[2]
MOSAIC = str(Path(sys.executable).with_name("mosaic"))
VENV = str(Path(sys.executable).parent.parent)
ADDRESS = "127.0.0.8"  # the nodes' own loopback address (every 127.x is this machine)
JOIN_SECONDS = 2  # node_start_timeout_seconds of the runs that wait for a node in vain


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((ADDRESS, port)) == 0


def node_port() -> int:
    """A -p whose node port (PORT + 1) is free on ADDRESS too."""
    while True:
        port = free_port(ADDRESS)
        if not listening(port + 1):
            return port


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[tuple[Path, list[int]]]:
    """Two nodes on ADDRESS with one secret: (folder, their PORTs)."""
    folder = tmp_path_factory.mktemp("infra-nodes")
    write_secret(str(folder / "secret"))
    ports = [node_port(), node_port()]
    nodes = []
    for k, port in enumerate(ports):
        env = {**os.environ, "MOSAIC_VENV": VENV, "MOSAIC_NODE_SECRET_FILE": str(folder / "secret")}
        env["MOSAIC_NODE_DIR"] = str(folder / f"node{k}")
        nodes.append(
            subprocess.Popen(
                ["bash", str(REPO / "cluster" / "start-node.sh"), ADDRESS, "1", str(port)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=(folder / f"node{k}.log").open("w"),
                start_new_session=True,
            )
        )
    try:
        deadline = time.monotonic() + 120
        for port, node in zip(ports, nodes, strict=True):
            while not listening(port + 1):
                assert node.poll() is None and time.monotonic() < deadline, "a node did not start"
                time.sleep(0.1)
        yield folder, ports
    finally:
        for node in nodes:
            os.killpg(node.pid, 15)
        for node in nodes:
            node.wait(30)


def run(
    folder: Path, nodes: str, secret: str = "secret", out: str = "out"
) -> subprocess.CompletedProcess[str]:
    logs = folder / "logs"
    if not logs.exists():
        logs.mkdir()
        for log in sorted((REPO / "tests" / "data" / "darshan-logs" / "dlio_logs").glob("*.darshan"))[:2]:
            (logs / log.name).symlink_to(log)
    config = folder / "run.toml"
    config.write_text(f"node_start_timeout_seconds = {JOIN_SECONDS}\ndispy_port = {node_port()}\n")
    command = [MOSAIC, "run", str(logs), "--out", str(folder / out), "--quiet", "--config", str(config)]
    command += ["--nodes", nodes, "--node-secret-file", str(folder / secret)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_two_nodes_at_one_address_are_refused_before_any_work(cluster):
    folder, (first, second) = cluster
    for nodes, named in [
        (f"{ADDRESS}:{first},{ADDRESS}:{second}", f"{ADDRESS}:{first} and {ADDRESS}:{second}"),
        (f"127.0.0.1:{first},localhost:{second}", f"127.0.0.1:{first} and localhost:{second}"),  # a name
    ]:
        done = run(folder, nodes)
        assert done.returncode == 2, done.stderr
        assert f"nodes {named} are both at" in done.stderr, done.stderr
        assert "dispy tells nodes apart by address alone" in done.stderr
        assert "Traceback" not in done.stderr and not (folder / "out").exists()  # nothing started


def test_a_port_that_is_not_one_is_refused(cluster):
    folder, (first, _) = cluster
    for bad in ("abc", "65535", "0"):
        done = run(folder, f"{ADDRESS}:{bad}")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"node {ADDRESS}:{bad}: PORT must be a number from 1 to 65534" in done.stderr


def test_a_node_that_does_not_join_is_explained(cluster):
    folder, (first, _) = cluster
    write_secret(str(folder / "wrong"))
    done = run(folder, f"{ADDRESS}:{first}", secret="wrong")
    assert done.returncode == 1, done.stderr
    assert f"a node answers at {ADDRESS}:{first + 1} but did not join: it has another secret" in done.stderr
    unused = node_port()  # nothing listens at 127.0.0.9 (another address: one node per address)
    done = run(folder, f"{ADDRESS}:{first},127.0.0.9:{unused}", secret="wrong")
    assert f"127.0.0.9:{unused}: nothing listens at 127.0.0.9:{unused + 1}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    done = run(folder, f"{ADDRESS}:{first}")  # the right secret: it runs
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr


def test_a_named_node_that_never_joined_is_said_at_the_end_of_a_run_that_went_on(cluster):
    """One node joins, the other entry names an address where nothing listens: the run
    finishes on the one (exit 0) and ends by naming the other and why (it said nothing)."""
    folder, (first, _) = cluster
    unused = node_port()
    done = run(folder, f"{ADDRESS}:{first},127.0.0.9:{unused}", out="out-one-absent")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning: node") == 1, done.stderr
    assert (
        f"warning: node 127.0.0.9:{unused}: nothing listens at 127.0.0.9:{unused + 1} (node not started"
        in done.stderr
    )
    assert done.stderr.rstrip().endswith("this run went on without it")
