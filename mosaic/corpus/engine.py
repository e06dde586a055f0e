"""Run a per-item task over batches: dispy across cores and nodes, or in-process.

A generic batch runner: the caller gives a :class:`Task` (the function to
apply to each item and the result of an item given up on, both module-level
so they pickle by reference) and the modules a node imports ahead of any
job. The engine knows nothing of what the items are.

Why it looks like this (SPEC 5):

* ``JobCluster``, not ``SharedJobCluster``: one ``mosaic run`` owns its nodes
  for its duration, and the shared variant would need a ``dispyscheduler``
  daemon as one more thing to start and keep alive.
* Work goes out as one dispy job per batch of logs (``config.batch_size`` to
  validate, ``config.categorize_batch_size`` to categorize): one job per log
  spends more time in dispy than in the work.
* dispy's ``setup`` imports the heavy modules once per node; each job process
  is forked from that warm process, so a job starts in milliseconds.
* A dispy node notices a job process that died (segfault, OOM killer) only
  at its zombie check, once a minute at best, and dispy has no per-job time
  limit. So each job supervises its own work: it forks one child that works
  through the batch, writes which log it is on (and since when) to a page
  shared with the job, and sends its results over a pipe in groups of
  ``RESULTS_PER_MESSAGE`` (one message per log cost ~20 % of a year's
  validation CPU in wake-ups on both sides). A child that dies evicts the
  log it was on as ``worker_crash``; one that spends more than
  ``trace_timeout_seconds`` on a log is killed and the log evicted as
  ``timeout``. A new child carries on with the batch-mates, redoing those
  whose results were still in the dead child's unsent group.
* A job that fails anyway (its own process killed) is bisected: both halves
  go out again, and a single log that still fails is evicted as
  ``worker_crash``.
* A node that dies stops its pulses; dispy (``reentrant=True``) sends its
  unfinished jobs to the other nodes, so no log is lost.
* At most ``jobs_in_flight_per_cpu`` jobs per node CPU are queued, so the
  parent holds a bounded number of batches whatever the corpus size.

Test-only fault hook: the environment variable ``MOSAIC_TEST_FAULT``
(comma-separated ``abort:SUFFIX``, ``hang:SUFFIX``, ``delay:SECONDS``) makes a
worker call ``os.abort()`` or sleep forever on a log whose name ends with
SUFFIX, or sleep SECONDS before every log (to interrupt a run midway). It
exists to exercise the crash, timeout, node-loss and resume paths with real
processes; it does nothing unless set.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib
import itertools
import logging
import mmap
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, Pipe
from typing import Any

from mosaic.config import Config
from mosaic.corpus.reaper import GRACE_SECONDS as REAPER_GRACE_SECONDS
from mosaic.corpus.reaper import stop_process_group
from mosaic.errors import EngineError, Reason
from mosaic.limits import limit_memory

TEST_FAULT_ENV = "MOSAIC_TEST_FAULT"
LOOPBACK = "127.0.0.1"
POLL_SECONDS = 0.02  # how often the parent looks for finished jobs
RESULTS_PER_MESSAGE = 32  # a supervised child sends its results in groups of this many
CPUS_CHECK_SECONDS = 1.0  # how often the parent asks dispy for its nodes' CPUs (~0.5 ms a call)


@dataclass(frozen=True)
class Task:
    """What a batch does to each item: ``work(item, config) -> dict``, and
    ``give_up(item, reason, detail) -> dict``, the result of an item whose
    worker crashed or timed out. Module-level functions: they travel by name."""

    work: Callable[[Any, Config], dict]
    give_up: Callable[[Any, str, str], dict]


# ----- worker side -----


def run_batch(task: Task, items: list, config: Config, isolate: bool) -> list[dict]:
    """Apply `task` to each item; with `isolate`, in supervised child processes (module doc)."""
    if not isolate:
        return [_call(task, item, config) for item in items]
    results: dict[int, dict] = {}  # item index -> result
    while len(results) < len(items):
        _supervise(task, items, [i for i in range(len(items)) if i not in results], config, results)
    return [results[i] for i in range(len(items))]


def _call(task: Task, item, config: Config) -> dict:
    _test_fault(str(getattr(item, "name", item)))
    return task.work(item, config)


def _test_fault(name: str) -> None:
    """Test-only: crash or hang on chosen logs (see module doc)."""
    for rule in filter(None, os.environ.get(TEST_FAULT_ENV, "").split(",")):
        action, _, suffix = rule.partition(":")
        if action == "delay":
            time.sleep(float(suffix))
        elif suffix and name.endswith(suffix):
            if action == "abort":
                faulthandler.disable()  # an intended crash: no traceback dump on stderr
                os.abort()
            if action == "hang":
                while True:
                    time.sleep(3600)


class _Progress:
    """Which of its items a child is on, and since when (CLOCK_MONOTONIC, the same
    clock in every process): a page shared across the fork, written by the child
    before each item, read by the job to blame a crash or a timeout on the right log.

    Two 8-byte slots, each written by one store, the time first: a read between
    the two stores sees the former item with the newer time, which only puts a
    deadline later. (``struct.pack_into`` would not do: it zeroes the record
    before filling it, and a read in between saw a start time of 0, an item
    long overdue: 3 false timeouts in the 462,502-log year.)
    """

    def __init__(self) -> None:
        self._page = mmap.mmap(-1, mmap.PAGESIZE)  # anonymous, shared with the child
        self._slots = memoryview(self._page).cast("d")  # [position, started]
        self.mark(0)

    def mark(self, position: int) -> None:
        self._slots[1] = time.monotonic()
        self._slots[0] = position

    def read(self) -> tuple[int, float]:
        return int(self._slots[0]), self._slots[1]

    def close(self) -> None:
        self._slots.release()
        self._page.close()


def _supervise(task: Task, items: list, todo: list[int], config: Config, results: dict[int, dict]) -> None:
    """Fill `results` for items[todo] in order: all of them, or up to a culprit's eviction
    (the results a dying child had not sent yet are left for the next child)."""
    progress = _Progress()
    reader, writer = Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # child: work, report, never return into the caller's stack
        reader.close()
        try:
            limit_memory(config.worker_memory_bytes)
            _work_through(task, [items[i] for i in todo], config, writer, progress)
        finally:
            os._exit(0)
    writer.close()
    try:
        _collect(reader, pid, progress, task, items, todo, config.trace_timeout_seconds, results)
    finally:
        reader.close()
        progress.close()


def _work_through(task: Task, items: list, config: Config, writer: Connection, progress: _Progress) -> None:
    """The child's loop: mark each item, work, send the results in groups."""
    group = []
    for position, item in enumerate(items):
        progress.mark(position)
        group.append((item, _bounded_call(task, item, config)))
        if len(group) == RESULTS_PER_MESSAGE or position == len(items) - 1:
            _send(writer, task, group)
            group = []


