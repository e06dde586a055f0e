"""Engine pieces that need no cluster: supervised batches, bisection of failed jobs."""

import os
import signal
import socket
import threading
import unittest.mock
from types import SimpleNamespace

import dispy
import pytest

from mosaic.config import Config
from mosaic.corpus import engine
from mosaic.corpus.engine import (
    RESULTS_PER_MESSAGE,
    DispyEngine,
    Limits,
    Task,
    run_batch,
)
from mosaic.corpus.pipeline import balanced_batch_size, engine_settings, given_up
from mosaic.corpus.scan import LogRef, Stamp
from mosaic_testing.faults import faulty


def refs(*names):
    return [LogRef(name, f"/data/{name}") for name in names]


def echo_task(ref, config):
    return {"file": ref.name, "status": "ok"}


ECHO = Task(echo_task, given_up)
HALF_SECOND = Limits(item_seconds=0.5, memory_bytes=1 << 30)


def test_supervised_batch_isolates_a_crash_and_a_hang():
    results = run_batch(
        faulty(ECHO, abort=("b.darshan",), hang=("d.darshan",)),
        refs("a.darshan", "b.darshan", "c.darshan", "d.darshan", "e.darshan"),
        Config(),
        HALF_SECOND,
        isolate=True,
    )
    assert [(r["file"], r["status"], r.get("reason")) for r in results] == [
        ("a.darshan", "ok", None),
        ("b.darshan", "evicted", "worker_crash"),
        ("c.darshan", "ok", None),
        ("d.darshan", "evicted", "timeout"),
        ("e.darshan", "ok", None),
    ]
    assert "SIGABRT" in results[1]["detail"]


def test_a_crash_and_a_hang_past_the_first_group_of_results_blame_their_own_logs():
    # The child sends results in groups: the results of the group a crash interrupts are
    # lost with the child and redone by the next one, in order, each log blamed for itself.
    names = [f"log{i:03d}.darshan" for i in range(2 * RESULTS_PER_MESSAGE + 6)]
    crash, hang = RESULTS_PER_MESSAGE + 3, 2 * RESULTS_PER_MESSAGE + 1
    task = faulty(ECHO, abort=(names[crash],), hang=(names[hang],))
    results = run_batch(task, refs(*names), Config(), HALF_SECOND, isolate=True)
    assert [r["file"] for r in results] == names
    assert {i: r["reason"] for i, r in enumerate(results) if r["status"] != "ok"} == {
        crash: "worker_crash",
        hang: "timeout",
    }


def test_a_child_killed_between_logs_blames_no_log(monkeypatch):
    # Each child is killed right after sending its first group of results: no log
    # was running, so none is evicted; the next child carries on.
    send = engine._send

    def send_then_die(*args):
        send(*args)
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(engine, "_send", send_then_die)
    names = [f"log{i:03d}" for i in range(RESULTS_PER_MESSAGE + 8)]
    results = run_batch(ECHO, refs(*names), Config(), HALF_SECOND, isolate=True)
    assert [(r["file"], r["status"]) for r in results] == [(name, "ok") for name in names]


def test_a_log_s_start_time_is_never_seen_older_than_it_is():
    # The job reads the child's progress while the child writes it: a read must never
    # see a zero or earlier start time (that log would look overdue: a false timeout).
    progress = engine._Progress()
    pid = os.fork()
    if pid == 0:
        for position in range(1, 200_000):
            progress.mark(position)
        os._exit(0)
    seen, wrong = (0, 0.0), 0
    while not os.waitpid(pid, os.WNOHANG)[0]:
        position, started = progress.read()
        wrong += started <= 0 or started < seen[1] or position < seen[0]
        seen = (position, started)
    progress.close()
    assert wrong == 0


def test_the_time_limit_applies_to_each_log_not_to_a_group_of_results():
    # 4 logs of 0.2 s each take 0.8 s, longer than the 0.5 s limit: none is too long.
    task = faulty(ECHO, delay=0.2)
    results = run_batch(task, refs("a", "b", "c", "d"), Config(), HALF_SECOND, isolate=True)
    assert [(r["file"], r["status"]) for r in results] == [("a", "ok"), ("b", "ok"), ("c", "ok"), ("d", "ok")]


class FakeCluster:
    """Jobs finish at once; a job whose batch holds the culprit dies (no result)."""

    def __init__(self, culprit):
        self.culprit, self.batches = culprit, []

    def status(self):
        return SimpleNamespace(nodes=[SimpleNamespace(cpus=2)])

    def submit(self, task, batch, config, limits):
        self.batches.append([ref.name for ref in batch])
        finish = threading.Event()
        finish.set()
        died = any(ref.name == self.culprit for ref in batch)
        return SimpleNamespace(
            finish=finish,
            exception=None,
            status=dispy.DispyJob.Terminated if died else dispy.DispyJob.Finished,
            result=None if died else [echo_task(ref, config) for ref in batch],
        )


