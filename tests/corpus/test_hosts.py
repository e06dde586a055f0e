"""`mosaic run --nodes` across real hosts: network namespaces on a bridge, nodes started with
the shipped cluster/start-node.sh, the run in a client namespace whose host name resolves to
loopback (127.0.1.1, as Debian sets it).

Needs root and iproute2 (CI runs as root); skipped, saying why, elsewhere. Every host is a
network namespace with its own /etc/hosts and host name (tests/support/mosaic_testing/hosts.py);
all share this machine's file system, so the nodes see the logs at the paths the client does,
except a node started in a mount namespace that covers them (an empty tmpfs: no shared file
system; a bind mount of a copy: another root). Namespaces and every process inside them are
removed at the end, even when a test fails.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from mosaic.corpus.node import write_secret
from mosaic_testing.faults import node_path
from mosaic_testing.hosts import Hosts, kill_inside, listening
from mosaic_testing.outputs import comparable
from mosaic_testing.runs import done_count, wait_for

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
START_NODE = str(REPO / "cluster" / "start-node.sh")
MOSAIC = str(Path(sys.executable).parent / "mosaic")
LOGS = 2000  # a few thousand logs: every path, about 2 minutes for the whole file on 2 cores
# Seconds per log in the runs killed midway (on each node's single CPU): the kill lands when a
# quarter of the work is done, and the rest (~2,800 logs to validate or categorize) then
# takes seconds at least; 0.005 made the two kill tests sleep ~14 s each.
DELAY = "0.001"
CONFIG = "batch_size = 64\ncategorize_batch_size = 16\n"  # many jobs: a kill lands midway
NODES = ("node1", "node2")
GONE_SECONDS = 15.0  # a killed node's processes are gone within this (its pulse: 5 s to notice)
NODE_PORT = (
    9701  # start-node.sh's default: dispynode's -p 9700, listening on 9701 (each host has its own ports)
)


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    """A client and three node hosts on one bridge."""
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("unshare") is None:
        pytest.skip("needs root, iproute2 (ip netns) and unshare: CI runs these tests as root")
    try:
        made = Hosts()
    except subprocess.CalledProcessError as error:
        pytest.skip(f"network namespaces are not available here: {error.stderr.strip()}")
    with made:
        yield {name: made.add(name) for name in ("client", *NODES, "node3")}


@pytest.fixture(scope="module")
def site(hosts, tmp_path_factory):
    """The corpus, the secret file, the environment and the configuration every run shares,
    and the reference: a local `mosaic run --workers 2` of the corpus."""
    root = tmp_path_factory.mktemp("hosts")
    corpus = root / "corpus"
    subprocess.run([MOSAIC, "synth", "year", str(corpus), "--count", str(LOGS), "--seed", "44"], check=True)
    write_secret(str(root / "node-secret"))
    (root / "config.toml").write_text(CONFIG)
    # Both nodes killed: each silent for 5 pulses of 0.5 s is dead, 2.5 s of waiting instead of
    # the default's 5 s (the nodes are started afresh after it; a node kept for another run
    # after 0.5 s pulses did not always join it: 2 of 5 runs of the node3 test on 2026-11-29).
    (root / "lost.toml").write_text(CONFIG + "node_lost_timeout_seconds = 2\nnode_pulse_seconds = 0.5\n")
    (root / "tmp").mkdir(mode=0o700)
    env = {
        **os.environ,
        "PYTHONPATH": node_path(),  # the slowed runs' tasks travel by reference to mosaic_testing
        "MOSAIC_NODE_SECRET_FILE": str(root / "node-secret"),
        "MOSAIC_VENV": str(Path(sys.executable).parent.parent),
        "TMPDIR": str(root / "tmp"),
    }
    reference = root / "reference"
    subprocess.run(run_command(corpus, reference, root, "--workers", "2"), env=env, check=True)
    made = {"root": root, "corpus": corpus, "env": env, "reference": reference, "nodes": {}}
    try:
        yield made
    finally:  # the nodes still up, killed and reaped (no zombie child left to later tests)
        for name in list(made["nodes"]):
            stop(made, hosts[name])


def run_command(corpus, out, root, *options, config="config.toml", slow=False):
    mosaic = [sys.executable, "-m", "mosaic_testing.faults", "--delay", DELAY, "--"] if slow else [MOSAIC]
    return [
        *mosaic,
        "run",
        str(corpus),
        "--out",
        str(out),
        "--quiet",
        "--config",
        str(root / config),
        *options,
    ]


def start_node(site, host, mounts=None):
    """cluster/start-node.sh on `host` (its default address, 1 CPU, port 9700), listening."""
    log = site["root"] / f"{host.name}.log"
    node = host.popen(
        ["bash", START_NODE, "", "1"],
        mounts,
        env=site["env"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log.open("a"),
    )
    wait_for(
        lambda: listening(node.pid, NODE_PORT),
        what=f"{host.name} listening",
        process=node,
        stderr=log,
    )
    site["nodes"][host.name] = node
    return node


def nodes_up(site, hosts):
    """node1 and node2 running (started again when a test killed them)."""
    for name in NODES:
        node = site["nodes"].get(name)
        if node is None or node.poll() is not None:
            start_node(site, hosts[name])
    return ",".join(NODES)


def stop(site, host):
    """Kill every process of `host` (its node and all it started)."""
    kill_inside(host.namespace)
    node = site["nodes"].pop(host.name, None)
    if node is not None:
        node.wait()


def run_on(host, site, command, timeout=240):
    done = host.run(command, env=site["env"], timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def assert_gone(host):
    """No process of `host` left: its node's setup and job processes end with the node."""
    deadline = time.monotonic() + GONE_SECONDS
    while host.pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [" ".join(psutil.Process(pid).cmdline()[:4]) for pid in host.pids() if psutil.pid_exists(pid)]
    assert left == [], f"{host.name} still runs {left}"


