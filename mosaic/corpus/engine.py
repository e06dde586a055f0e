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
  validation CPU in wake-ups on both sides). A child that dies gives up the
  log it was on (:attr:`Failure.CRASH`: the pipeline evicts it as
  ``worker_crash``); one that spends more than ``Limits.item_seconds`` on a
  log is killed and the log given up (``timeout``). A new child carries on
  with the batch-mates, redoing those whose results were still in the dead
  child's unsent group.
* A job that fails anyway (its own process killed) is bisected: both halves
  go out again, and a single log that still fails is given up as a crash.
* A node that dies stops its pulses; dispy (``reentrant=True``) sends its
  unfinished jobs to the other nodes, so no log is lost. Its processes end with
  it, even when it was SIGKILLed (:func:`end_with_node`).
* The nodes reach the run at ``client_address``, by default the address of the
  interface that routes to the first node off the loopback (:func:`client_address`):
  dispy's own choice, the host name's address, is loopback on many machines.
* dispy asks the named nodes to join once, when the cluster starts: a node not
  listening yet (started a moment after the run, or restarted) would never
  join (until 2026-11-25 a run whose only joined node then died stopped with
  "no live dispy node"). So named nodes that have not joined are asked again
  every ``ping_seconds`` (dispy's ``ping_interval``; joined nodes are not pinged).
* At most ``jobs_in_flight_per_cpu`` jobs per node CPU are queued, so the
  parent holds a bounded number of batches whatever the corpus size.
* Every node takes a secret (dispy hashes it into each message; a node
  without one runs whatever any client sends it): the local node gets a fresh
  one per run, cluster nodes the one in ``node_secret_file`` (mosaic/corpus/node.py).

The engine gets its settings as plain values (:class:`Settings`) and passes
each work call the caller's context unread. Tests inject faults by wrapping a
task's ``work``; nothing here reads the environment.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import logging
import mmap
import multiprocessing
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
from enum import StrEnum
from multiprocessing.connection import Connection, Pipe
from typing import IO, Any

from mosaic.corpus.node import dispynode_command, write_secret
from mosaic.corpus.reaper import GRACE_SECONDS as REAPER_GRACE_SECONDS
from mosaic.corpus.reaper import die_with, stop_process_group
from mosaic.errors import MEMORY_BOUND, EngineError
from mosaic.limits import limit_memory

LOOPBACK = "127.0.0.1"
POLL_SECONDS = 0.02  # how often the parent looks for finished jobs
RESULTS_PER_MESSAGE = 32  # a supervised child sends its results in groups of this many
CPUS_CHECK_SECONDS = 1.0  # how often the parent asks dispy for its nodes' CPUs (~0.5 ms a call)
NODE_PROBE_SECONDS = 3.0  # a node that did not join: how long a connection to it may take to say why


Result = dict[str, Any]


class Failure(StrEnum):
    """Why a batch gave up on an item; the task's ``give_up`` names it in its own words."""

    CRASH = "crash"  # the process working on it died
    TIMEOUT = "timeout"  # it took longer than Limits.item_seconds
    MEMORY = "memory"  # its work or its result needed more than Limits.memory_bytes


@dataclass(frozen=True)
class Task:
    """What a batch does to each item: ``work(item, context) -> result`` (``context``: the
    value the engine was given, passed on unread) and ``give_up(item, failure, detail) ->
    result`` for an item the batch gave up on. Module-level callables: they travel by name."""

    work: Callable[[Any, Any], Result]
    give_up: Callable[[Any, Failure, str], Result]


@dataclass(frozen=True)
class Limits:
    """What a supervised batch allows each item: time, and address space a worker may add."""

    item_seconds: float
    memory_bytes: int


@dataclass(frozen=True)
class Settings:
    """The engine's settings, as plain values (the caller maps its configuration to them).

    ``secret`` is the cluster nodes' secret (``--nodes``); a local node gets a fresh one.
    """

    limits: Limits
    pulse_seconds: float  # a node silent for 5 pulses is dead
    ping_seconds: float  # named nodes that have not joined are asked again this often
    start_timeout_seconds: float  # wait this long for a first node
    lost_timeout_seconds: float  # no live node this long: EngineError
    jobs_per_cpu: int  # jobs queued per node CPU
    port: int  # dispynode's -p for nodes named without a port
    secret: str | None = None
    client_address: str = ""  # where the nodes reach this run ("": see client_address)


# ----- worker side -----


def run_batch(task: Task, items: list[Any], context: Any, limits: Limits, isolate: bool) -> list[Result]:
    """Apply `task` to each item; with `isolate`, in supervised child processes (module doc)."""
    if not isolate:
        return [task.work(item, context) for item in items]
    results: dict[int, Result] = {}  # item index -> result
    while len(results) < len(items):
        todo = [i for i in range(len(items)) if i not in results]
        _supervise(task, items, todo, context, limits, results)
    return [results[i] for i in range(len(items))]


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


def _supervise(
    task: Task, items: list[Any], todo: list[int], context: Any, limits: Limits, results: dict[int, Result]
) -> None:
    """Fill `results` for items[todo] in order: all of them, or up to a culprit's eviction
    (the results a dying child had not sent yet are left for the next child)."""
    progress = _Progress()
    reader, writer = Pipe(duplex=False)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # child: work, report, never return into the caller's stack
        reader.close()
        try:
            die_with(parent)  # a job process killed (its node killed, dispy's cancel) takes it along
            limit_memory(limits.memory_bytes)
            _work_through(task, [items[i] for i in todo], context, writer, progress)
        finally:
            os._exit(0)
    writer.close()
    try:
        _collect(reader, pid, progress, task, items, todo, limits.item_seconds, results)
    finally:
        reader.close()
        progress.close()


def _work_through(
    task: Task, items: list[Any], context: Any, writer: Connection, progress: _Progress
) -> None:
    """The child's loop: mark each item, work, send the results in groups."""
    group: list[tuple[Any, Result]] = []
    for position, item in enumerate(items):
        progress.mark(position)
        group.append((item, _bounded_call(task, item, context)))
        if len(group) == RESULTS_PER_MESSAGE or position == len(items) - 1:
            _send(writer, task, group)
            group = []


def _collect(
    reader: Connection,
    pid: int,
    progress: _Progress,
    task: Task,
    items: list[Any],
    todo: list[int],
    timeout: float,
    results: dict[int, Result],
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
                    results[culprit] = task.give_up(items[culprit], Failure.CRASH, _describe_exit(status))
                return
            for result in group:
                results[todo[received]] = result
                received += 1
        elif progress.read() == (position, started):  # still on the same log: too long
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            culprit = todo[position]
            results[culprit] = task.give_up(items[culprit], Failure.TIMEOUT, f"no result after {timeout:g} s")
            return
    os.waitpid(pid, 0)


def _bounded_call(task: Task, item: Any, context: Any) -> Result:
    """The task's result; past the memory bound anywhere (imports too): given up."""
    try:
        return task.work(item, context)
    except MemoryError:
        return task.give_up(item, Failure.MEMORY, MEMORY_BOUND)


def _send(writer: Connection, task: Task, group: list[tuple[Any, Result]]) -> None:
    """Send a group of results; one too big to pickle within the memory bound is given up."""
    try:
        writer.send([result for _, result in group])
    except MemoryError:
        writer.send([_sendable(task, item, result) for item, result in group])


def _sendable(task: Task, item: Any, result: Result) -> Result:
    try:
        pickle.dumps(result)
    except MemoryError:
        return task.give_up(item, Failure.MEMORY, MEMORY_BOUND)
    return result


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"worker killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"worker exited with status {os.waitstatus_to_exitcode(status)}"


# The two functions dispy runs on a node are shipped as source and executed there
# without this module's `from __future__ import annotations`: their types are in
# comments, which the node does not evaluate.
_mosaic_engine: Any  # this module, as the node's setup imported it


def _dispy_setup(modules):  # type: (tuple[str, ...]) -> int
    """Runs once per node process: the heavy imports every job then inherits."""
    global _mosaic_engine
    import mosaic.corpus.engine as _mosaic_engine

    _mosaic_engine.end_with_node()
    _mosaic_engine.preload(modules)
    return 0


def _dispy_compute(task, items, context, limits):  # type: (Task, list[Any], Any, Limits) -> list[Result]
    """The dispy job: one batch (shipped to nodes as source, hence self-contained)."""
    _mosaic_engine.end_with_node()
    return _mosaic_engine.run_batch(task, items, context, limits, True)  # type: ignore[no-any-return]


def end_with_node() -> None:
    """This process (dispynode's setup process, or a job process the setup process
    started) is SIGKILLed when the process that started it ends. A dispynode killed
    with SIGKILL (OOM killer, ``kill -9``, a lost allocation) left them running, jobs
    still computing a minute later for a client that had moved their batches
    elsewhere: now the setup process follows the node, each job its setup process,
    and each job's supervised child its job (:func:`_supervise`)."""
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None:
        die_with(parent.pid)


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

    def __init__(self, settings: Settings, context: Any) -> None:
        self.settings = settings
        self.context = context

    def __enter__(self) -> InProcessEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def cpus(self) -> int:
        return 1

    def absent(self) -> list[str]:
        return []

    def map(self, task: Task, batches: Iterable[list[Any]]) -> Iterator[list[Result]]:
        for batch in batches:
            yield run_batch(task, batch, self.context, self.settings.limits, isolate=False)


class DispyEngine:
    """Batches over dispy nodes: a private local node, or the user's daemons.

    `nodes` lists "HOST" or "HOST:PORT" (PORT = the node's ``-p``, default
    ``settings.port``), which take ``settings.secret``; None starts a local
    node with `workers` CPUs on the loopback address, with a fresh secret, and
    stops it at the end, even on Ctrl-C. Each node imports `preload` once,
    ahead of any job; every work call gets `context`.
    """

    def __init__(
        self,
        settings: Settings,
        context: Any,
        nodes: list[str] | None = None,
        workers: int = 1,
        preload: Iterable[str] = (),
    ) -> None:
        self.settings = settings
        self.context = context
        self.nodes = nodes
        self.workers = workers
        self.preload = tuple(preload)
        self._stack = contextlib.ExitStack()
        self._cluster: Any = None  # dispy.JobCluster (dispy ships no type hints)
        self._node_addrs: list[tuple[str, int]] = []
        self._client = ""

    def __enter__(self) -> DispyEngine:
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _start(self) -> None:
        import dispy

        workdir = tempfile.mkdtemp(prefix="mosaic-dispy-")  # mode 0700: the local secret lives here
        self._stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        host: str | None
        if self.nodes is None:
            timeout = self.settings.start_timeout_seconds
            port, secret = self._stack.enter_context(local_node(self.workers, workdir, timeout))
            host, node_addrs = LOOPBACK, [(LOOPBACK, port + 1)]
        else:
            if self.settings.secret is None:
                raise EngineError("dispy nodes need a secret (node_secret_file)")
            secret = self.settings.secret
            self._stack.enter_context(_reaped(workdir, [], subprocess.DEVNULL))
            port = self.settings.port
            node_addrs = node_addresses(self.nodes, port)
            host = client_address(self.settings.client_address, node_addrs)
            if not _port_free(port, host if _loopback(host) else ""):  # dispy would retry its bind for ever
                raise EngineError(
                    f"port {port}, where the nodes answer this run, is in use (another mosaic run or "
                    "dispy client on this machine?): give the nodes and the run a free one "
                    "(start-node.sh PORT, --nodes HOST:PORT and dispy_port)"
                )
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
            pulse_interval=self.settings.pulse_seconds,
            ping_interval=self.settings.ping_seconds,
            reentrant=True,
            secret=secret,
            loglevel=logging.ERROR,
            recover_file=os.path.join(workdir, "recover"),
        )
        self._stack.callback(self._close_cluster)
        self._node_addrs, self._client = node_addrs, f"{host}:{port}"
        self._wait_for_nodes()

    def _close_cluster(self) -> None:
        """Cancel what is left and stop dispy's scheduler (it closes its recover file)."""
        self._cluster.close(timeout=0, terminate=True)
        self._cluster.shutdown()

    def _wait_for_nodes(self) -> None:
        timeout = self.settings.start_timeout_seconds
        deadline = time.monotonic() + timeout
        while self.cpus() == 0:
            if time.monotonic() > deadline:
                if self.nodes is None:
                    raise EngineError(f"the local dispy node did not join within {timeout:g} s")
                reasons = [
                    f"{node}: {why_not_joined(address, self._client)}"
                    for node, address in zip(self.nodes, self._node_addrs, strict=True)
                ]
                raise EngineError(f"no dispy node joined within {timeout:g} s; " + "; ".join(reasons))
            time.sleep(POLL_SECONDS * 10)

    def cpus(self) -> int:
        return sum(node.cpus for node in self._cluster.status().nodes)

    def absent(self) -> list[str]:
        """Each named node that has not joined, with what a connection to it finds: the run
        goes on with the others (and takes it if it joins later), so this is said at its end
        rather than waited for. Nothing when as many nodes joined as were named (a node may
        report another of its addresses)."""
        if self.nodes is None:
            return []
        joined = {node.ip_addr for node in self._cluster.status().nodes}
        if len(joined) >= len(self.nodes):
            return []
        return [
            f"{name}: {why_not_joined(address, self._client)}"
            for name, address in zip(self.nodes, self._node_addrs, strict=True)
            if address[0] not in joined
        ]

    def map(self, task: Task, batches: Iterable[list[Any]]) -> Iterator[list[Result]]:
        """Results of each batch, in completion order."""
        import dispy

        pending = iter(batches)
        retries: deque[list[Any]] = deque()
        inflight: list[tuple[Any, list[Any]]] = []  # (dispy job, batch)
        exhausted = False
        last_alive = checked = time.monotonic()
        cpus = self.cpus()
        lost_timeout = self.settings.lost_timeout_seconds
        while True:
            if time.monotonic() - checked >= CPUS_CHECK_SECONDS:
                cpus, checked = self.cpus(), time.monotonic()
            if cpus:
                last_alive = time.monotonic()
            elif time.monotonic() - last_alive > lost_timeout:
                raise EngineError(
                    f"no live dispy node for {lost_timeout:g} s "
                    f"(nodes: {self.nodes or 'local'}); finished work is in the store: "
                    "rerun the same command to resume"
                )
            window = max(1, cpus) * self.settings.jobs_per_cpu
            while len(inflight) < window and (retries or not exhausted):
                batch = retries.popleft() if retries else next(pending, None)
                if batch is None:
                    exhausted = True
                    break
                job = self._cluster.submit(task, batch, self.context, self.settings.limits)
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
                    yield [task.give_up(batch[0], Failure.CRASH, _job_failure(job))]
            inflight = still


def _job_failure(job: Any) -> str:
    lines = (job.exception or "").strip().splitlines()
    return str(lines[-1]) if lines else f"dispy job ended with status {job.status}"


def node_addresses(nodes: list[str], default_port: int) -> list[tuple[str, int]]:
    """Each "HOST[:PORT]" of `nodes` as (address, port the node listens on: dispynode's -p
    + 1). EngineError naming the entry for a bad port or a name that does not resolve, and
    naming both entries when two are at one address: dispy keys its nodes by address alone,
    so of two nodes at one address it used one, or none (a run waited and stopped)."""
    found: dict[str, str] = {}  # address -> the first entry there
    addresses = []
    for node in nodes:
        host, _, given = node.partition(":")
        port = given or str(default_port)
        if not port.isdigit() or not 0 < int(port) < 65535:
            raise EngineError(f"node {node}: PORT must be a number from 1 to 65534 (start-node.sh's PORT)")
        address = _resolve(host, f"node {node}")
        if address in found:
            raise EngineError(
                f"nodes {found[address]} and {node} are both at {address}: dispy tells nodes apart by "
                "address alone and would use one of them at most. Name one node per address: one "
                "dispynode per machine (it uses all the CPUs), or give each node of one machine an "
                "address of its own (start-node.sh 127.0.0.2 ... on the loopback, as mosaic-run.sbatch does)"
            )
        found[address] = node
        addresses.append((address, int(port) + 1))
    return addresses


def why_not_joined(node: tuple[str, int], client: str) -> str:
    """What a TCP connection to a named node that did not join tells of why."""
    address, port = node
    try:
        with socket.create_connection(node, timeout=NODE_PROBE_SECONDS):
            pass
    except ConnectionRefusedError:
        return (
            f"nothing listens at {address}:{port} (node not started, or started with another PORT: "
            "HOST:PORT names start-node.sh's PORT, the node listens on PORT+1)"
        )
    except OSError as error:
        return f"{address}:{port} cannot be reached ({error.strerror or error}): machine down, or a firewall"
    return (
        f"a node answers at {address}:{port} but did not join: it has another secret "
        f"(node_secret_file), or cannot reach this run at {client} (TCP and UDP: a firewall, "
        "or set --client-address)"
    )


def _resolve(host: str, what: str) -> str:
    try:
        return socket.gethostbyname(host)
    except OSError as error:
        raise EngineError(f"{what}: cannot resolve {host!r} ({error.strerror or error})") from None


def _loopback(address: str) -> bool:
    return address.startswith("127.")


def client_address(configured: str, nodes: list[tuple[str, int]]) -> str:
    """The address of this machine the `nodes` (address, port) reach the run at.

    `configured` (``client_address``: an address or host name of this machine), else
    the address this machine sends from to the first node off the loopback (the first
    node when all are on it): the interface that routes there (a UDP ``connect`` sends
    no packet). Left to choose, dispy takes the address of the host name, and a name
    that resolves to loopback (Debian's ``127.0.1.1``, many containers) stopped the run
    with a traceback ("No valid IP address found"). EngineError naming the setting when
    none fits: not an address of this machine, no route, or a loopback address that a
    node off the loopback cannot reach.
    """
    fix = (
        "set client_address (mosaic run --client-address ADDR) to an address of this machine the nodes reach"
    )
    first = next((node for node in nodes if not _loopback(node[0])), nodes[0])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            if configured:
                address = _resolve(configured, "client_address")
                probe.bind((address, 0))
            else:
                probe.connect(first)
                address = probe.getsockname()[0]
        except OSError as error:
            said = (
                f"client_address {configured} is not an address of this machine"
                if configured
                else f"no route from this machine to the node {first[0]}"
            )
            raise EngineError(f"{said} ({error.strerror or error}): {fix}") from None
    if _loopback(address) and not all(_loopback(node) for node, _ in nodes):
        remote = ", ".join(node for node, _ in nodes if not _loopback(node))
        raise EngineError(
            f"the nodes at {remote} cannot reach this run at {address}, a loopback address: {fix}"
        )
    return address


def _free_port_pair() -> int:
    """A port P with P and P + 1 free on the loopback (client and node ports)."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind((LOOPBACK, 0))
            port: int = probe.getsockname()[1]
        if all(_port_free(p) for p in (port, port + 1)):
            return port
    raise EngineError("no free port pair on the loopback")


def _port_free(port: int, host: str = LOOPBACK) -> bool:
    """Whether dispy could bind `port` on `host`, TCP (with SO_REUSEADDR, as dispy) and UDP."""
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as probe:
            if kind == socket.SOCK_STREAM:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError:
                return False
    return True


@contextlib.contextmanager
def _reaped(workdir: str, command: list[str], log: IO[bytes] | int) -> Iterator[subprocess.Popen[bytes]]:
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
def local_node(cpus: int, workdir: str, timeout: float) -> Iterator[tuple[int, str]]:
    """A private dispynode on the loopback with a fresh secret (kept in WORKDIR/node-secret,
    WORKDIR being private): yields (client port P, secret), the node listening on P + 1.
    Stopped, with its job processes, and WORKDIR removed on exit (or when this process dies)."""
    port = _free_port_pair()
    secret_file = os.path.join(workdir, "node-secret")
    secret = write_secret(secret_file)
    command = dispynode_command(cpus, LOOPBACK, port, os.path.join(workdir, "node"), secret_file)
    with (
        open(os.path.join(workdir, "dispynode.log"), "wb") as log,
        _reaped(workdir, command, log) as node,
    ):
        _wait_for_port(node, port + 1, timeout, log.name)
        yield port, secret


def _wait_for_port(node: subprocess.Popen[bytes], port: int, timeout: float, log: str) -> None:
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


Engine = InProcessEngine | DispyEngine


class LazyEngine:
    """Starts the real engine on the first batch: a run with nothing to do
    (a rerun of a finished output folder) starts no dispy node."""

    def __init__(self, start: Callable[[], Engine]) -> None:
        self._start = start
        self._engine: Engine | None = None
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> LazyEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @property
    def started(self) -> bool:
        return self._engine is not None

    def _started(self) -> Engine:
        if self._engine is None:
            engine = self._start()
            self._stack.enter_context(engine)
            self._engine = engine
        return self._engine

    def cpus(self) -> int:
        return self._started().cpus()

    def absent(self) -> list[str]:
        return self._engine.absent() if self._engine is not None else []

    def map(self, task: Task, batches: Iterable[list[Any]]) -> Iterator[list[Result]]:
        pending = iter(batches)
        first = next(pending, None)
        if first is not None:
            yield from self._started().map(task, itertools.chain([first], pending))


def make_engine(
    settings: Settings, context: Any, workers: int, nodes: list[str] | None, preload: Iterable[str] = ()
) -> LazyEngine:
    """In-process for `workers == 0` without nodes, else dispy; started on first use."""
    if workers == 0 and not nodes:
        return LazyEngine(lambda: InProcessEngine(settings, context))
    return LazyEngine(
        lambda: DispyEngine(settings, context, nodes=nodes, workers=max(1, workers), preload=preload)
    )