def _collect(
    reader: Connection,
    pid: int,
    progress: _Progress,
    task: Task,
    items: list,
    todo: list[int],
    timeout: float,
    results: dict[int, dict],
) -> None:
    received = 0
    while received < len(todo):
        position, started = progress.read()
        if reader.poll(max(0.0, started + timeout - time.monotonic())):
            try:
                group = reader.recv()
            except EOFError:
                _, status = os.waitpid(pid, 0)
                position = progress.read()[0]
                if position >= received:  # else it died between logs: the next child goes on
                    culprit = todo[position]
                    results[culprit] = task.give_up(
                        items[culprit], Reason.WORKER_CRASH, _describe_exit(status)
                    )
                return
            for result in group:
                results[todo[received]] = result
                received += 1
        elif progress.read() == (position, started):  # still on the same log: too long
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            culprit = todo[position]
            results[culprit] = task.give_up(items[culprit], Reason.TIMEOUT, f"no result after {timeout:g} s")
            return
    os.waitpid(pid, 0)


MEMORY_BOUND = "needs more memory than a worker may use"


def _bounded_call(task: Task, item, config: Config) -> dict:
    """The task's result; past the memory bound anywhere (imports too): ``too_large``."""
    try:
        return _call(task, item, config)
    except MemoryError:
        return task.give_up(item, Reason.TOO_LARGE, MEMORY_BOUND)


def _send(writer: Connection, task: Task, group: list[tuple]) -> None:
    """Send a group of results; one too big to pickle within the memory bound is ``too_large``."""
    try:
        writer.send([result for _, result in group])
    except MemoryError:
        writer.send([_sendable(task, item, result) for item, result in group])


def _sendable(task: Task, item, result: dict) -> dict:
    try:
        pickle.dumps(result)
    except MemoryError:
        return task.give_up(item, Reason.TOO_LARGE, MEMORY_BOUND)
    return result


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"worker killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"worker exited with status {os.waitstatus_to_exitcode(status)}"


def _dispy_setup(modules):
    """Runs once per node process: the heavy imports every job then inherits."""
    global _mosaic_engine
    import mosaic.corpus.engine as _mosaic_engine

    _mosaic_engine.preload(modules)
    return 0


def _dispy_compute(task, items, config):
    """The dispy job: one batch (shipped to nodes as source, hence self-contained)."""
    return _mosaic_engine.run_batch(task, items, config, True)  # noqa: F821 (set by setup)