def test_a_job_that_dies_is_bisected_down_to_its_culprit():
    engine = DispyEngine(engine_settings(Config(), None), Config())
    engine._cluster = FakeCluster(culprit="c")
    results = [r for batch in engine.map(ECHO, [refs("a", "b", "c", "d"), refs("e")]) for r in batch]
    assert sorted((r["file"], r["status"]) for r in results) == [
        ("a", "ok"),
        ("b", "ok"),
        ("c", "evicted"),
        ("d", "ok"),
        ("e", "ok"),
    ]
    assert [r for r in results if r["file"] == "c"][0]["reason"] == "worker_crash"
    assert sorted(engine._cluster.batches) == sorted(
        [["a", "b", "c", "d"], ["e"], ["a", "b"], ["c", "d"], ["c"], ["d"]]
    )


@pytest.mark.parametrize(
    "total, slots, cap, expected",
    [
        (1000, 4, 256, 250),
        (1001, 4, 256, 251),
        (5000, 4, 256, 256),
        (3, 8, 256, 1),
        (0, 4, 256, 1),
        (10, 0, 256, 10),
    ],
)
def test_batches_shrink_to_fill_every_slot(total, slots, cap, expected):
    assert balanced_batch_size(total, slots, cap) == expected


def test_batches_close_at_the_byte_bound():
    """Sizes 3, 3, 3, 5, 1 with a bound of 6 bytes: a batch closes once it holds >= 6;
    archive members weigh their bytes, not the archive's size."""
    from mosaic.corpus.pipeline import _batches

    sized = [LogRef(str(i), str(i), stamp=Stamp(n, 0, 0)) for i, n in enumerate((3, 3, 3, 5, 1))]
    assert [[r.name for r in b] for b in _batches(sized, 256, 6)] == [["0", "1"], ["2", "3"], ["4"]]
    assert [len(b) for b in _batches(sized, 2, 1 << 20)] == [2, 2, 1]
    members = [
        LogRef(f"m{i}", "a.tar/x", b"x" * 4, archive="a.tar", stamp=Stamp(10**9, 0, 0)) for i in range(3)
    ]
    assert [len(b) for b in _batches(members, 256, 8)] == [2, 1]


def test_batches_ramp_up_from_first_to_size():
    """first 2, size 8: 2, 4, 8, 8, then the rest; the byte bound still closes a batch early
    and the ramp goes on from there."""
    from mosaic.corpus.pipeline import _batches

    refs = [LogRef(str(i), str(i), stamp=Stamp(1, 0, 0)) for i in range(25)]
    assert [len(b) for b in _batches(refs, 8, 1 << 20, first=2)] == [2, 4, 8, 8, 3]
    assert [len(b) for b in _batches(refs, 8, 1 << 20, first=20)] == [8, 8, 8, 1]  # capped
    assert [len(b) for b in _batches(refs, 8, 3, first=2)] == [2] + [3] * 7 + [2]
    assert sum(map(len, _batches(refs, 1, 1 << 20, first=1))) == 25


# ----- the address the nodes reach the run at (client_address) -----


def test_the_client_address_defaults_to_the_interface_that_routes_to_the_first_node():
    # dispy, left to choose, took the host name's address: on a machine whose name resolves
    # to loopback it stopped with "No valid IP address found" (tests/cluster runs it for real)
    assert engine.client_address("", [("127.0.0.2", 9701), ("127.0.0.3", 9701)]) == "127.0.0.1"
    assert engine.client_address("localhost", [("127.0.0.2", 9701)]) == "127.0.0.1"


def test_the_default_client_address_routes_to_the_first_node_off_the_loopback():
    # The run's own machine named first resolves to 127.0.1.1 on Debian (a Slurm job's first
    # node): routing to it gave a loopback address that the other nodes cannot reach.
    with pytest.raises(engine.EngineError, match="no route from this machine to the node 192.0.2.7"):
        with unittest.mock.patch.object(socket.socket, "connect", side_effect=OSError(101, "unreachable")):
            engine.client_address("", [("127.0.1.1", 9701), ("192.0.2.7", 9701)])


@pytest.mark.parametrize(
    "configured, message",
    [
        ("127.0.0.1", "the nodes at 192.0.2.7 cannot reach this run at 127.0.0.1, a loopback address: "),
        ("192.0.2.200", "client_address 192.0.2.200 is not an address of this machine (Cannot assign"),
        ("no-such-host.invalid", "client_address: cannot resolve 'no-such-host.invalid'"),
    ],
    ids=["loopback for a node off it", "not this machine's", "no such name"],
)
def test_a_client_address_the_nodes_cannot_reach_stops_the_run_naming_the_setting(configured, message):
    with pytest.raises(engine.EngineError) as refused:
        engine.client_address(configured, [("127.0.0.2", 9701), ("192.0.2.7", 9701)])
    assert message in str(refused.value)
    if "resolve" not in message:
        fix = "set client_address (mosaic run --client-address ADDR) to an address of this machine"
        assert str(refused.value).endswith(f"{fix} the nodes reach")


def test_an_unknown_node_name_stops_the_run_naming_it():
    with pytest.raises(engine.EngineError, match="node no-such-node.invalid:9800: cannot resolve"):
        engine.node_addresses(["127.0.0.2", "no-such-node.invalid:9800"], 9700)
