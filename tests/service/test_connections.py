"""Clients that do not read their answers, pipeline without bound, or trickle an upload
while others crowd in, on a real `mosaic serve` over loopback.

Before these fixes a connection whose answers were stuck behind TCP back-pressure
counted as "being answered": never dropped, no deadline. 25 clients with a small
receive buffer, each pipelining 1,500 ``GET /healthz`` and reading none, left every
new ``/healthz`` a 503 for as long as they stayed. And "waited longest" counted from
the head of a request, so an upload still arriving lost its place to idle
connections opened after it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import httpx
import psutil
import pytest

from tests.service.conftest import MAX_PIPELINED, launch, make_log, stop_server, wait_ready
from tests.service.test_hostile import answer_of, connect, status_of

CAP = 8  # the capped server's connections
SMALL_BUFFER = 4096
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
OPENAPI = b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n"  # ~14 kB an answer
LAST = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
SETTLE_SECONDS = 20.0  # bound on waiting for what the server does by itself
BATCH = 10  # requests a write, fewer than the pipelining bound: each batch is answered whole
STALL_BATCH = 100  # requests a write to the capped server (no pipelining bound there)
STALLED_SECONDS = 0.5  # a client whose sends the server has not read this long: it is stalled


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    """A loopback server capped at CAP connections, whose deadlines never strike during a
    test (10 s for a request, 60 s for a client to read) and whose pipelining bound is
    never reached: only eviction frees a place."""
    started = launch(
        tmp_path_factory.mktemp("capped"),
        None,
        request_timeout=10.0,
        max_connections=CAP,
        write_timeout=60.0,
        max_pipelined=100_000,
    )
    try:
        yield wait_ready(started)
    finally:
        stop_server(started)


def pipeline(server, request: bytes, count: int) -> socket.socket:
    """A connection with small socket buffers that sends ``count`` requests at once (what
    the socket takes of them) and never reads an answer."""
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_BUFFER)  # blocks soon if not read
    sock.connect((host, int(port)))
    sock.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        sock.send(request * count)
    return sock


def server_ports(server) -> set[int]:
    """The client ports of the connections the server holds open."""
    port = int(server.url.rsplit(":", 1)[1])
    return {
        c.raddr.port
        for c in psutil.Process(server.process.pid).net_connections("tcp")
        if c.laddr.port == port and c.raddr
    }


def first_healthy(server) -> int:
    """Probe /healthz until it answers 200 (or SETTLE_SECONDS pass); the last status."""
    deadline = time.monotonic() + SETTLE_SECONDS
    status = 0
    while status != 200 and time.monotonic() < deadline:
        status = httpx.get(server.url + "/healthz", timeout=5).status_code
    return status


def test_clients_pipelining_and_never_reading_do_not_lock_healthz_out(capped):
    """The issue's attack, scaled to the cap. Before the fix a connection answering a request
    counted as busy, never dropped, and its answers soon stalled behind TCP back-pressure:
    every probe got 503 for as long as the attackers stayed. A connection answered a
    request sent before the previous answer was read gives way to a newcomer now, as does
    one whose answers do not drain."""
    attackers = [pipeline(capped, HEALTHZ, 1500) for _ in range(CAP + 5)]
    try:
        probes = [httpx.get(capped.url + "/healthz", timeout=5).status_code for _ in range(5)]
    finally:
        for sock in attackers:
            sock.close()
    assert probes == [200] * 5


def was_reset(sock: socket.socket) -> bool:
    """Whether the server ended this connection with a reset (read to the end to know)."""
    sock.setblocking(True)
    sock.settimeout(SETTLE_SECONDS)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        return True
    return False


def stall(attackers: list[socket.socket], request: bytes) -> None:
    """Send each attacker's requests until the server has read none of them for
    STALLED_SECONDS (it waits for its answers to drain), or SETTLE_SECONDS pass."""
    deadline = time.monotonic() + SETTLE_SECONDS
    refused_since: dict[socket.socket, float] = {}
    pending = set(attackers)
    while pending and time.monotonic() < deadline:
        for sock in list(pending):
            try:
                sock.send(request * STALL_BATCH)
                refused_since.pop(sock, None)
            except BlockingIOError:
                since = refused_since.setdefault(sock, time.monotonic())
                if time.monotonic() - since > STALLED_SECONDS:
                    pending.discard(sock)
            except OSError:  # reset: dropped
                pending.discard(sock)
        time.sleep(0.02)


def test_connections_stalled_on_their_answers_give_way_to_a_newcomer(capped):
    """Every place held by a client whose answers fill the kernel's buffers and then stall
    in the server: before the fix, a newcomer was refused (503) for as long as they
    stayed. Now the one stalled longest is aborted: its client reads nothing, so no
    answer could reach it."""
    attackers = [pipeline(capped, OPENAPI, BATCH) for _ in range(CAP)]
    try:
        stall(attackers, OPENAPI)
        probes = [httpx.get(capped.url + "/healthz", timeout=5).status_code for _ in range(3)]
        held = server_ports(capped)
        aborted = [was_reset(sock) for sock in attackers if sock.getsockname()[1] not in held]
    finally:
        for sock in attackers:
            sock.close()
    assert probes == [200] * 3
    assert aborted == [True]  # one place made, kept by the probes one after another


def test_a_client_reading_none_of_its_answers_is_cut_off(open_server):
    """open_server: batches of ~14 kB answers, none read. Once the kernel's buffers are full
    the server's writes stall; after 1 s without a byte drained the connection is aborted
    (before the fix: held for as long as the client wished)."""
    attacker = pipeline(open_server, OPENAPI, BATCH)
    deadline = time.monotonic() + SETTLE_SECONDS
    cut_off = False
    try:
        while not cut_off and time.monotonic() < deadline:
            try:
                attacker.send(OPENAPI * BATCH)
            except BlockingIOError:
                pass  # the server reads no more: it is stalled on its answers
            except OSError:
                cut_off = True
            time.sleep(0.05)
    finally:
        attacker.close()
    assert cut_off


def exchange(server, request: bytes) -> list[bytes]:
    """The answers (status line onward) to ``request`` sent in one write, until the close."""
    with connect(server) as sock:
        sock.sendall(request)
        return [b"HTTP/1.1 " + part for part in answer_of(sock).split(b"HTTP/1.1 ")[1:]]


@pytest.mark.parametrize(
    "queued, statuses",
    [(MAX_PIPELINED, [200] * (MAX_PIPELINED + 1)), (MAX_PIPELINED + 1, [200] * (MAX_PIPELINED + 1) + [429])],
    ids=["at the bound", "one past"],
)
def test_pipelined_requests_past_the_bound_get_429_and_the_connection_closes(open_server, queued, statuses):
    """``queued`` requests arrive behind the first, the last asking to close: up to
    MAX_PIPELINED are answered; one more gets 429 instead of its answer."""
    answers = exchange(open_server, HEALTHZ * queued + LAST)
    assert [status_of(answer) for answer in answers] == statuses
    if statuses[-1] == 429:
        assert b'"error":"too_many_requests"' in answers[-1].replace(b" ", b"")


UPLOAD_SECONDS = 3.0
UPLOAD_CHUNKS = 150
IDLE_PER_SECOND = 50  # 150 idle connections during the upload: many times the cap


def test_an_upload_in_progress_is_never_dropped_for_idle_newcomers(capped):
    """Item 4: a body arriving slowly but steadily, while idle connections keep opening.
    Before the fix "waited longest" counted from the upload's head, so it was dropped
    (503) once CAP idle connections had opened after it."""
    log = make_log(job_id=36004)
    head = b"POST /v1/categorize HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(log)
    step = -(-len(log) // UPLOAD_CHUNKS)
    stop = threading.Event()
    idle: list[socket.socket] = []

    def crowd() -> None:
        while not stop.is_set():
            idle.append(connect(capped))
            time.sleep(1 / IDLE_PER_SECOND)

    crowder = threading.Thread(target=crowd)
    try:
        with connect(capped) as upload:
            upload.sendall(head)
            crowder.start()
            with contextlib.suppress(OSError):  # dropped: the answer tells
                for offset in range(0, len(log), step):
                    upload.sendall(log[offset : offset + step])
                    time.sleep(UPLOAD_SECONDS / UPLOAD_CHUNKS)
            stop.set()
            crowder.join()
            upload.settimeout(30)
            answer = upload.recv(65536)
    finally:
        stop.set()
        if crowder.is_alive():
            crowder.join()
        for sock in idle:
            sock.close()
    assert len(idle) > CAP
    assert status_of(answer) == 200, answer[:300]