def test_two_nodes_give_the_local_results_with_and_without_shipped_logs(hosts, site, tmp_path):
    client = hosts["client"]
    said = run_on(
        client, site, [sys.executable, "-c", "import socket; print(socket.gethostbyname('client'))"]
    )
    assert said.stdout.strip() == "127.0.1.1"  # dispy's own choice of address stopped the run here
    nodes = nodes_up(site, hosts)
    for options in ([], ["--ship-logs"]):
        out = tmp_path / ("shipped" if options else "shared")
        done = run_on(
            client, site, run_command(site["corpus"], out, site["root"], "--nodes", nodes, *options)
        )
        assert done.returncode == 0, done.stderr
        assert comparable(out) == comparable(site["reference"])


def test_an_address_the_nodes_cannot_reach_the_run_at_stops_it_naming_the_setting(hosts, site, tmp_path):
    client = hosts["client"]
    command = run_command(site["corpus"], tmp_path / "out", site["root"])
    done = run_on(client, site, [*command, "--nodes", "node1", "--client-address", "client"])
    assert done.returncode == 1
    assert (
        "the nodes at 10.77.0.11 cannot reach this run at 127.0.1.1, a loopback address: set client_address"
        in (done.stderr)
    )
    done = run_on(client, site, [*command, "--nodes", "10.99.0.1"])  # off the bridge: no route
    assert done.returncode == 1
    assert (
        "no route from this machine to the node 10.99.0.1 (Network is unreachable): set client_address"
        in (done.stderr)
    )