def preload(modules: Iterable[str]) -> None:
    """Import `modules` ahead of any job: a batch's forked child that imported
    them itself (scikit-learn: ~2 s) would lose them on exit, once per batch."""
    for module in modules:
        importlib.import_module(module)


# ----- parent side -----


class InProcessEngine:
    """`--workers 0`: the same batch function, in this process (debugging, unit tests).

    No isolation: a crashing log takes the process down, and no time limit applies.
    """

    def __init__(self, config: Config, preload: Iterable[str] = ()) -> None:
        self.config = config

    def __enter__(self) -> InProcessEngine:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def cpus(self) -> int:
        return 1

    def map(self, task: Task, batches: Iterable[list]) -> Iterator[list[dict]]:
        for batch in batches:
            yield run_batch(task, batch, self.config, isolate=False)


class DispyEngine:
    """Batches over dispy nodes: a private local node, or the user's daemons.

    `nodes` lists "HOST" or "HOST:PORT" (PORT = the node's ``-p``, default
    ``config.dispy_port``); None starts a local node with `workers` CPUs on
    the loopback address and stops it at the end, even on Ctrl-C. Each node
    imports `preload` once, ahead of any job.
    """

    def __init__(
        self, config: Config, nodes: list[str] | None = None, workers: int = 1, preload: Iterable[str] = ()
    ) -> None:
        self.config = config
        self.nodes = nodes
        self.workers = workers
        self.preload = tuple(preload)
        self._stack = contextlib.ExitStack()
        self._cluster = None

    def __enter__(self) -> DispyEngine:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def _start(self) -> None:
        import dispy

        workdir = tempfile.mkdtemp(prefix="mosaic-dispy-")
        self._stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        if self.nodes is None:
            port = _free_port_pair()
            self._stack.enter_context(_local_node(self.workers, port, workdir, self.config))
            host, node_addrs = LOOPBACK, [(LOOPBACK, port + 1)]
        else:
            self._stack.enter_context(_reaped(workdir, [], subprocess.DEVNULL))
            port = self.config.dispy_port
            node_addrs = [_node_address(node, port) for node in self.nodes]
            loopback = all(addr.startswith("127.") for addr, _ in node_addrs)
            host = LOOPBACK if loopback else None
        allocations = [
            dispy.NodeAllocate(addr, node_port, setup_args=(self.preload,)) for addr, node_port in node_addrs
        ]
        self._cluster = dispy.JobCluster(
            _dispy_compute,
            nodes=allocations,
            host=host,
            dispy_port=port,
            setup=_dispy_setup,
            depends=[],
            pulse_interval=self.config.node_pulse_seconds,
            reentrant=True,
            loglevel=logging.ERROR,
            recover_file=os.path.join(workdir, "recover"),
        )
        self._stack.callback(self._close_cluster)
        self._wait_for_nodes()

    def _close_cluster(self) -> None:
        """Cancel what is left and stop dispy's scheduler (it closes its recover file)."""
        self._cluster.close(timeout=0, terminate=True)
        self._cluster.shutdown()

    def _wait_for_nodes(self) -> None:
        deadline = time.monotonic() + self.config.node_start_timeout_seconds
        while self.cpus() == 0:
            if time.monotonic() > deadline:
                raise EngineError(
                    "no dispy node joined within "
                    f"{self.config.node_start_timeout_seconds:g} s "
                    f"(nodes: {self.nodes or 'local'})"
                )
            time.sleep(POLL_SECONDS * 10)

    def cpus(self) -> int:
        return sum(node.cpus for node in self._cluster.status().nodes)

    def map(self, task: Task, batches: Iterable[list]) -> Iterator[list[dict]]:
        """Results of each batch, in completion order."""
        import dispy

        batches = iter(batches)
        retries: deque[list] = deque()
        inflight: list = []  # (job, batch)
        exhausted = False
        last_alive = checked = time.monotonic()
        cpus = self.cpus()
        while True:
            if time.monotonic() - checked >= CPUS_CHECK_SECONDS:
                cpus, checked = self.cpus(), time.monotonic()
            if cpus:
                last_alive = time.monotonic()
            elif time.monotonic() - last_alive > self.config.node_lost_timeout_seconds:
                raise EngineError(
                    f"no live dispy node for {self.config.node_lost_timeout_seconds:g} s "
                    f"(nodes: {self.nodes or 'local'}); finished work is in the store: "
                    "rerun the same command to resume"
                )
            window = max(1, cpus) * self.config.jobs_in_flight_per_cpu
            while len(inflight) < window and (retries or not exhausted):
                batch = retries.popleft() if retries else next(batches, None)
                if batch is None:
                    exhausted = True
                    break
                job = self._cluster.submit(task, batch, self.config)
                if job is None:
                    raise EngineError("dispy refused a job")
                inflight.append((job, batch))
            if not inflight:
                return
            inflight[0][0].finish.wait(POLL_SECONDS)
            still = []
            for job, batch in inflight:
                if not job.finish.is_set():
                    still.append((job, batch))
                elif job.status == dispy.DispyJob.Finished and isinstance(job.result, list):
                    yield job.result
                elif len(batch) > 1:
                    half = len(batch) // 2
                    retries.extend([batch[:half], batch[half:]])
                else:
                    yield [task.give_up(batch[0], Reason.WORKER_CRASH, _job_failure(job))]
            inflight = still


