"""The dispy engine with real dispynode daemons: same outputs, crashes, hangs, lost nodes, SIGKILL.

Faults travel with the task (tests/support/mosaic_testing/faults.py): the pipeline's tasks are
wrapped, in this process or in a `mosaic run` started by ``python -m mosaic_testing.faults``,
and the nodes find ``mosaic_testing.faults`` on their PYTHONPATH.
"""

import os
import random
import signal
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from mosaic.corpus import pipeline
from mosaic.corpus.engine import stop_process_group
from mosaic.corpus.node import dispynode_command, write_secret
from mosaic.corpus.pipeline import run
from mosaic_testing.faults import faulty, node_path
from mosaic_testing.outputs import comparable, lines, truth
from mosaic_testing.runs import done_count, wait_for

MOSAIC = str(Path(sys.executable).parent / "mosaic")
SLOW = [
    "-m",
    "mosaic_testing.faults",
    "--delay",
    "0.02",
    "--",
]  # per log: long enough to interrupt a run midway


def config_file(tmp_path, config, extra=""):
    path = tmp_path / "config.toml"
    path.write_text(
        f"batch_size = {config.batch_size}\n"
        f"categorize_batch_size = {config.categorize_batch_size}\n"
        f"trace_timeout_seconds = {config.trace_timeout_seconds}\n{extra}"
    )
    return str(path)


def nodes_config(tmp_path, port):
    """Config lines for nodes started with `start_node`: their secret file, and the port this
    run listens on, theirs (-p) rather than dispy's default 9700, which another dispy client
    on the machine may hold (another test run: no node would ever join)."""
    return f'node_secret_file = "{tmp_path / "node-secret"}"\ndispy_port = {port}\n'


def slow_mosaic(*args):
    """`mosaic ARGS` whose tasks sleep before each log, and the environment it needs."""
    return [sys.executable, *SLOW, *args], {**os.environ, "PYTHONPATH": node_path()}


def test_local_node_outputs_match_in_process(year_corpus, small_config, reference_run, tmp_path):
    first = run([year_corpus], tmp_path, small_config, workers=2)
    assert comparable(tmp_path) == comparable(reference_run)
    assert first["timings"]["engine_started"]
    rerun = run([year_corpus], tmp_path, small_config, workers=2)  # nothing left to do
    assert not rerun["timings"]["engine_started"]  # no dispynode was started
    assert comparable(tmp_path) == comparable(reference_run)


def test_crashing_and_hanging_logs_are_evicted_and_batch_mates_finish(
    year_corpus, small_config, reference_run, tmp_path, monkeypatch
):
    expected = truth(year_corpus)
    crasher = next(t for t in expected if t["valid"] and not t["heaviest"])
    hanger = next(t for t in expected if not t["valid"])
    for name in ("VALIDATE", "CATEGORIZE"):
        task = faulty(getattr(pipeline, name), abort=(crasher["file"],), hang=(hanger["file"],))
        monkeypatch.setattr(pipeline, name, task)
    monkeypatch.setenv("PYTHONPATH", node_path())  # the local node unpickles mosaic_testing.faults
    run([year_corpus], tmp_path, small_config.replace(trace_timeout_seconds=6.0), workers=2)

    evicted = {e["file"]: e for e in lines(tmp_path, "evicted.jsonl")}
    assert evicted[crasher["file"]]["reason"] == "worker_crash"
    assert "SIGABRT" in evicted[crasher["file"]]["detail"]
    assert evicted[hanger["file"]]["reason"] == "timeout"
    others = {e["file"]: e for e in lines(reference_run, "evicted.jsonl")}
    others.pop(hanger["file"])
    assert {f: e for f, e in evicted.items() if f not in (crasher["file"], hanger["file"])} == others
    # every representative still categorized; the crasher's group lost one run
    traces = lines(tmp_path, "traces.jsonl")
    reference = lines(reference_run, "traces.jsonl")
    for trace in reference:
        if trace["group"]["key"] == crasher["group"]:
            trace["group"]["runs"] -= 1
    assert traces == reference


