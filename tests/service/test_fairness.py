"""Fair to every client (issue 45, items 1 and 2), on a real `mosaic serve` over loopback.

Attackers connect from 127.0.0.2 (Linux routes all of 127/8 to loopback), probes
from 127.0.0.1, so the server sees two source addresses. Every attack runs in a
thread bounded by ATTACK_SECONDS and stops by itself.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.service.conftest import TOKEN, launch, make_log, stop_server, wait_ready
from tests.service.test_hostile import answer_of, connect, status_of

CAP = 40  # the cap
IDLE_ATTACKERS = 80  # the count: twice the cap
ATTACKER = "127.0.0.2"
ATTACK_SECONDS = 60.0  # no attack outlives this, whatever the test does
PROBES = 13
LINK_DELAY = 0.05  # a probe's request arrives this long after its connection (a distant client)


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    """A server capped at CAP connections (token required), deadlines that never strike
    while a test runs (10 s for a request)."""
    started = launch(tmp_path_factory.mktemp("fair"), TOKEN, request_timeout=10.0, max_connections=CAP)
    try:
        yield wait_ready(started)
    finally:
        stop_server(started)


def attacker_socket(server) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.bind((ATTACKER, 0))
    sock.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        sock.connect((host, int(port)))
    return sock


class Reconnecting:
    """``count`` connections from ATTACKER that send ``opening`` (nothing by default) and
    reconnect as soon as the server answers or drops them; ``reconnects`` counts them."""

    def __init__(self, server, count: int, opening: bytes = b"") -> None:
        self.server, self.opening = server, opening
        self.selector = selectors.DefaultSelector()
        self.stop = threading.Event()
        self.reconnects = 0
        for _ in range(count):
            self._open()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self) -> None:
        sock = attacker_socket(self.server)
        self.selector.register(sock, selectors.EVENT_WRITE if self.opening else selectors.EVENT_READ)

    def _run(self) -> None:
        deadline = time.monotonic() + ATTACK_SECONDS
        while not self.stop.is_set() and time.monotonic() < deadline:
            for key, events in self.selector.select(timeout=0.1):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if events & selectors.EVENT_WRITE:  # connected: say the opening, then wait
                    with contextlib.suppress(OSError):
                        sock.send(self.opening)
                    self.selector.modify(sock, selectors.EVENT_READ)
                    continue
                self.selector.unregister(sock)
                sock.close()  # answered or dropped: at once, again
                self.reconnects += 1
                self._open()

    def __enter__(self) -> Reconnecting:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self.selector.close()


def probe(server, path: str = "/healthz") -> int:
    """One probe from 127.0.0.1 on a new connection; 0 when the connection fails."""
    try:
        return httpx.get(server.url + path, timeout=10).status_code
    except httpx.TransportError:
        return 0


def distant_probe(server) -> int:
    """GET /healthz from 127.0.0.1 whose request arrives LINK_DELAY after the connection."""
    with connect(server) as sock:
        time.sleep(LINK_DELAY)
        with contextlib.suppress(OSError):  # dropped meanwhile: the answer tells
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return status_of(answer_of(sock))


def test_idle_connections_that_reconnect_at_once_lock_no_one_out(capped):
    """Item 1. Before the fix a newcomer evicted the connection waiting longest whatever it
    had sent, so a client whose request the server had not yet read was evicted by the
    reconnecting crowd (the issue: 9-12 of 13 probes got 503; here every distant probe).
    Now a connection that has sent nothing displaces only another such one, from the
    address holding the most connections."""
    with Reconnecting(capped, IDLE_ATTACKERS) as crowd:
        time.sleep(0.5)  # the crowd fills the cap and churns
        probes = [probe(capped) for _ in range(PROBES)]
        distant = [distant_probe(capped) for _ in range(PROBES)]
        churned = crowd.reconnects
    assert churned > IDLE_ATTACKERS  # the attack ran: connections were dropped and came back
    assert probes == [200] * PROBES
    assert distant == [200] * PROBES


def test_a_newcomer_that_speaks_displaces_the_stalled_head_of_the_heaviest_address(capped):
    """Every place held by a connection that sent part of a head and stalls: a newcomer
    (which has sent nothing on arrival) is admitted one over the cap, and when its request
    arrives the oldest stalled head of the address holding the most goes (503)."""
    stalled = []
    try:
        for _ in range(CAP):
            sock = attacker_socket(capped)
            sock.setblocking(True)
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            stalled.append(sock)
            time.sleep(0.005)  # in order of progress
        statuses = [probe(capped) for _ in range(3)]
        stalled[0].settimeout(10)
        first = status_of(answer_of(stalled[0]))
    finally:
        for sock in stalled:
            sock.close()
    assert statuses == [200] * 3
    assert first == 503


def test_a_crowd_from_one_address_never_displaces_the_lone_client_of_another(capped):
    """At the cap, every connection silent: the newcomer from the address holding the most
    displaces that address's oldest, never the lone silent client of another address
    (before the fix the oldest connection went, whoever held it)."""
    with contextlib.ExitStack() as stack:
        lone = stack.enter_context(connect(capped))  # 127.0.0.1, silent, the oldest
        time.sleep(0.1)
        crowd = [stack.enter_context(attacker_socket(capped)) for _ in range(CAP)]  # one too many
        crowd[0].setblocking(True)
        crowd[0].settimeout(10)
        displaced = answer_of(crowd[0])
        lone.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert status_of(answer_of(lone)) == 200
    assert status_of(displaced) == 503
    assert b"127.0.0.2 holds the most" in displaced