def test_a_node_that_does_not_see_the_logs_stops_the_run_and_shipping_them_resumes_it(hosts, site, tmp_path):
    # Until 2026-11-29 such a node evicted every plain log file as unreadable, exit status 0,
    # and a rerun with --ship-logs "resumed" and kept those evictions.
    corpus, node3 = site["corpus"], hosts["node3"]
    start_node(site, node3, {str(corpus): None})
    try:
        out = tmp_path / "out"
        done = run_on(hosts["client"], site, run_command(corpus, out, site["root"], "--nodes", "node3"))
        assert done.returncode == 1
        assert f"node node3 cannot read a log this machine reads: cannot open {corpus}/" in done.stderr
        assert "No such file or directory. The nodes must see the logs at the paths" in done.stderr
        assert "or add --ship-logs" in done.stderr
        assert not (out / "summary.json").exists()
        # A node that served a stopped run may still be held by it seconds later and refuse
        # the rerun (1 full run in ~3 on 2026-11-29; not yet cured): the rerun gets the node
        # started again, still blind, as after an operator's restart.
        stop(site, node3)
        start_node(site, node3, {str(corpus): None})
        command = run_command(corpus, out, site["root"], "--nodes", "node3", "--ship-logs")
        done = run_on(hosts["client"], site, command)
        assert done.returncode == 0, done.stderr
        assert comparable(out) == comparable(site["reference"])
    finally:
        stop(site, node3)


def test_a_node_that_sees_another_copy_of_the_logs_stops_the_run(hosts, site, tmp_path):
    corpus, node3 = site["corpus"], hosts["node3"]
    copy = tmp_path / "copy"
    newest = max(path.stat().st_mtime for path in corpus.rglob("*"))
    time.sleep(max(0.0, newest + 1 - time.time()))  # the copy's files a second later, at least
    shutil.copytree(corpus, copy, copy_function=shutil.copyfile)  # contents alike, times not
    start_node(site, node3, {str(corpus): str(copy)})
    try:
        out = tmp_path / "out"
        done = run_on(hosts["client"], site, run_command(corpus, out, site["root"], "--nodes", "node3"))
        assert done.returncode == 1
        assert f"node node3 cannot read a log this machine reads: {corpus}/" in done.stderr
        assert "is another file here (size " in done.stderr and ") than the one scanned (size " in done.stderr
    finally:
        stop(site, node3)


def test_a_node_killed_midway_costs_no_result_and_leaves_no_process(hosts, site, tmp_path):
    nodes = nodes_up(site, hosts)
    out = tmp_path / "out"
    log = tmp_path / "stderr.txt"
    command = run_command(site["corpus"], out, site["root"], "--nodes", nodes, slow=True)
    with log.open("w") as stderr:
        run = hosts["client"].popen(command, env=site["env"], stderr=stderr)
        wait_for(lambda: done_count(out) >= LOGS // 4, what="a quarter of the logs", process=run, stderr=log)
        site["nodes"]["node2"].send_signal(signal.SIGKILL)  # dispynode itself, as `kill -9 PID`
        assert run.wait(timeout=240) == 0, log.read_text()
    assert comparable(out) == comparable(site["reference"])
    assert_gone(hosts["node2"])


def test_both_nodes_killed_stop_the_run_and_a_rerun_finishes_it(hosts, site, tmp_path):
    nodes = nodes_up(site, hosts)
    out = tmp_path / "out"
    log = tmp_path / "stderr.txt"
    command = run_command(site["corpus"], out, site["root"], "--nodes", nodes, config="lost.toml", slow=True)
    with log.open("w") as stderr:
        run = hosts["client"].popen(command, env=site["env"], stderr=stderr)
        wait_for(lambda: done_count(out) >= LOGS // 4, what="a quarter of the logs", process=run, stderr=log)
        for name in NODES:
            site["nodes"][name].send_signal(signal.SIGKILL)
        assert run.wait(timeout=240) == 1
    said = log.read_text()
    assert "no live dispy node for 2 s" in said and "rerun the same command to resume" in said
    assert "Traceback" not in said and not (out / "summary.json").exists()
    for name in NODES:
        assert_gone(hosts[name])
    nodes = nodes_up(site, hosts)
    done = run_on(hosts["client"], site, run_command(site["corpus"], out, site["root"], "--nodes", nodes))
    assert done.returncode == 0, done.stderr
    assert comparable(out) == comparable(site["reference"])