def start_node(host, port, tmp_path):
    """A single-CPU dispynode daemon on `host`, with the secret of TMP/node-secret (made if
    missing; config_file(..., secret_of(tmp_path)) names it)."""
    secret_file = tmp_path / "node-secret"
    if not secret_file.exists():
        write_secret(str(secret_file))
    return subprocess.Popen(
        dispynode_command(1, host, port, str(tmp_path / host), str(secret_file)),
        env={**os.environ, "PYTHONPATH": node_path()},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@pytest.fixture
def two_nodes(tmp_path):
    """Two single-CPU dispynode daemons on their own loopback addresses, same port."""
    port = 40000 + os.getpid() % 20000
    nodes = {host: start_node(host, port, tmp_path) for host in ("127.0.0.2", "127.0.0.3")}
    yield port, nodes
    for node in nodes.values():
        stop_process_group(node)


# A node silent for 5 pulses is dead: the runs whose nodes are killed wait 2.5 s for it
# instead of the default's 5 s.
PULSE = "node_pulse_seconds = 0.5\n"


def run_on_nodes(year_corpus, config, tmp_path, nodes, act, timeout=180, options=(), extra=""):
    """A slowed `mosaic run` over `nodes` (port, hosts): `act()` once its first batches are
    done, then wait for its end. (exit status, stderr, output folder)."""
    port, hosts = nodes
    out = tmp_path / "out"
    command, env = slow_mosaic(
        "run",
        str(year_corpus),
        "--out",
        str(out),
        "--quiet",
        *options,
        "--nodes",
        ",".join(f"{host}:{port}" for host in hosts),
        "--config",
        config_file(tmp_path, config, nodes_config(tmp_path, port) + PULSE + extra),
    )
    log = tmp_path / "stderr.txt"  # a file, not a pipe: a child that keeps it open cannot hang the test
    with log.open("w") as stderr, subprocess.Popen(command, stderr=stderr, env=env) as mosaic:
        wait_for(
            lambda: done_count(out) >= 2 * config.batch_size,
            what="first batches",
            process=mosaic,
            stderr=log,
        )
        act()
        mosaic.wait(timeout=timeout)
    return mosaic.returncode, log.read_text(), out


def group_of(leader: int) -> list[psutil.Process]:
    """The processes of the process group `leader` leads (a node started in its own session)."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == leader:
                found.append(process)
        except (ProcessLookupError, psutil.NoSuchProcess):
            pass
    return found


def test_a_node_lost_mid_run_loses_no_trace_and_its_workers_end_with_it(
    year_corpus, small_config, reference_all_runs, two_nodes, tmp_path
):
    node = two_nodes[1]["127.0.0.3"]
    workers: list[psutil.Process] = []

    def kill() -> None:  # the node's own process only, as the OOM killer or `kill -9 PID` would
        workers.extend(process for process in group_of(node.pid) if process.pid != node.pid)
        os.kill(node.pid, signal.SIGKILL)

    returncode, stderr, out = run_on_nodes(
        year_corpus, small_config, tmp_path, two_nodes, kill, options=["--all-runs"]
    )
    assert returncode == 0, stderr
    # its setup process and job processes (and their supervised children) were left running
    # until 2026-11-29, still computing batches the run had moved to the other node
    assert workers and psutil.wait_procs(workers, timeout=10)[1] == []
    traces = lines(out, "traces.jsonl")
    valid = sorted(t["file"] for t in truth(year_corpus) if t["valid"])
    assert [t["file"] for t in traces] == valid  # each valid log exactly once
    assert comparable(out)["traces"] == comparable(reference_all_runs)["traces"]


def test_a_node_started_after_the_run_began_joins_it_and_takes_over_a_lost_node_s_work(
    year_corpus, small_config, reference_all_runs, tmp_path
):
    # dispy asked the named nodes once, when the run started: a node not listening yet (started
    # a moment later, as two_nodes' daemons may be on a loaded machine; or restarted) never
    # joined, and the run stopped when the node it did have died (exit 1, "no live dispy node").
    port = 40000 + (os.getpid() + 7) % 20000
    nodes = {"127.0.0.3": start_node("127.0.0.3", port, tmp_path)}

    def replace_the_node() -> None:
        nodes["127.0.0.2"] = start_node("127.0.0.2", port, tmp_path)
        os.killpg(nodes["127.0.0.3"].pid, signal.SIGKILL)

    try:
        at = (port, ["127.0.0.2", "127.0.0.3"])
        extra = "node_lost_timeout_seconds = 60\nnode_ping_seconds = 1\n"  # the new node asked every 1 s
        returncode, stderr, out = run_on_nodes(
            year_corpus, small_config, tmp_path, at, replace_the_node, options=["--all-runs"], extra=extra
        )
    finally:
        for node in nodes.values():
            stop_process_group(node)
    assert returncode == 0, stderr
    assert comparable(out)["traces"] == comparable(reference_all_runs)["traces"]


def test_a_port_held_by_another_program_stops_the_run_at_once_with_a_clear_error(
    year_corpus, small_config, tmp_path
):
    # dispy retried its bind silently, for ever: the run waited node_start_timeout_seconds,
    # then blamed the nodes ("no dispy node joined")
    port = 40000 + (os.getpid() + 13) % 20000
    write_secret(str(tmp_path / "node-secret"))
    config = config_file(tmp_path, small_config, nodes_config(tmp_path, port))
    command = [MOSAIC, "run", str(year_corpus), "--out", str(tmp_path / "out"), "--config", config]
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        done = subprocess.run(
            command + ["--nodes", f"127.0.0.2:{port}"], capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 1
    assert f"port {port}, where the nodes answer this run, is in use" in done.stderr
    assert "Traceback" not in done.stderr


def test_dispy_port_gives_the_run_its_port_over_the_configuration(year_corpus, small_config, tmp_path):
    # how cluster/mosaic-run.sbatch gives the run its nodes' port (MOSAIC_PORT): the port
    # held here is the option's, not the configuration's (free), so the run must name it
    configured = 40000 + (os.getpid() + 17) % 20000
    write_secret(str(tmp_path / "node-secret"))
    config = config_file(tmp_path, small_config, nodes_config(tmp_path, configured))
    command = [MOSAIC, "run", str(year_corpus), "--out", str(tmp_path / "out"), "--config", config]
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            command + ["--nodes", "127.0.0.2", "--dispy-port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stderr
    assert f"port {port}, where the nodes answer this run, is in use" in done.stderr


def test_a_client_address_the_nodes_cannot_reach_stops_the_run_with_a_clear_error(
    year_corpus, small_config, tmp_path
):
    write_secret(str(tmp_path / "node-secret"))
    config = config_file(tmp_path, small_config, nodes_config(tmp_path, 9700))
    command = [MOSAIC, "run", str(year_corpus), "--out", str(tmp_path / "out"), "--config", config]
    command += ["--nodes", "192.0.2.7", "--client-address", "127.0.0.1"]  # a node off the loopback
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "the nodes at 192.0.2.7 cannot reach this run at 127.0.0.1, a loopback address: " in done.stderr
    assert "set client_address (mosaic run --client-address ADDR)" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_live_node_stops_the_run_with_a_clear_error_and_resumable_state(
    year_corpus, small_config, reference_run, two_nodes, tmp_path
):
    def kill_every_node() -> None:
        for node in two_nodes[1].values():
            os.killpg(node.pid, signal.SIGKILL)

    extra = "node_lost_timeout_seconds = 1\n"  # and the test never waits forever:
    returncode, stderr, out = run_on_nodes(
        year_corpus, small_config, tmp_path, two_nodes, kill_every_node, timeout=120, extra=extra
    )
    assert returncode == 1
    assert "no live dispy node for 1 s" in stderr and "rerun the same command" in stderr
    assert not (out / "summary.json").exists() and done_count(out) > 0
    run([year_corpus], out, small_config, workers=0)  # resumes from the store
    assert comparable(out) == comparable(reference_run)


def test_rerun_after_sigkill_resumes_to_identical_outputs(year_corpus, small_config, reference_run, tmp_path):
    out = tmp_path / "out"
    scratch = tmp_path / "scratch"  # the run's TMPDIR: where its mosaic-dispy-* folder goes
    scratch.mkdir()
    arguments = [
        "run",
        str(year_corpus),
        "--out",
        str(out),
        "--workers",
        "2",
        "--quiet",
        "--config",
        config_file(tmp_path, small_config),
    ]
    valid = sum(t["valid"] for t in truth(year_corpus))
    stop_at = random.randint(small_config.batch_size, len(truth(year_corpus)) + valid // 10)
    command, env = slow_mosaic(*arguments)
    mosaic = subprocess.Popen(command, env={**env, "TMPDIR": str(scratch)})
    helpers = []
    try:
        wait_for(lambda: done_count(out) >= stop_at, what=f"{stop_at} logs done", process=mosaic)
        helpers = psutil.Process(mosaic.pid).children(recursive=True)
        mosaic.send_signal(signal.SIGKILL)
        mosaic.wait()
        _, alive = psutil.wait_procs(helpers, timeout=15)
        assert alive == [], f"the local dispynode outlived a mosaic run SIGKILLed after {stop_at} logs"
        assert [p.name for p in scratch.iterdir()] == [], "temporary folders left behind"
    finally:
        mosaic.kill()
        for helper in helpers:
            if helper.is_running():
                helper.kill()
    assert not (out / "summary.json").exists()
    subprocess.run([MOSAIC, *arguments], check=True)
    assert comparable(out) == comparable(reference_run), f"killed after {stop_at} logs"