def _job_failure(job) -> str:
    lines = (job.exception or "").strip().splitlines()
    return lines[-1] if lines else f"dispy job ended with status {job.status}"


def _node_address(node: str, default_port: int) -> tuple[str, int]:
    """ "HOST[:PORT]" -> (address, port the node listens on: dispynode's -p + 1)."""
    host, _, port = node.partition(":")
    return socket.gethostbyname(host), int(port or default_port) + 1


def _free_port_pair() -> int:
    """A port P with P and P + 1 free on the loopback (client and node ports)."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind((LOOPBACK, 0))
            port = probe.getsockname()[1]
        if all(_port_free(p) for p in (port, port + 1)):
            return port
    raise EngineError("no free port pair on the loopback")


def _port_free(port: int) -> bool:
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as probe:
            try:
                probe.bind((LOOPBACK, port))
            except OSError:
                return False
    return True


def dispynode_command(cpus: int, host: str, port: int, workdir: str) -> list[str]:
    """The command that starts dispynode (the script dispy installs beside python)."""
    script = os.path.join(os.path.dirname(sys.executable), "dispynode.py")
    return [
        sys.executable,
        script,
        "--cpus",
        str(cpus),
        "-i",
        host,
        "-p",
        str(port),
        "--daemon",
        "--clean",
        "--dest_path_prefix",
        workdir,
    ]


@contextlib.contextmanager
def _reaped(workdir: str, command: list[str], log) -> Iterator[subprocess.Popen]:
    """`command` (if any) under a reaper that stops it and removes `workdir` when
    this run ends, even by SIGKILL (see mosaic/corpus/reaper.py)."""
    reaper = subprocess.Popen(
        [sys.executable, "-m", "mosaic.corpus.reaper", workdir, str(os.getpid()), "--", *command],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield reaper
    finally:
        stop_process_group(reaper, grace_seconds=2 * REAPER_GRACE_SECONDS)


@contextlib.contextmanager
def _local_node(cpus: int, port: int, workdir: str, config: Config) -> Iterator[None]:
    """A private dispynode on the loopback, stopped (with its job processes) on exit."""
    with (
        open(os.path.join(workdir, "dispynode.log"), "wb") as log,
        _reaped(workdir, dispynode_command(cpus, LOOPBACK, port, os.path.join(workdir, "node")), log) as node,
    ):
        _wait_for_port(node, port + 1, config.node_start_timeout_seconds, log.name)
        yield


def _wait_for_port(node: subprocess.Popen, port: int, timeout: float, log: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if node.poll() is not None:
            with open(log, errors="replace") as fh:
                raise EngineError(f"dispynode exited ({node.returncode}): {fh.read()[-2000:]}")
        with socket.socket() as probe:
            if probe.connect_ex((LOOPBACK, port)) == 0:
                return
        if time.monotonic() > deadline:
            raise EngineError(f"dispynode did not listen on port {port} within {timeout:g} s")
        time.sleep(POLL_SECONDS * 5)


class LazyEngine:
    """Starts the real engine on the first batch: a run with nothing to do
    (a rerun of a finished output folder) starts no dispy node."""

    def __init__(self, start: Callable[[], Any]) -> None:
        self._start = start
        self._engine = None
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> LazyEngine:
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    @property
    def started(self) -> bool:
        return self._engine is not None

    def _started(self):
        if self._engine is None:
            self._engine = self._stack.enter_context(self._start())
        return self._engine

    def cpus(self) -> int:
        return self._started().cpus()

    def map(self, task: Task, batches: Iterable[list]) -> Iterator[list[dict]]:
        batches = iter(batches)
        first = next(batches, None)
        if first is not None:
            yield from self._started().map(task, itertools.chain([first], batches))


def make_engine(
    config: Config, workers: int, nodes: list[str] | None, preload: Iterable[str] = ()
) -> LazyEngine:
    """In-process for `workers == 0` without nodes, else dispy; started on first use."""
    if workers == 0 and not nodes:
        return LazyEngine(lambda: InProcessEngine(config))
    return LazyEngine(lambda: DispyEngine(config, nodes=nodes, workers=max(1, workers), preload=preload))
